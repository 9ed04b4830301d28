"""The colours of every picture: the table, panels, text, card faces and one colour per gem.

Gem colours are looked up by the gem's name in the game's own words (``Pink``, ``Sapphire``,
``Ice Shard``); a name from a custom manifest that is not listed gets a fixed colour derived
from the name, so a picture never depends on anything but the state.
"""
from __future__ import annotations

import colorsys
import zlib

RGB = tuple[int, int, int]

TABLE: RGB = (24, 71, 52)          # the felt
PANEL: RGB = (33, 92, 69)          # a player's area
PANEL_VIEWER: RGB = (46, 112, 86)  # the viewer's own area
PANEL_EDGE: RGB = (14, 45, 33)
TEXT: RGB = (240, 240, 232)
MUTED: RGB = (170, 196, 182)
HIGHLIGHT: RGB = (255, 214, 90)    # whose decision it is, the current column of a chart
ALERT: RGB = (235, 110, 90)        # cancelled, broken, negative
CARD_FACE: RGB = (250, 246, 234)
CARD_INK: RGB = (35, 35, 40)
CARD_EDGE: RGB = (60, 60, 70)
CARD_BACK: RGB = (52, 64, 128)
CARD_BACK_EDGE: RGB = (200, 200, 230)
LEVERAGED: RGB = (182, 176, 164)   # a GEM card or coin turned to its LEVERAGED side
COIN: RGB = (232, 190, 60)
COIN_EDGE: RGB = (140, 105, 20)
COMPLETE: RGB = (255, 214, 90)

#: gem colours by name (MegaGem, GEM and Gem Jam names)
GEMS: dict[str, RGB] = {
    # MegaGem
    "Blue": (52, 120, 230),
    "Green": (48, 176, 80),
    "Pink": (236, 110, 180),
    "Purple": (140, 80, 200),
    "Yellow": (240, 206, 50),
    # GEM and Gem Jam
    "Sapphire": (40, 90, 210),
    "Ruby": (210, 30, 60),
    "Emerald": (30, 160, 90),
    "Amethyst": (150, 90, 210),
    "Topaz": (240, 160, 40),
    "Diamond": (200, 235, 245),
    "Starfire": (250, 110, 30),
    "Dawnslight": (250, 190, 200),
    "Sunstone": (235, 200, 60),
    "Ice Shard": (150, 210, 240),
    "Quartz": (225, 225, 215),
    "Moonstone": (170, 180, 210),
    "Onyx": (50, 50, 58),
}


def gem_colour(name: str) -> RGB:
    """The colour of the gem called ``name`` (a fixed colour from the name when it is not listed)."""
    colour = GEMS.get(name)
    if colour is not None:
        return colour
    hue = (zlib.crc32(name.encode("utf-8")) % 360) / 360.0
    r, g, b = colorsys.hsv_to_rgb(hue, 0.6, 0.85)
    return (int(r * 255), int(g * 255), int(b * 255))


def ink_on(colour: RGB) -> RGB:
    """Dark or light text, whichever reads on ``colour``."""
    r, g, b = colour
    return CARD_INK if 0.299 * r + 0.587 * g + 0.114 * b > 150 else TEXT


def dim(colour: RGB, factor: float = 0.55) -> RGB:
    """``colour`` darkened (a gem on a face-down or LEVERAGED card)."""
    return tuple(int(c * factor) for c in colour)  # type: ignore[return-value]


__all__ = ["GEMS", "RGB", "dim", "gem_colour", "ink_on"]
