"""A readable text picture of a Gem Jam table from one seat's side, and the game log as text."""
from __future__ import annotations

from gemenvs.gemjam.rules import Config, ShrineSet, complete_sets, is_complete


def _cards(cfg: Config, kinds) -> str:
    """``2x Ruby, Gold 3`` style list of kinds."""
    if not kinds:
        return "-"
    out, names = [], cfg.manifest.names
    for k in sorted(set(kinds)):
        c = list(kinds).count(k)
        out.append(f"{c}x {names[k]}" if c > 1 else names[k])
    return ", ".join(out)


def _set(cfg: Config, s: ShrineSet) -> str:
    tags = ("complete" if is_complete(cfg, s) else f"{len(s.gems)}/{cfg.set_size[s.gem_type]}") \
        + (", guarded" if s.guarded else "") + (", broken" if s.broken else "")
    return f"{cfg.manifest.type_names[s.gem_type]} [{tags}]: {_cards(cfg, s.gems)}"


def render_text(state, cfg: Config, viewer: int | None = None) -> str:
    """The table as ``viewer`` sees it (``None``: everything, for debugging)."""
    n = state.n
    lines = []
    if state.over:
        who = ", ".join(f"player_{w}" for w in state.winners)
        lines.append(f"Gem Jam - game over ({state.end_reason}); winner(s): {who}")
    else:
        d = state.decision
        lines.append(f"Gem Jam - round {state.round}, player_{state.turn}'s turn, {state.plays} play(s) left"
                     + (" [asleep]" if state.asleep else "") + (" [frozen]" if state.frozen else ""))
        if d is not None and (viewer is None or viewer == d.seat):
            lines.append(f"to decide: player_{d.seat} ({d.kind})")
    top = cfg.manifest.names[state.discard[-1]] if state.discard else "-"
    lines.append(f"Draw Pile {len(state.draw)} | Discard Pile {len(state.discard)} (top: {top}) "
                 f"| King's Vault {len(state.king)}"
                 + (" | recycled" if state.recycled else ""))
    if state.stack:
        lines.append("stack (top last): " + "; ".join(
            f"{cfg.manifest.names[e.kind]} by player_{e.caster}" + (" [cancelled]" if e.cancelled else "")
            + (f" x{2 ** e.doublings}" if e.doublings else "") for e in state.stack))
    for q in range(n):
        mark = ">" if (state.decision is not None and state.decision.seat == q and not state.over
                       and viewer in (None, q)) else " "
        lines.append(f"{mark} player_{q}: {complete_sets(state, cfg, q)} complete set(s), hand {len(state.hands[q])}, "
                     f"Vault {len(state.vaults[q])}")
        if viewer is None or viewer == q:
            lines.append(f"    hand: {_cards(cfg, state.hands[q])}")
            lines.append(f"    Vault: {_cards(cfg, state.vaults[q])}")
        for s in state.shrines[q]:
            lines.append(f"    {_set(cfg, s)}")
    if viewer is not None and state.aside is not None and state.aside.seat == viewer:
        lines.append(f"shown to you: {_cards(cfg, state.aside.cards)}")
    return "\n".join(lines)


#: event kind -> its sentence, from (cfg, the event's items after the kind, card names, gem type
#: names, a player's or the King's Vault's name); built once, not per event
_EVENT_TEXTS = {
    "turn": lambda cfg, a, names, types, pl: f"round {a[1]}: player_{a[0]}'s turn",
    "cast": lambda cfg, a, names, types, pl: f"player_{a[0]} casts {names[a[1]]}"
    + (f" at {pl(a[2])}" if a[2] >= 0 else "") + (f" ({types[a[3]]})" if a[3] >= 0 else ""),
    "resolve": lambda cfg, a, names, types, pl: f"{names[a[1]]} of player_{a[0]} resolves",
    "cancelled": lambda cfg, a, names, types, pl: f"{names[a[1]]} of player_{a[0]} is cancelled",
    "fail": lambda cfg, a, names, types, pl: f"{names[a[1]]} of player_{a[0]} fails (no valid target)",
    "recast": lambda cfg, a, names, types, pl: f"player_{a[0]} recasts {names[a[1]]}"
    + (f" at {pl(a[2])}" if a[2] >= 0 else ""),
    "jam": lambda cfg, a, names, types, pl: f"player_{a[0]}'s {types[a[1]]} Gem Jam demands {a[2]} gold",
    "paid": lambda cfg, a, names, types, pl: f"player_{a[0]} pays player_{a[1]} with {names[a[2]]}",
    "forgiven": lambda cfg, a, names, types, pl: f"player_{a[0]} cannot pay; {a[1]} gold forgiven",
    "discard": lambda cfg, a, names, types, pl: f"player_{a[0]} discards {names[a[1]]}",
    "draws": lambda cfg, a, names, types, pl: f"player_{a[0]} draws {a[1]}",
    "gem": lambda cfg, a, names, types, pl: f"player_{a[0]} places {names[a[1]]} as {types[a[2]]}",
    "bank": lambda cfg, a, names, types, pl: f"player_{a[0]} banks a card",
    "bottom": lambda cfg, a, names, types, pl: f"player_{a[0]} puts a card under the Draw Pile",
    "move": lambda cfg, a, names, types, pl: f"player_{a[0]} moves {names[a[1]]} (as {types[a[2]]})",
    "swap": lambda cfg, a, names, types, pl: f"player_{a[0]} swaps {names[a[1]]} and {names[a[2]]}",
    "forfeit": lambda cfg, a, names, types, pl: f"player_{a[0]} forfeits {_cards(cfg, a[1])} to the King's Vault",
    "guard": lambda cfg, a, names, types, pl: f"player_{a[0]} guards a set",
    "returned": lambda cfg, a, names, types, pl: f"player_{a[0]} returns {names[a[1]]} to hand",
    "reanimate": lambda cfg, a, names, types, pl: f"player_{a[0]} takes {names[a[1]]} from the Discard Pile",
    "rebirth": lambda cfg, a, names, types, pl: f"player_{a[0]} takes {names[a[1]]} at random from the Discard Pile",
    "recycle": lambda cfg, a, names, types, pl: f"the Discard Pile ({a[0]} cards) becomes the Draw Pile",
    "timer": lambda cfg, a, names, types, pl:
    f"player_{a[0]} applies the timer penalty: player_{a[1]} discards {names[a[2]]}",
    "timer_declined": lambda cfg, a, names, types, pl: f"player_{a[0]} declines the timer penalty on player_{a[1]}",
    "shown": lambda cfg, a, names, types, pl: f"you see {_cards(cfg, a[1])} from {pl(a[0])}",
    "shown_vault": lambda cfg, a, names, types, pl: f"you see {pl(a[0])}'s Vault: {_cards(cfg, a[1])}",
    "eye_see": lambda cfg, a, names, types, pl: f"player_{a[0]}'s Eye See! on player_{a[1]} is done",
    "eye_see_keep": lambda cfg, a, names, types, pl: f"player_{a[0]} keeps {names[a[2]]} from player_{a[1]}'s hand",
    "goblin": lambda cfg, a, names, types, pl: f"player_{a[0]} takes a card from {pl(a[1])}",
    "goblin_took": lambda cfg, a, names, types, pl: f"player_{a[0]} took {names[a[2]]} from your Vault",
    "basilisk": lambda cfg, a, names, types, pl: f"player_{a[0]} splits its Basilisk cards",
    "basilisk_took": lambda cfg, a, names, types, pl: f"player_{a[0]} took {_cards(cfg, a[2])} from your Vault",
    "siren": lambda cfg, a, names, types, pl: f"Siren's Call: player_{a[0]} names player_{a[1]}",
    "siren_loser": lambda cfg, a, names, types, pl: f"Siren's Call losing penalty: player_{a[0]}",
    "end": lambda cfg, a, names, types, pl: f"game over ({a[0]}); winner(s): {', '.join(f'player_{w}' for w in a[1])}",
}


def event_text(cfg: Config, ev: list) -> str:
    """One game-log event as a sentence."""
    kind, a = ev[1], ev[2:]
    fn = _EVENT_TEXTS.get(kind)
    if fn is None:
        return f"{kind} {a}"

    def pl(q):
        return "the King's Vault" if q == cfg.num_players else f"player_{q}"

    return fn(cfg, a, cfg.manifest.names, cfg.manifest.type_names, pl)
