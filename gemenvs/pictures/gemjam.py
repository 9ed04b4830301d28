"""The Gem Jam table as a picture, seen from one seat (the same information as its text render).

Top: the Draw Pile, the Discard Pile (its top card), the King's Vault, the turn (plays left,
Sleep Spell, Freeze), the decision (only when the viewer makes it, as in the text), the cards
shown to the viewer, and the response stack (top on the right: each spell, its caster, its
target as the public cast event names it, cancelled or doubled). Below, one area per player:
completed sets, hand and Vault sizes, the viewer's own hand and Vault face up with the Vault's
gold, and the Shrine: one tile per set (its gem type, a chip per gem: B Basic, D Dual, W
Wildcard, empty slots up to the set size, complete / guarded / broken). ``viewer=None`` shows
every hand and Vault, as the text render without a viewer does (for debugging, not a seat's view).
"""
from __future__ import annotations

from gemenvs.gemjam.rules import SETS_TO_WIN, complete_sets, is_complete
from gemenvs.pictures import palette
from gemenvs.pictures.canvas import Canvas, ScoreTable

WIDTH = 1200
HEADER = 34
MARGIN = 10
CENTRE = 118     # piles, turn and decision, response stack
SEAT = 188       # one player's area
LEFT = 190       # the left column of a player's area
TILE_W, TILE_H, TILE_STEP = 116, 54, 121
TILE_ROWS = 2
STACK_SHOWN = 4
SPELL: palette.RGB = (214, 200, 236)
GOLD_CARD: palette.RGB = (245, 220, 130)
WILD: palette.RGB = (250, 250, 250)


def size(game) -> tuple[int, int]:
    """(height, width) of every Gem Jam picture for this game's player count."""
    return HEADER + MARGIN + CENTRE + MARGIN + game.num_players * SEAT + MARGIN, WIDTH


def draw(game, s, viewer: int | None) -> Canvas:
    """The picture of state ``s`` as ``viewer`` (a seat, or None: everything) sees it."""
    cfg = game.cfg
    height, width = size(game)
    c = Canvas(width, height)
    if s.over:
        title = f"Gem Jam - game over ({s.end_reason}); winner(s): " + ", ".join(f"player_{w}" for w in s.winners)
    else:
        title = f"Gem Jam - round {s.round}, player_{s.turn}'s turn, {s.plays} play(s) left" \
            + (" [asleep]" if s.asleep else "") + (" [frozen]" if s.frozen else "")
    c.header(title, "every hand (debug)" if viewer is None else f"seen by player_{viewer}")
    top = HEADER + MARGIN
    _piles(c, s, cfg, (MARGIN, top, 400, top + CENTRE))
    _decision(c, s, cfg, viewer, (410, top, 690, top + CENTRE))
    _stack(c, s, cfg, (700, top, WIDTH - MARGIN, top + CENTRE))
    y = top + CENTRE + MARGIN
    for q in range(s.n):
        _seat(c, s, cfg, q, viewer, (MARGIN, y, WIDTH - MARGIN, y + SEAT - 6))
        y += SEAT
    return c


def card_fill(cfg, kind: int) -> palette.RGB:
    """The face colour of a card kind: its gem type's colour (a Dual's first), white for a
    Wildcard, gold for Gold, lilac for a spell."""
    m = cfg.manifest
    category = m.category[kind]
    if category in ("basic", "dual"):
        return palette.gem_colour(m.type_names[m.types[kind][0]])
    return {"wildcard": WILD, "gold": GOLD_CARD}.get(category, SPELL)


def mini_card(c: Canvas, cfg, kind: int, box, size: int = 10) -> None:
    """A small face-up card: its name on its colour (a Dual split in its two types' colours)."""
    x0, y0, x1, y1 = box
    m = cfg.manifest
    fill = card_fill(cfg, kind)
    c.draw.rounded_rectangle(box, radius=4, fill=fill, outline=palette.CARD_EDGE)
    if m.category[kind] == "dual" and len(m.types[kind]) > 1:
        second = palette.gem_colour(m.type_names[m.types[kind][1]])
        c.draw.rounded_rectangle(((x0 + x1) / 2, y0 + 1, x1 - 1, y1 - 1), radius=3, fill=second)
    ink = palette.ink_on(fill)
    c.text((x0 + 4, (y0 + y1) / 2), m.names[kind], size, ink, x1 - x0 - 7, anchor="lm")


def _piles(c: Canvas, s, cfg, box) -> None:
    """The Draw Pile, the Discard Pile with its top card, and the King's Vault."""
    x0, y0, x1, y1 = box
    c.panel(box)
    c.text((x0 + 10, y0 + 6), "Draw Pile" + (" (recycled)" if s.recycled else ""), 12, palette.MUTED)
    c.back((x0 + 10, y0 + 26, x0 + 70, y0 + 106), str(len(s.draw)), 16)
    c.text((x0 + 130, y0 + 6), f"Discard Pile: {len(s.discard)}", 12, palette.MUTED)
    if s.discard:
        top = s.discard[-1]
        c.card((x0 + 130, y0 + 26, x0 + 250, y0 + 106), fill=card_fill(cfg, top), title=cfg.manifest.names[top],
               lines=(cfg.manifest.category[top],), size=11)
    else:
        c.text((x0 + 130, y0 + 40), "empty", 12, palette.MUTED)
    c.text((x0 + 290, y0 + 6), "King's Vault", 12, palette.MUTED)
    c.back((x0 + 290, y0 + 26, x0 + 350, y0 + 106), str(len(s.king)), 16)


def _decision(c: Canvas, s, cfg, viewer: int | None, box) -> None:
    """Whose decision it is (only shown to that seat, or to everyone with no viewer, as in the
    text render) and the cards set aside and shown to the viewer."""
    x0, y0, x1, y1 = box
    c.panel(box)
    c.text((x0 + 10, y0 + 6), "decision", 12, palette.MUTED)
    d = s.decision
    if s.over:
        c.text((x0 + 10, y0 + 28), "game over", 14, palette.HIGHLIGHT)
    elif d is not None and (viewer is None or viewer == d.seat):
        who = "you" if viewer == d.seat else f"player_{d.seat}"
        c.text((x0 + 10, y0 + 28), f"to decide: {who}", 14, palette.HIGHLIGHT, x1 - x0 - 20)
        c.text((x0 + 10, y0 + 48), d.kind.replace("_", " "), 13, palette.TEXT, x1 - x0 - 20)
    else:
        c.text((x0 + 10, y0 + 28), "another seat is deciding", 13, palette.MUTED)
    c.text((x0 + 10, y1 - 18), "Shrine chips: B Basic, D Dual, W Wildcard", 11, palette.MUTED)
    if viewer is not None and s.aside is not None and s.aside.seat == viewer:
        c.text((x0 + 10, y0 + 66), "shown to you:", 12, palette.MUTED)
        x = x0 + 10
        for kind in s.aside.cards[:3]:
            mini_card(c, cfg, kind, (x, y0 + 80, x + 84, y0 + 98), 10)
            x += 88
        if len(s.aside.cards) > 3:
            c.text((x, y0 + 82), f"+{len(s.aside.cards) - 3}", 12)


def _stack(c: Canvas, s, cfg, box) -> None:
    """The response stack, bottom on the left and top on the right (the last six entries)."""
    x0, y0, x1, y1 = box
    c.panel(box)
    c.text((x0 + 10, y0 + 6), f"response stack ({len(s.stack)}, top on the right)", 12, palette.MUTED)
    if not s.stack:
        c.text((x0 + 10, y0 + 40), "empty", 12, palette.MUTED)
        return
    shown = s.stack[-STACK_SHOWN:]
    if len(s.stack) > len(shown):
        c.text((x0 + 10, y0 + 60), f"+{len(s.stack) - len(shown)}", 13)
    m = cfg.manifest
    w = (x1 - x0 - 40) / STACK_SHOWN
    for k, e in enumerate(shown):
        x = x0 + 34 + k * w
        lines = [f"by player_{e.caster}"]
        if e.target_player >= 0:
            lines.append("at King's Vault" if e.target_player == cfg.num_players else f"at player_{e.target_player}")
        if e.gem_type >= 0:
            lines.append(m.type_names[e.gem_type])
        if e.doublings:
            lines.append(f"doubled x{2 ** e.doublings}")
        box_k = (x, y0 + 26, x + w - 6, y0 + 108)
        c.card(box_k, fill=card_fill(cfg, e.kind), title=m.names[e.kind], lines=tuple(lines), size=11)
        if e.cancelled:  # cancelled: struck through
            c.draw.line((box_k[0] + 2, box_k[3] - 2, box_k[2] - 2, box_k[1] + 2), fill=palette.ALERT, width=3)
            c.text((x + 4, y0 + 94), "cancelled", 11, palette.ALERT)


def _seat(c: Canvas, s, cfg, q: int, viewer: int | None, box) -> None:
    """One player's area: completed sets, hand and Vault (face up when the viewer may see
    them), and the Shrine's sets."""
    x0, y0, x1, y1 = box
    m = cfg.manifest
    own = viewer == q
    visible = viewer is None or own
    c.panel(box, fill=palette.PANEL_VIEWER if own else palette.PANEL)
    d = s.decision
    if not s.over and d is not None and d.seat == q and viewer in (None, q):
        c.marker((x0 + 6, y0 + 15))
    name = f"player_{q}" + (" (you)" if own else "") + (" - turn" if q == s.turn and not s.over else "")
    c.text((x0 + 18, y0 + 8), name, 14, width=LEFT - 24)
    done = complete_sets(s, cfg, q)
    c.text((x0 + 18, y0 + 32), f"{done} complete set(s)", 13, palette.HIGHLIGHT if done else palette.TEXT)
    for k in range(SETS_TO_WIN):  # the four completed sets that win
        fill = palette.COMPLETE if k < done else palette.PANEL_EDGE
        c.draw.rounded_rectangle((x0 + 18 + k * 22, y0 + 52, x0 + 36 + k * 22, y0 + 66), radius=3, fill=fill)
    if done > SETS_TO_WIN:
        c.text((x0 + 18 + SETS_TO_WIN * 22, y0 + 52), f"+{done - SETS_TO_WIN}", 12)
    c.text((x0 + 18, y0 + 76), f"hand {len(s.hands[q])}", 13)
    c.text((x0 + 18, y0 + 96), f"Vault {len(s.vaults[q])}", 13)
    if visible:
        gold = sum(m.gold[k] for k in s.vaults[q])
        c.text((x0 + 18, y0 + 116), f"Vault gold {gold}", 13, palette.COIN)
    # hand (face up when visible, else backs) and Vault
    hx = x0 + LEFT
    right = x1 - 10
    if visible:
        hand = sorted(s.hands[q])
        room = int((right - hx - 40) // 92)
        for k, kind in enumerate(hand[:room]):
            mini_card(c, cfg, kind, (hx + k * 92, y0 + 6, hx + k * 92 + 88, y0 + 32))
        if len(hand) > room:
            c.text((hx + room * 92 + 4, y0 + 12), f"+{len(hand) - room}", 13)
        if not hand:
            c.text((hx, y0 + 12), "hand: empty", 12, palette.MUTED)
        c.text((hx, y0 + 40), "Vault: " + _summary(cfg, s.vaults[q]), 12, palette.TEXT, right - hx)
    else:
        c.text((hx, y0 + 6), "hand", 11, palette.MUTED)
        end = c.backs(hx + 36, y0 + 4, len(s.hands[q]), w=18, h=26, step=7, most=10)
        c.text((end + 24, y0 + 6), "Vault", 11, palette.MUTED)
        c.backs(end + 64, y0 + 4, len(s.vaults[q]), w=18, h=26, step=4, most=12)
    # the Shrine
    sets = s.shrines[q]
    per_row = int((right - hx) // TILE_STEP)
    room = per_row * TILE_ROWS
    shown = sets if len(sets) <= room else sets[:room - 1]
    ty = y0 + 62
    if not sets:
        c.text((hx, ty + 4), "Shrine: no sets yet", 12, palette.MUTED)
    for k, st in enumerate(shown):
        _tile(c, cfg, st, hx + (k % per_row) * TILE_STEP, ty + (k // per_row) * (TILE_H + 6))
    if len(shown) < len(sets):
        k = len(shown)
        c.text((hx + (k % per_row) * TILE_STEP + 8, ty + (k // per_row) * (TILE_H + 6) + 18),
               f"+{len(sets) - len(shown)} more sets", 12)


def _summary(cfg, kinds: list[int]) -> str:
    """``2x Gold 3, Switch`` style list of card kinds ("empty" for none)."""
    if not kinds:
        return "empty"
    names = cfg.manifest.names
    return ", ".join(f"{kinds.count(k)}x {names[k]}" if kinds.count(k) > 1 else names[k] for k in sorted(set(kinds)))


def _tile(c: Canvas, cfg, st: list, x: float, y: float) -> None:
    """One set of a Shrine: its gem type, a chip per gem (B/D/W) and empty slots up to its size,
    and whether it is complete, guarded or broken this turn."""
    m = cfg.manifest
    t = st.gem_type
    colour = palette.gem_colour(m.type_names[t])
    complete = is_complete(cfg, st)
    c.draw.rounded_rectangle((x, y, x + TILE_W, y + TILE_H), radius=5, fill=palette.PANEL_EDGE,
                             outline=palette.COMPLETE if complete else palette.CARD_EDGE, width=3 if complete else 1)
    c.draw.rounded_rectangle((x + 2, y + 2, x + TILE_W - 2, y + 17), radius=4, fill=colour)
    gems = st.gems
    size = cfg.set_size[t]
    c.text((x + 5, y + 10), m.type_names[t], 11, palette.ink_on(colour), TILE_W - 44, anchor="lm")
    c.text((x + TILE_W - 5, y + 10), "done" if complete else f"{len(gems)}/{size}", 11, palette.ink_on(colour),
           anchor="rm")
    slots = max(size, len(gems))
    step = min(22, (TILE_W - 8) / max(1, slots))
    for k in range(slots):
        cx = x + 4 + k * step
        box = (cx, y + 21, cx + step - 3, y + 37)
        if k < len(gems):
            kind = gems[k]
            letter = "B" if m.is_basic[kind] else "D" if m.is_dual[kind] else "W"
            fill = colour if letter != "W" else WILD
            c.draw.rounded_rectangle(box, radius=3, fill=fill, outline=palette.CARD_INK)
            c.text(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), letter, 10, palette.ink_on(fill), anchor="mm")
        else:
            c.draw.rounded_rectangle(box, radius=3, outline=palette.MUTED)
    tags = [tag for tag, on in (("guarded", st.guarded), ("broken", st.broken)) if on]
    if tags:
        c.text((x + 5, y + 40), ", ".join(tags), 10, palette.ALERT if st.broken else palette.HIGHLIGHT)


#: how a Gem Jam game ended (``Results.extra["end_reason"]``) -> who wins
END_REASONS = {
    "four_sets": "the winner completed four sets in its own turn",
    "deck_out": "the Draw Pile ran out: most completed sets wins, a tie shares the win",
    "max_rounds": "the last round (max_rounds) ended: most completed sets wins, a tie shares the win",
}


def scores(game, s) -> ScoreTable:
    """The final score of every player of a finished game (``game.results``): its completed sets,
    beside the sets of its Shrine left incomplete."""
    res = game.results(s)
    rows = []
    for q, b in enumerate(res.breakdown):
        done = int(b["completed_sets"])
        rows.append([f"player_{q}", str(len(s.shrines[q])), str(len(s.shrines[q]) - done), str(done)])
    reason = res.extra.get("end_reason", "")
    return ScoreTable(["player", "sets in the Shrine", "incomplete", "completed sets = score"], rows,
                      list(res.winners),
                      ["score = completed sets in the Shrine; incomplete sets score nothing",
                       f"game over ({reason}): {END_REASONS.get(reason, 'see the rules')}"])


__all__ = ["END_REASONS", "card_fill", "draw", "mini_card", "scores", "size"]
