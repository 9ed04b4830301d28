"""The picture of a game without a painter of its own: its text render, in monospace, on a canvas.

The title bar names the game and the view; under it, the text of the game's render for that
viewer (its entry's ``text_renderer``), one character per cell of a fixed grid. The grid is fixed
per game object (so per player count and options): as wide as the longest line and twice as tall
as the renders of a fresh game (seed 0, every view), at least 60 x 20 cells; a longer line is cut
with ``~``, and lines below the grid are counted in its last line. So every frame of a game has one
size (Gymnasium's RecordVideo needs that) and shows the information of the text render, never more.
"""
from __future__ import annotations

import weakref
from functools import cache, lru_cache

import numpy as np
from PIL import Image, ImageDraw

from gemenvs.pictures import palette
from gemenvs.pictures.canvas import Canvas, ScoreTable, font

HEADER = 34
MARGIN = 10
#: the text's font size in pixels
TEXT_SIZE = 13
#: the fewest and most columns and rows of the text grid
MIN_COLUMNS, MAX_COLUMNS = 60, 160
MIN_ROWS, MAX_ROWS = 20, 90

_GRIDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@cache
def cell() -> tuple[int, int]:
    """(width, height) in pixels of one character cell: the width of a digit (glyphs are centred in
    their cells; the few wider ones, such as W, reach a pixel or two into their neighbours)."""
    probe = ImageDraw.Draw(Image.new("L", (1, 1)))
    return int(np.ceil(probe.textlength("0", font=font(TEXT_SIZE)))) + 1, TEXT_SIZE + 4


@cache
def _glyph_width() -> int:
    """Width in pixels of the image one glyph is drawn in: the widest printable ASCII glyph's."""
    probe = ImageDraw.Draw(Image.new("L", (1, 1)))
    widest = max(probe.textlength(chr(c), font=font(TEXT_SIZE)) for c in range(33, 127))
    return max(cell()[0], int(np.ceil(widest)) + 2)


@lru_cache(maxsize=4096)
def _glyph(ch: str) -> np.ndarray:
    """The coverage (0..1 floats) of one character drawn centred in a glyph image."""
    w, h = _glyph_width(), cell()[1]
    img = Image.new("L", (w, h), 0)
    ImageDraw.Draw(img).text((w / 2, 1), ch, fill=255, font=font(TEXT_SIZE), anchor="ma")
    return np.asarray(img, dtype=np.float32) / 255.0


def _entry(game):
    from gemenvs.core.entry import entry_of

    return entry_of(game)


def _text(game, state, viewer: int | None) -> list[str]:
    """The lines of the game's text render of ``state`` for ``viewer`` (tabs expanded)."""
    return _entry(game).render_text(game, state, viewer).expandtabs(4).splitlines()


def grid(game) -> tuple[int, int]:
    """(columns, rows) of the text grid of every picture of ``game``."""
    try:
        found = _GRIDS.get(game)
    except TypeError:  # a game object that takes no weak reference
        found = None
    if found is not None:
        return found
    state = game.new_state(0)
    texts = [_text(game, state, v) for v in (None, *range(game.num_players))]
    columns = min(MAX_COLUMNS, max(MIN_COLUMNS, max((len(line) for t in texts for line in t), default=0) + 2))
    rows = min(MAX_ROWS, max(MIN_ROWS, 2 * max(len(t) for t in texts)))
    try:
        _GRIDS[game] = (columns, rows)
    except TypeError:
        pass
    return columns, rows


def size(game) -> tuple[int, int]:
    """(height, width) of every picture of ``game`` (fixed by the game object: its player count and options)."""
    columns, rows = grid(game)
    w, h = cell()
    return HEADER + MARGIN + rows * h + MARGIN, MARGIN + columns * w + MARGIN


def _fit(lines: list[str], columns: int, rows: int) -> list[str]:
    """``lines`` cut to the grid: long lines end in ``~``, and the last row counts the lines left out."""
    out = [line if len(line) <= columns else line[:columns - 1] + "~" for line in lines]
    if len(out) > rows:
        out = out[:rows - 1] + [f"~ {len(out) - rows + 1} more lines"]
    return out


def draw(game, state, viewer: int | None) -> Canvas:
    """The picture of ``state``: the title bar, then the text render for ``viewer`` in monospace."""
    height, width = size(game)
    columns, rows = grid(game)
    c = Canvas(width, height)
    title = f"{_entry(game).title} ({game.num_players} players)"
    c.header(title, "whole table" if viewer is None else f"seen by player_{viewer}")
    w, h = cell()
    spill = (_glyph_width() - w) // 2  # a glyph image reaches this far into each neighbouring cell
    coverage = np.zeros((rows * h, columns * w + 2 * spill), dtype=np.float32)
    for r, line in enumerate(_fit(_text(game, state, viewer), columns, rows)):
        for k, ch in enumerate(line):
            if not ch.isspace():
                g = _glyph(ch)
                block = coverage[r * h:(r + 1) * h, k * w:k * w + g.shape[1]]
                np.maximum(block, g[:, :block.shape[1]], out=block)
    coverage = coverage[:, spill:spill + columns * w]
    box = (MARGIN - 4, HEADER + MARGIN - 4, width - MARGIN + 4, height - MARGIN + 4)
    c.panel(box, radius=6)
    back = np.asarray(c.image.crop((MARGIN, HEADER + MARGIN, MARGIN + columns * w, HEADER + MARGIN + rows * h)),
                      dtype=np.float32)
    ink = np.array(palette.TEXT, dtype=np.float32)
    text = back * (1.0 - coverage[..., None]) + ink * coverage[..., None]
    c.image.paste(Image.fromarray(np.rint(text).astype(np.uint8), "RGB"), (MARGIN, HEADER + MARGIN))
    return c


def scores(game, state) -> ScoreTable:
    """The final scores of a finished game: a row per player with its score and its breakdown."""
    res = game.results(state)
    keys = [k for k in (res.breakdown[0] if res.breakdown else {}) if k != "total"]
    rows = [[f"player_{p}", f"{score:g}", *(f"{res.breakdown[p].get(k, 0):g}" for k in keys)]
            for p, score in enumerate(res.scores)]
    return ScoreTable(["player", "score", *keys], rows, list(res.winners))


def notice(frame_size: tuple[int, int], game, message: str) -> np.ndarray:
    """A frame of ``frame_size`` (height, width) holding only ``message`` under the game's name."""
    height, width = frame_size
    c = Canvas(width, height)
    c.header(f"{game.name}: {message}")
    return c.array()


__all__ = ["cell", "draw", "grid", "notice", "scores", "size"]
