"""A readable text picture of a GEM state (everything public; the stacks show only their sizes)."""
from __future__ import annotations

from gemenvs.gem.rules import (
    BID, OVER, PASSED, PAY, REINVEST, TAKE, Config, GemState, capital, high_bid, score_breakdown,
)


def _card(cfg: Config, c: int) -> str:
    return f"#{c} {cfg.manifest.label(c)} ({cfg.card_value[c]}/{cfg.card_cost[c]})"


def title(s: GemState, cfg: Config) -> str:
    """One line saying where the game stands (round and phase), for the text and the pictures."""
    if s.phase == OVER:
        return f"GEM - game over after {cfg.num_rounds} rounds"
    what = {
        BID: f"auction, player_{s.current} to bid (opener player_{s.opener})",
        PAY: f"player_{s.winner} pays its bid: {s.owed} left",
        TAKE: f"player_{s.winner} takes a face-up card",
        REINVEST: f"reinvestment, player_{s.current} (credit {s.credit})",
    }[s.phase]
    return f"GEM - round {s.round}/{cfg.num_rounds}: {what}"


def render_text(s: GemState, cfg: Config, viewer: int | None = None) -> str:
    """Render the state as text; ``viewer`` (the seat to decide) is marked with ``>``."""
    n = cfg.n
    lines = [title(s, cfg)]
    stacks = " ".join(str(len(x)) for x in s.stacks) or "-"
    lines.append(f"face-down stacks: {stacks}")
    if s.face_up:
        lines.append("face up (INVESTED value / reinvestment cost): " + ", ".join(_card(cfg, c) for c in s.face_up))
    if s.phase == BID or (s.bids and s.phase in (PAY, TAKE)):
        shown = []
        for k in range(n):
            p = (s.opener + k) % n
            b = s.bids[p]
            shown.append(f"player_{p} " + ("-" if b is None else "pass" if b == PASSED else str(b)))
        high = high_bid(s)
        lines.append(f"bids: {', '.join(shown)}; highest {'none' if high is None else high}")
    scores = score_breakdown(s, cfg)
    for p in range(n):
        mark = ">" if viewer == p else " "
        coins = " ".join(str(v) if up else f"({v})" for v, up in zip(cfg.coin_values, s.coins[p]))
        held = [c for c, o in enumerate(s.owner) if o == p]
        inv = ", ".join(_card(cfg, c) for c in held if s.invested[c]) or "-"
        lev = ", ".join(_card(cfg, c) for c in held if not s.invested[c]) or "-"
        lines.append(f"{mark}player_{p}: capital {capital(s, cfg, p)}, coins {coins}, points {scores[p]['total']}")
        lines.append(f"    INVESTED: {inv}")
        lines.append(f"    LEVERAGED: {lev}")
    if s.phase == REINVEST and (s.paid or s.reinvested):
        lines.append(f"this phase: paid {s.paid or '-'}, reinvested {s.reinvested or '-'}")
    if s.phase == OVER:
        parts = [f"player_{p} {b['total']} ({b['gems']} gems + {b['majorities']} majorities)"
                 for p, b in enumerate(scores)]
        lines.append("final scores: " + ", ".join(parts))
    return "\n".join(lines)


__all__ = ["render_text"]
