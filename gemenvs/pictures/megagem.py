"""The MegaGem table as a picture, seen from one seat (the same information as its text render).

Top: the Value Display with the value chart (each colour's row, the column of its Display count
lit), the current auction card, the gem row for sale and the face-down decks, the four missions
and the last auction. Below, one area per player: coins, hand (the viewer's own face up, the
others' backs with their count), Collection, loans, investments, score, and the winners at the end. ``viewer=None``
shows the public table: no hand face up, no bid of the round being bid.
"""
from __future__ import annotations

from gemenvs.megagem.data import AUCTION_KINDS, COLOURS, MISSIONS, NUM_COLOURS, VALUE_CHARTS
from gemenvs.megagem.rules import BID, OVER, REVEAL, results, score_breakdown
from gemenvs.pictures import palette
from gemenvs.pictures.canvas import Canvas, ScoreTable

WIDTH = 1000
HEADER = 34
CENTRE = 214     # Value Display, auction and missions
LAST = 26        # the last auction's line
SEAT = 88        # one player's area
MARGIN = 10


def size(game) -> tuple[int, int]:
    """(height, width) of every MegaGem picture for this game's player count."""
    return HEADER + MARGIN + CENTRE + LAST + game.num_players * SEAT + MARGIN, WIDTH


def draw(game, s, viewer: int | None) -> Canvas:
    """The picture of state ``s`` as ``viewer`` (a seat, or None for the public table) sees it."""
    height, width = size(game)
    c = Canvas(width, height)
    if s.phase == OVER:
        title = f"MegaGem - game over after {s.round} auctions"
    else:
        what = "sealed bids" if s.phase == BID else f"player_{s.winner} reveals a gem"
        title = f"MegaGem - round {s.round}: {AUCTION_KINDS[s.auction_card][0]} - {what}"
    c.header(title, "public table" if viewer is None else f"seen by player_{viewer}")
    top = HEADER + MARGIN
    _display(c, s, (MARGIN, top, 452, top + CENTRE))
    _auction(c, s, (462, top, 690, top + CENTRE))
    _missions(c, s, (700, top, WIDTH - MARGIN, top + CENTRE))
    _last_auction(c, s, game.opts.public_bids, top + CENTRE + 4)
    y = top + CENTRE + LAST
    for p in range(s.num_players):
        _seat(c, s, p, viewer, (MARGIN, y, WIDTH - MARGIN, y + SEAT - 6))
        y += SEAT
    return c


def _display(c: Canvas, s, box) -> None:
    """The Value Display: per colour its gems there, and the value chart row with its column lit."""
    x0, y0, x1, y1 = box
    c.panel(box)
    c.text((x0 + 10, y0 + 8), f"Value Display - chart {s.chart}: coins per Collection gem", 14)
    values = VALUE_CHARTS[s.chart]
    cols = [x0 + 210 + k * 38 for k in range(len(values))]
    for k, x in enumerate(cols):
        head = f"{k}+" if k == len(values) - 1 else str(k)
        c.text((x + 15, y0 + 36), head, 11, palette.MUTED, anchor="mm")
    row_h = 32
    for colour, name in enumerate(COLOURS):
        y = y0 + 48 + colour * row_h
        count = s.display[colour]
        c.gem((x0 + 20, y + 13), 9, palette.gem_colour(name))
        c.text((x0 + 36, y + 5), name, 13)
        for k in range(count):  # the cards in the Display, overlapping
            c.card((x0 + 100 + k * 11, y + 1, x0 + 118 + k * 11, y + 27), fill=palette.gem_colour(name))
        current = min(count, len(values) - 1)
        for k, x in enumerate(cols):
            lit = k == current
            fill = palette.HIGHLIGHT if lit else palette.PANEL_EDGE
            c.draw.rounded_rectangle((x, y + 2, x + 30, y + 26), radius=4, fill=fill)
            c.text((x + 15, y + 14), str(values[k]), 13, palette.CARD_INK if lit else palette.MUTED, anchor="mm")


def _auction(c: Canvas, s, box) -> None:
    """The current auction card, the gem row for sale, and the face-down decks' sizes."""
    x0, y0, x1, y1 = box
    c.panel(box)
    c.text((x0 + 10, y0 + 8), "Auction", 14)
    if s.phase != OVER and s.auction_card >= 0:
        label, kind, amount, _ = AUCTION_KINDS[s.auction_card]
        fill = {"treasure": palette.CARD_FACE, "loan": (250, 215, 205), "invest": (215, 235, 250)}[kind]
        c.card((x0 + 10, y0 + 32, x0 + 96, y0 + 132), fill=fill, title=kind.capitalize(), size=13)
        if kind == "treasure":
            for k in range(amount):
                c.gem((x0 + 53 + (k - (amount - 1) / 2) * 26, y0 + 82), 11, palette.CARD_BACK_EDGE)
        else:
            c.coin((x0 + 53, y0 + 82), 20, str(amount), 15)
        c.text((x0 + 53, y0 + 118), label, 10, palette.CARD_INK, 80, anchor="mm")
    else:
        c.text((x0 + 10, y0 + 40), "no auction", 12, palette.MUTED)
    c.text((x0 + 110, y0 + 32), "auction deck", 11, palette.MUTED)
    c.backs(x0 + 110, y0 + 48, len(s.auction_deck), most=8, step=6)
    c.text((x0 + 10, y0 + 142), "gem row", 11, palette.MUTED)
    for k, colour in enumerate(s.gem_row):
        c.card((x0 + 10 + k * 32, y0 + 158, x0 + 38 + k * 32, y0 + 198), fill=palette.gem_colour(COLOURS[colour]))
    c.text((x0 + 110, y0 + 142), "gem deck", 11, palette.MUTED)
    c.backs(x0 + 110, y0 + 158, len(s.gem_deck), h=40, most=8, step=6)


def _missions(c: Canvas, s, box) -> None:
    """The four face-up missions: what each asks, its coins, and who claimed it."""
    x0, y0, x1, y1 = box
    c.panel(box)
    c.text((x0 + 10, y0 + 8), "Missions", 14)
    for k, (m, owner) in enumerate(zip(s.missions, s.mission_owner)):
        y = y0 + 32 + k * 45
        label, coins, _, _ = MISSIONS[m]
        fill = palette.CARD_FACE if owner < 0 else palette.LEVERAGED
        who = "open" if owner < 0 else f"claimed by player_{owner}"
        c.card((x0 + 10, y, x1 - 10, y + 40), fill=fill, title=label, lines=(who,), size=12)
        c.coin((x1 - 30, y + 20), 13, str(coins), 11)


def _last_auction(c: Canvas, s, public_bids: bool, y: float) -> None:
    """The last resolved auction: its card, the winner, the bids when they are public, the reveal."""
    if not s.history:
        c.text((MARGIN + 4, y), "no auction resolved yet", 12, palette.MUTED)
        return
    last = s.history[-1]
    text = f"last auction: {AUCTION_KINDS[last.card][0]} won by player_{last.winner}"
    if public_bids:
        text += "; bids " + ", ".join(f"player_{p} {b}" for p, b in enumerate(last.bids))
    if last.revealed >= 0:
        text += f"; revealed {COLOURS[last.revealed]}"
    c.text((MARGIN + 4, y), text, 13, palette.TEXT, WIDTH - 2 * MARGIN)


def _seat(c: Canvas, s, p: int, viewer: int | None, box) -> None:
    """One player's area: coins, hand, Collection, loans, investments, score, bidding status."""
    x0, y0, x1, y1 = box
    own = viewer == p
    c.panel(box, fill=palette.PANEL_VIEWER if own else palette.PANEL)
    acting = s.phase == REVEAL and s.winner == p or s.phase == BID and s.bids[p] is None
    if acting:
        c.marker((x0 + 6, y0 + 15))
    c.text((x0 + 18, y0 + 8), f"player_{p}" + (" (you)" if own else ""), 14)
    c.coin((x0 + 30, y0 + 48), 16, str(s.coins[p]), 12)
    c.text((x0 + 52, y0 + 34), "coins", 11, palette.MUTED)
    c.text((x0 + 52, y0 + 50), f"score {score_breakdown(s, p)['total']}", 13)
    # hand
    hx = x0 + 150
    c.text((hx, y0 + 6), "hand", 11, palette.MUTED)
    if own and s.phase != OVER:
        x = hx
        for colour in range(NUM_COLOURS):
            for _ in range(s.hands[p][colour]):
                c.card((x, y0 + 24, x + 24, y0 + 60), fill=palette.gem_colour(COLOURS[colour]))
                x += 27
        if x == hx:
            c.text((hx, y0 + 30), "empty", 12, palette.MUTED)
    else:
        hand = sum(s.hands[p])
        if hand:
            c.backs(hx, y0 + 24, hand, h=36)
        else:
            c.text((hx, y0 + 30), "empty", 12, palette.MUTED)
    # Collection
    cx = x0 + 320
    c.text((cx, y0 + 6), "Collection", 11, palette.MUTED)
    for colour, name in enumerate(COLOURS):
        x = cx + colour * 46
        count = s.collections[p][colour]
        c.gem((x + 11, y0 + 38), 10, palette.gem_colour(name) if count else palette.dim(palette.gem_colour(name), 0.35))
        c.text((x + 24, y0 + 31), f"x{count}", 12, palette.TEXT if count else palette.MUTED)
    # loans and investments
    lx = x0 + 560
    c.text((lx, y0 + 6), "loans / investments", 11, palette.MUTED)
    x = lx
    for amount in s.loans[p]:
        c.card((x, y0 + 24, x + 40, y0 + 60), fill=(250, 215, 205), title="Loan", lines=(f"-{amount}",), size=11)
        x += 44
    for amount, locked in s.investments[p]:
        c.card((x, y0 + 24, x + 54, y0 + 60), fill=(215, 235, 250), title=f"Invest {amount}",
               lines=(f"+{amount + locked}",), size=11)
        x += 58
    if x == lx:
        c.text((lx, y0 + 30), "none", 12, palette.MUTED)
    # this round's bidding: who is still to bid (public in turn order), and the viewer's own bid
    if s.phase == BID:
        if s.bids[p] is None:
            status = "to bid"
        elif own:
            status = f"your bid: {s.bids[p]}"
        else:
            status = "bid sealed"
        c.text((x1 - 12, y0 + 8), status, 12, palette.HIGHLIGHT if s.bids[p] is None else palette.MUTED, anchor="ra")
    elif s.phase == REVEAL and s.winner == p:
        c.text((x1 - 12, y0 + 8), "reveals a gem", 12, palette.HIGHLIGHT, anchor="ra")
    elif s.phase == OVER and p in results(s).winners:
        c.text((x1 - 12, y0 + 8), "wins", 14, palette.HIGHLIGHT, anchor="ra")


def scores(game, s) -> ScoreTable:
    """The final score of every player of a finished game and its parts (``game.results``)."""
    res = game.results(s)
    rows = []
    for p, b in enumerate(res.breakdown):
        rows.append([f"player_{p}", str(b["coins"]), f"{b['gems']:+d}", f"{b['missions']:+d}",
                     f"{b['investments']:+d}", f"{b['loans']:+d}", str(b["total"])])
    return ScoreTable(["player", "coins left", "gems", "missions", "investments", "loans repaid", "score"], rows,
                      list(res.winners),
                      [f"score = the sum of the row: coins left, gems (the Collection at value chart {s.chart}'s "
                       "final values), missions, investments (amount and locked bid back), loans repaid",
                       "the highest score wins; a tie shares the win"])


__all__ = ["draw", "scores", "size"]
