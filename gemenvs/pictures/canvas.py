"""Drawing helpers shared by every game's picture: text, cards, card backs, gems, coins, panels.

A :class:`Canvas` wraps one Pillow image of a fixed size. Everything is drawn with ImageDraw
primitives (rounded rectangles, polygons, ellipses, text in Pillow's bundled default font), so a
state always gives the same pixels with the same Pillow version.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from gemenvs.pictures import palette
from gemenvs.pictures.palette import RGB


@lru_cache(maxsize=None)
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's bundled default font at ``size`` pixels (its bitmap font when FreeType is missing)."""
    try:
        return ImageFont.load_default(size)
    except (ImportError, OSError, TypeError):  # a Pillow built without FreeType
        return ImageFont.load_default()


@dataclass
class ScoreTable:
    """A finished game's scores as a table: column headings (the first is the player's), one row of
    cells per player, the winners' rows (lit) and lines saying how a score is made."""

    columns: list[str]
    rows: list[list[str]]
    winners: list[int]
    notes: list[str] = field(default_factory=list)


class Canvas:
    """One picture being drawn: a fixed-size RGB image and its ImageDraw."""

    def __init__(self, width: int, height: int, background: RGB = palette.TABLE):
        self.width, self.height = width, height
        self.image = Image.new("RGB", (width, height), background)
        self.draw = ImageDraw.Draw(self.image)

    def array(self) -> np.ndarray:
        """The picture as an (H, W, 3) uint8 array."""
        return np.asarray(self.image, dtype=np.uint8).copy()

    def dim(self, factor: float = 0.35) -> None:
        """Darken everything drawn so far (what is drawn next stands out over it)."""
        self.image = Image.blend(Image.new("RGB", self.image.size, (0, 0, 0)), self.image, factor)
        self.draw = ImageDraw.Draw(self.image)

    # ------------------------------------------------------------------ text

    def text_width(self, text: str, size: int = 13) -> float:
        """Width in pixels of ``text`` at ``size``."""
        return self.draw.textlength(text, font=font(size))

    def fit(self, text: str, width: float, size: int = 13) -> str:
        """``text`` cut (ending in "...") so that it is at most ``width`` pixels wide."""
        if self.text_width(text, size) <= width:
            return text
        lo, hi = 0, len(text)
        while lo < hi:  # the longest prefix that fits with the ellipsis
            mid = (lo + hi + 1) // 2
            if self.text_width(text[:mid] + "...", size) <= width:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo] + "..." if lo else ""

    def text(self, xy: tuple[float, float], text: str, size: int = 13, fill: RGB = palette.TEXT,
             width: float | None = None, anchor: str = "la") -> None:
        """Write ``text`` at ``xy`` (``anchor`` as Pillow's: "la" left-top, "mm" centred ...),
        cut to ``width`` pixels when given."""
        if width is not None:
            text = self.fit(text, width, size)
        if text:
            self.draw.text(xy, text, fill=fill, font=font(size), anchor=anchor)

    def lines(self, xy: tuple[float, float], lines: list[str], size: int = 13, fill: RGB = palette.TEXT,
              width: float | None = None, leading: int = 4) -> float:
        """Write ``lines`` one under another from ``xy``; the y just below the last."""
        x, y = xy
        for line in lines:
            self.text((x, y), line, size, fill, width)
            y += size + leading
        return y

    # ------------------------------------------------------------------ shapes

    def panel(self, box: tuple[float, float, float, float], fill: RGB = palette.PANEL,
              outline: RGB = palette.PANEL_EDGE, radius: int = 8, width: int = 2) -> None:
        """A rounded area of the table (a player's place, the centre)."""
        self.draw.rounded_rectangle(box, radius=radius, fill=fill, outline=outline, width=width)

    def card(self, box: tuple[float, float, float, float], fill: RGB = palette.CARD_FACE,
             outline: RGB = palette.CARD_EDGE, title: str = "", lines: tuple[str, ...] = (),
             size: int = 11, ink: RGB | None = None, width: int = 1) -> None:
        """A face-up card: a rounded rectangle with a title and lines of text, cut to fit."""
        x0, y0, x1, y1 = box
        self.draw.rounded_rectangle(box, radius=5, fill=fill, outline=outline, width=width)
        ink = ink or palette.ink_on(fill)
        inner = x1 - x0 - 6
        y = y0 + 3
        if title:
            self.text((x0 + 3, y), title, size, ink, inner)
            y += size + 3
        for line in lines:
            if y + size > y1:
                break
            self.text((x0 + 3, y), line, size - 1, ink, inner)
            y += size + 1

    def back(self, box: tuple[float, float, float, float], label: str = "", size: int = 12) -> None:
        """A face-down card (or a pile of them), with ``label`` (a count) in its middle."""
        x0, y0, x1, y1 = box
        self.draw.rounded_rectangle(box, radius=5, fill=palette.CARD_BACK, outline=palette.CARD_BACK_EDGE, width=1)
        self.draw.rounded_rectangle((x0 + 3, y0 + 3, x1 - 3, y1 - 3), radius=3, outline=palette.dim(
            palette.CARD_BACK_EDGE, 0.7), width=1)
        if label:
            self.text(((x0 + x1) / 2, (y0 + y1) / 2), label, size, palette.TEXT, anchor="mm")

    def backs(self, x: float, y: float, count: int, w: int = 22, h: int = 32, step: int = 8,
              most: int = 12) -> float:
        """``count`` overlapping card backs from ``(x, y)`` (at most ``most`` drawn) with the count
        on the last; the x just right of them."""
        drawn = min(count, most)
        for k in range(drawn):
            self.back((x + k * step, y, x + k * step + w, y + h), str(count) if k == drawn - 1 else "", 11)
        return x + (drawn - 1) * step + w if drawn else x

    def gem(self, centre: tuple[float, float], radius: float, colour: RGB, outline: RGB = palette.CARD_INK) -> None:
        """A cut gem: a diamond-shaped polygon of ``colour``."""
        cx, cy = centre
        r = radius
        points = [(cx, cy - r), (cx + r * 0.85, cy - r * 0.25), (cx + r * 0.5, cy + r),
                  (cx - r * 0.5, cy + r), (cx - r * 0.85, cy - r * 0.25)]
        self.draw.polygon(points, fill=colour, outline=outline)

    def coin(self, centre: tuple[float, float], radius: float, label: str = "", size: int = 12,
             fill: RGB = palette.COIN) -> None:
        """A round coin with ``label`` on it."""
        cx, cy = centre
        self.draw.ellipse((cx - radius, cy - radius, cx + radius, cy + radius), fill=fill,
                          outline=palette.COIN_EDGE, width=2)
        if label:
            self.text((cx, cy), label, size, palette.CARD_INK, anchor="mm")

    def marker(self, xy: tuple[float, float], size: int = 8, fill: RGB = palette.HIGHLIGHT) -> None:
        """A small right-pointing triangle: whose decision it is."""
        x, y = xy
        self.draw.polygon([(x, y - size / 2), (x + size, y), (x, y + size / 2)], fill=fill)

    def header(self, title: str, subtitle: str = "", height: int = 34) -> int:
        """The title bar across the top; the y below it."""
        self.draw.rectangle((0, 0, self.width, height), fill=palette.PANEL_EDGE)
        right = self.width - 12
        if subtitle:
            w = self.text_width(subtitle, 13)
            right -= w + 16
            self.text((self.width - 12 - w, height / 2), subtitle, 13, palette.MUTED, anchor="lm")
        self.text((12, height / 2), title, 17, palette.TEXT, right - 12, anchor="lm")
        return height

    def score_board(self, title: str, table: ScoreTable, size: int = 14) -> None:
        """``table`` in a panel in the middle of the picture: ``title``, the headings, a row per
        player (the winners' lit, marked "wins") and the notes under it, all cut to fit."""
        pad, row_h, gap = 16, size + 14, 18
        cols = len(table.columns)
        widths = [max([self.text_width(table.columns[k], size - 2)]
                      + [self.text_width(r[k], size) for r in table.rows]) for k in range(cols)]
        tag = "wins"
        room = self.width - 2 * 30 - 2 * pad  # the widest the table may be
        table_w = sum(widths) + gap * cols + self.text_width(tag, size)
        if table_w > room:  # shrink every column alike (their text is cut to fit)
            scale = (room - gap * cols - self.text_width(tag, size)) / max(1.0, sum(widths))
            widths = [w * scale for w in widths]
            table_w = room
        inner = min(room, max(table_w, self.text_width(title, size + 6),
                              *(self.text_width(n, size - 2) for n in table.notes or [""])))
        height = pad + (size + 14) + row_h + row_h * len(table.rows) + 8 + len(table.notes) * (size + 2) + pad
        height = min(height, self.height - 20)
        x0 = (self.width - inner) / 2 - pad
        y0 = max(10.0, (self.height - height) / 2)
        self.panel((x0, y0, x0 + inner + 2 * pad, y0 + height), fill=palette.PANEL, outline=palette.HIGHLIGHT,
                   radius=12, width=3)
        x, y = x0 + pad, y0 + pad
        self.text((x, y), title, size + 6, palette.TEXT, inner)
        y += size + 14

        def cells(values: list[str], y: float, ink, size: int) -> None:
            cx = x
            for k, (text, w) in enumerate(zip(values, widths)):
                if k == 0:
                    self.text((cx, y), text, size, ink, w)
                else:
                    self.text((cx + w, y), self.fit(text, w, size), size, ink, anchor="ra")
                cx += w + gap

        cells(table.columns, y + 2, palette.MUTED, size - 2)
        y += row_h
        self.draw.line((x, y - 6, x + table_w, y - 6), fill=palette.PANEL_EDGE, width=2)
        for p, row in enumerate(table.rows):
            won = p in table.winners
            if won:
                self.draw.rounded_rectangle((x - 6, y - 4, x + table_w + 6, y + size + 6), radius=5,
                                            fill=palette.PANEL_VIEWER, outline=palette.HIGHLIGHT)
            cells(row, y, palette.HIGHLIGHT if won else palette.TEXT, size)
            if won:
                self.text((x + table_w, y), tag, size, palette.HIGHLIGHT, anchor="ra")
            y += row_h
        y += 8
        for note in table.notes:
            self.text((x, y), note, size - 2, palette.MUTED, inner)
            y += size + 2


__all__ = ["Canvas", "ScoreTable", "font"]
