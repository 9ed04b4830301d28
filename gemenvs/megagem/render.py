"""A readable text picture of a MegaGem state: public information plus one viewer's hand."""
from __future__ import annotations

from gemenvs.megagem.data import AUCTION_KINDS, COLOURS, MISSIONS
from gemenvs.megagem.rules import BID, OVER, REVEAL, MegaGemState, gem_value, score_breakdown


def render_text(s: MegaGemState, viewer: int | None = None, public_bids: bool = True) -> str:
    """Render the public state as tables, and ``viewer``'s hand when a viewer is given."""
    n = s.num_players
    lines = []
    if s.phase == OVER:
        lines.append(f"MegaGem - game over after {s.round} auctions (chart {s.chart})")
    else:
        card = AUCTION_KINDS[s.auction_card][0]
        what = "sealed bids" if s.phase == BID else f"player_{s.winner} reveals a gem"
        lines.append(f"MegaGem - round {s.round}: {card} - {what} (chart {s.chart})")
    lines.append("colour   display  value  row")
    for c, name in enumerate(COLOURS):
        row = "".join("*" if g == c else "" for g in s.gem_row)
        lines.append(f"{name:<8} {s.display[c]:>7}  {gem_value(s.chart, s.display[c]):>5}  {row}")
    lines.append(f"gem row: {', '.join(COLOURS[c] for c in s.gem_row) or '-'}; gem deck: {len(s.gem_deck)} left; "
                 f"auction deck: {len(s.auction_deck)} left")
    head = "player     coins  hand  " + " ".join(f"{c[:4]:>4}" for c in COLOURS) + "  loans  invest  score"
    lines.append(head)
    for p in range(n):
        cols = " ".join(f"{x:>4}" for x in s.collections[p])
        inv = sum(a + b for a, b in s.investments[p])
        mark = ">" if viewer == p else " "
        lines.append(f"{mark}player_{p}  {s.coins[p]:>5}  {sum(s.hands[p]):>4}  {cols}  {sum(s.loans[p]):>5}  "
                     f"{inv:>6}  {score_breakdown(s, p)['total']:>5}")
    for m, o in zip(s.missions, s.mission_owner):
        who = "open" if o < 0 else f"claimed by player_{o}"
        lines.append(f"mission: {MISSIONS[m][0]} ({MISSIONS[m][1]}) - {who}")
    if s.history:
        last = s.history[-1]
        bids = f", bids {last.bids}" if public_bids else ""
        lines.append(f"last auction: {AUCTION_KINDS[last.card][0]} won by player_{last.winner}{bids}")
    if viewer is not None and s.phase != OVER:
        hand = ", ".join(f"{COLOURS[c]} x{k}" for c, k in enumerate(s.hands[viewer]) if k) or "empty"
        lines.append(f"player_{viewer}'s hand: {hand}")
    if s.phase == REVEAL and viewer == s.winner:
        lines.append("choose a colour from your hand to reveal")
    if s.phase == OVER:
        lines.append("final scores: " + ", ".join(f"player_{p} {score_breakdown(s, p)['total']}" for p in range(n)))
    return "\n".join(lines)


__all__ = ["render_text"]
