"""The GEM table as a picture (GEM has no private information: every seat sees the same table,
the face-down stacks only by their sizes; the viewer's area is lit).

Top: the face-down stacks, the face-up cards of this round (gems, INVESTED value and
reinvestment cost), the auction (bids from the opener, the highest, what the winner still owes)
or the reinvestment (credit, cards paid and reinvested), and the majorities (gems on INVESTED
cards per type and player, the holders lit). Below, one area per player: capital, points, coin
cards and gem cards, each on its INVESTED (bright) or LEVERAGED (grey) side.
"""
from __future__ import annotations

from gemenvs.gem import render
from gemenvs.gem.rules import (
    BID, OVER, PASSED, PAY, REINVEST, TAKE, capital, high_bid, invested_gems, majority_holders, score_breakdown,
    winners,
)
from gemenvs.pictures import palette
from gemenvs.pictures.canvas import Canvas, ScoreTable

WIDTH = 1100
HEADER = 34
MARGIN = 10
CENTRE = 176     # stacks, face-up cards, auction, majorities
SEAT = 96        # one player's area
CARD_W, CARD_H, CARD_STEP = 44, 62, 48


def size(game) -> tuple[int, int]:
    """(height, width) of every GEM picture for this game's player count."""
    return HEADER + MARGIN + CENTRE + MARGIN + game.num_players * SEAT + MARGIN, WIDTH


def draw(game, s, viewer: int | None) -> Canvas:
    """The picture of state ``s``; ``viewer``'s area is lit (None: no seat lit)."""
    cfg = game.cfg
    height, width = size(game)
    c = Canvas(width, height)
    c.header(render.title(s, cfg), "whole table" if viewer is None else f"seen by player_{viewer}")
    top = HEADER + MARGIN
    _stacks(c, s, (MARGIN, top, 200, top + CENTRE))
    _face_up(c, s, cfg, (210, top, 450, top + CENTRE))
    _auction(c, s, cfg, (460, top, 760, top + CENTRE))
    _majorities(c, s, cfg, (770, top, WIDTH - MARGIN, top + CENTRE))
    y = top + CENTRE + MARGIN
    points = score_breakdown(s, cfg)
    for p in range(cfg.n):
        _seat(c, s, cfg, p, viewer, points[p]["total"], (MARGIN, y, WIDTH - MARGIN, y + SEAT - 6))
        y += SEAT
    return c


def gem_card(c: Canvas, cfg, card: int, x: float, y: float, invested: bool = True, w: int = CARD_W,
             h: int = CARD_H) -> None:
    """One gem card at ``(x, y)``: its gems, and the value of the side up (INVESTED: what it pays;
    LEVERAGED: the reinvestment cost) with the side's name."""
    fill = palette.CARD_FACE if invested else palette.LEVERAGED
    c.draw.rounded_rectangle((x, y, x + w, y + h), radius=5, fill=fill,
                             outline=palette.COIN_EDGE if invested else palette.CARD_EDGE, width=2 if invested else 1)
    gems = cfg.card_gems[card]
    per_row = 2
    for k, t in enumerate(gems):
        gx = x + w / 2 + ((k % per_row) - (min(len(gems), per_row) - 1) / 2) * 16
        gy = y + 14 + (k // per_row) * 16
        colour = palette.gem_colour(cfg.manifest.gem_types[t])
        c.gem((gx, gy), 7, colour if invested else palette.dim(colour, 0.7))
    side, value = ("INV", cfg.card_value[card]) if invested else ("LEV", cfg.card_cost[card])
    c.text((x + w / 2, y + h - 20), str(value), 14, palette.CARD_INK, anchor="mm")
    c.text((x + w / 2, y + h - 7), side, 9, palette.CARD_INK, anchor="mm")


def _stacks(c: Canvas, s, box) -> None:
    """The face-down stacks left, each by its size (their order is hidden from every seat)."""
    x0, y0, x1, y1 = box
    c.panel(box)
    c.text((x0 + 10, y0 + 8), "face-down stacks", 14, width=x1 - x0 - 20)
    if not s.stacks:
        c.text((x0 + 10, y0 + 40), "none left", 12, palette.MUTED)
    for k, stack in enumerate(s.stacks):
        col, row = k % 3, k // 3
        bx, by = x0 + 12 + col * 58, y0 + 36 + row * 66
        c.back((bx, by, bx + 44, by + 58), str(len(stack)), 14)


def _face_up(c: Canvas, s, cfg, box) -> None:
    """The face-up cards of this round, up for auction (shown on their INVESTED side)."""
    x0, y0, x1, y1 = box
    c.panel(box)
    c.text((x0 + 10, y0 + 8), "face up: value / reinvest cost", 14, width=x1 - x0 - 20)
    if not s.face_up:
        c.text((x0 + 10, y0 + 40), "none", 12, palette.MUTED)
    for k, card in enumerate(s.face_up):
        col, row = k % 4, k // 4
        x, y = x0 + 12 + col * 56, y0 + 34 + row * 70
        gem_card(c, cfg, card, x, y, w=50, h=64)
        c.text((x + 25, y + 64 + 2), f"cost {cfg.card_cost[card]}", 10, palette.MUTED, anchor="ma")


def _auction(c: Canvas, s, cfg, box) -> None:
    """This auction's bids (from the opener) and payment, or this reinvestment's credit and cards."""
    x0, y0, x1, y1 = box
    c.panel(box)
    n = cfg.n
    if s.phase == REINVEST:
        c.text((x0 + 10, y0 + 8), f"reinvestment: player_{s.current}", 14, width=x1 - x0 - 20)
        c.coin((x0 + 32, y0 + 58), 18, str(s.credit), 13)
        c.text((x0 + 56, y0 + 50), "credit", 12, palette.MUTED)
        for k, (label, cards, invested) in enumerate((("paid", s.paid, False), ("reinvested", s.reinvested, True))):
            y = y0 + 84 + k * 44
            c.text((x0 + 10, y + 12), label, 12, palette.MUTED)
            x = x0 + 84
            for card in cards[:6]:
                gem_card(c, cfg, card, x, y, invested, w=30, h=40)
                x += 33
            if not cards:
                c.text((x, y + 12), "-", 12, palette.MUTED)
        return
    if s.phase == OVER:
        c.text((x0 + 10, y0 + 8), "final scores", 14)
        scores = score_breakdown(s, cfg)
        won_by = winners(scores)
        for p, b in enumerate(scores):
            won = p in won_by
            c.text((x0 + 10, y0 + 34 + p * 22), f"player_{p}: {b['total']} ({b['gems']} gems + {b['majorities']} "
                   f"majorities)" + (" - wins" if won else ""), 13, palette.HIGHLIGHT if won else palette.TEXT,
                   x1 - x0 - 20)
        return
    if not s.bids:
        c.text((x0 + 10, y0 + 8), "auction", 14)
        c.text((x0 + 10, y0 + 40), "no auction", 12, palette.MUTED)
        return
    c.text((x0 + 10, y0 + 8), f"auction (opener player_{s.opener})", 14, width=x1 - x0 - 20)
    for k in range(n):
        p = (s.opener + k) % n
        b = s.bids[p]
        y = y0 + 34 + k * 22
        if s.phase == BID and p == s.current:
            c.marker((x0 + 10, y + 8))
        c.text((x0 + 24, y), f"player_{p}", 13)
        shown = "-" if b is None else "pass" if b == PASSED else str(b)
        c.text((x0 + 140, y), shown, 13, palette.MUTED if b is None or b == PASSED else palette.TEXT)
    high = high_bid(s)
    y = y0 + 40 + n * 22
    c.text((x0 + 10, y), f"highest bid: {'none' if high is None else high}", 13, palette.HIGHLIGHT)
    if s.phase == PAY:
        c.text((x0 + 10, y + 20), f"player_{s.winner} owes {s.owed}", 13, palette.HIGHLIGHT)
    elif s.phase == TAKE:
        c.text((x0 + 10, y + 20), f"player_{s.winner} takes a card", 13, palette.HIGHLIGHT)


def _majorities(c: Canvas, s, cfg, box) -> None:
    """Gems on INVESTED cards per type and player; the majority holders of each type lit."""
    x0, y0, x1, y1 = box
    c.panel(box)
    c.text((x0 + 10, y0 + 8), "majorities (INVESTED gems)", 14, width=x1 - x0 - 20)
    counts = invested_gems(s, cfg)
    types = cfg.manifest.gem_types
    col_w = min(36, (x1 - x0 - 84) / max(1, len(types)))
    for t, name in enumerate(types):
        c.gem((x0 + 84 + t * col_w + col_w / 2, y0 + 40), 8, palette.gem_colour(name))
    for p in range(cfg.n):
        y = y0 + 56 + p * 24
        c.text((x0 + 10, y + 3), f"player_{p}", 12)
        for t in range(len(types)):
            holders = majority_holders(counts, t)
            x = x0 + 84 + t * col_w
            if p in holders:
                c.draw.rounded_rectangle((x + 2, y, x + col_w - 2, y + 20), radius=4, fill=palette.HIGHLIGHT)
            ink = palette.CARD_INK if p in holders else (palette.TEXT if counts[p][t] else palette.MUTED)
            c.text((x + col_w / 2, y + 10), str(counts[p][t]), 12, ink, anchor="mm")


def _seat(c: Canvas, s, cfg, p: int, viewer: int | None, points: int, box) -> None:
    """One player's area: capital, points, coin cards and gem cards on their sides."""
    x0, y0, x1, y1 = box
    c.panel(box, fill=palette.PANEL_VIEWER if viewer == p else palette.PANEL)
    if s.phase != OVER and s.current == p:
        c.marker((x0 + 6, y0 + 15))
    c.text((x0 + 18, y0 + 8), f"player_{p}" + (" (you)" if viewer == p else ""), 14)
    c.text((x0 + 18, y0 + 30), f"capital {capital(s, cfg, p)}", 13)
    c.text((x0 + 18, y0 + 50), f"points {points}", 13, palette.HIGHLIGHT)
    # coin cards
    cx = x0 + 130
    c.text((cx, y0 + 6), "coin cards", 11, palette.MUTED)
    for j, (value, up) in enumerate(zip(cfg.coin_values, s.coins[p])):
        x = cx + j * 36
        if up:
            c.coin((x + 15, y0 + 44), 15, str(value), 13)
        else:
            c.coin((x + 15, y0 + 44), 15, f"({value})", 10, fill=palette.LEVERAGED)
    # gem cards: INVESTED first, then LEVERAGED
    gx = cx + 36 * len(cfg.coin_values) + 16
    held = [card for card, o in enumerate(s.owner) if o == p]
    held.sort(key=lambda card: (not s.invested[card], card))
    c.text((gx, y0 + 6), f"gem cards ({sum(s.invested[k] for k in held)} INVESTED, "
           f"{sum(not s.invested[k] for k in held)} LEVERAGED)", 11, palette.MUTED)
    room = int((x1 - 10 - gx) // CARD_STEP)
    shown = held if len(held) <= room else held[:room - 1]
    for k, card in enumerate(shown):
        gem_card(c, cfg, card, gx + k * CARD_STEP, y0 + 22, s.invested[card])
    if len(shown) < len(held):
        c.text((gx + len(shown) * CARD_STEP + 4, y0 + 44), f"+{len(held) - len(shown)}", 13)
    if not held:
        c.text((gx, y0 + 30), "none", 12, palette.MUTED)


def scores(game, s) -> ScoreTable:
    """The final points of every player of a finished game and their parts (``game.results``): gems on
    INVESTED cards and the majority points of each gem type."""
    cfg = game.cfg
    res = game.results(s)
    types = cfg.manifest.gem_types
    rows = []
    for p, b in enumerate(res.breakdown):
        rows.append([f"player_{p}", str(b["gems"]), *(f"+{b[f'majority_{t}']}" if b[f"majority_{t}"] else "-"
                                                       for t in types), f"+{b['majorities']}", str(b["total"])])
    return ScoreTable(["player", "gems", *types, "majorities", "points"], rows, list(res.winners),
                      ["points = gems on INVESTED cards + per gem type, for the most gems of it on INVESTED cards, "
                       "3 points alone or 2 each when shared",
                       "most points wins; then most gems; a tie left shares the win"])


__all__ = ["draw", "gem_card", "scores", "size"]
