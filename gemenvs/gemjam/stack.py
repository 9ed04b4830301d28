"""The response stack: casting, response windows, Counter Spell / Diabolic Denial / Chaos Cube
reactions, cancelling, Chaos Cube recasting, Double Trouble attached to a Gem Jam, and
resolution from the top (docs/gemjam.md, "Spells: casting and the stack"). A spell on the stack is
a :class:`~gemenvs.gemjam.rules.StackEntry`; its targets come from :mod:`gemenvs.gemjam.targets`,
the cards' own effects from :mod:`gemenvs.gemjam.spells` through
:data:`gemenvs.gemjam.steps.EFFECTS`.
"""
from __future__ import annotations

from gemenvs.gemjam import rules
from gemenvs.gemjam.data import GEM_TARGETING
from gemenvs.gemjam.rules import StackEntry, ask, event, hand_remove, move_rebirth
from gemenvs.gemjam.targets import entry_with_targets, target_tails


def cast(state, cfg, p: int, entry: StackEntry) -> None:
    """Put a spell from ``p``'s hand on the stack and open its response window; of a
    Nature's Rebirth, the copy that has not granted its play this turn, if any (docs/gemjam.md
    "Spells: casting and the stack", "Engine choices")."""
    move_rebirth(state, cfg, entry.kind, f"hand{p}", "stack", "unspent")
    hand_remove(state, p, entry.kind)
    state.stack.append(entry)
    event(state, "cast", p, entry.kind, entry.target_player, entry.gem_type)
    state.tasks.append(["window", 0])


def responders(state, caster: int) -> list[int]:
    """Who may answer a spell: every player but its caster, clockwise from the turn player (docs/gemjam.md "Spells:
    casting and the stack")."""
    n = state.n
    return [q for q in ((state.turn + j) % n for j in range(n)) if q != caster]


def targets_gems_of(cfg, e: StackEntry, q: int) -> bool:
    """Whether stack entry ``e`` is a spell that targets ``q``'s gems or sets (Chaos Cube, docs/gemjam.md "Spells:
    casting and the stack")."""
    return cfg.effect[e.kind] in GEM_TARGETING and e.target_player == q


def react_cands(state, cfg, q: int, ctx=None) -> list:
    """``q``'s answers in a window: pass, or a reaction it holds (none while asleep in its own turn)."""
    out = [[cfg.PASS]]
    if state.asleep and q == state.turn:
        return out
    top = state.stack[-1]
    for k in sorted(set(state.hands[q])):
        eff = cfg.effect[k]
        if eff in ("counter_spell", "diabolic_denial") or (eff == "chaos_cube" and targets_gems_of(cfg, top, q)):
            out.append([cfg.PLAY + k])
    return out


def window_step(state, cfg, t):
    """``["window", i]``: the i-th responder to the top spell decides; after the last, resolve."""
    order = responders(state, state.stack[-1].caster)
    _, i = t
    if i >= len(order):
        state.tasks.append(["resolve"])
        return
    q = order[i]
    ask(state, cfg, q, "react", react_cands(state, cfg, q), {"responder": i})


def finish_react(state, cfg, p, pre, ctx):
    if pre[0] == cfg.PASS:
        state.tasks.append(["window", ctx["responder"] + 1])
        return
    # the first to react opens a new window; the spell below can no longer be answered (docs/gemjam.md "Spells:
    # casting and the stack")
    cast(state, cfg, p, StackEntry(pre[0] - cfg.PLAY, p))


def may_double(state, cfg, e: StackEntry) -> bool:
    """Whether the caster of a Gem Jam about to resolve may attach a Double Trouble (docs/gemjam.md "Spells: casting
    and the stack")."""
    c = e.caster
    return c == state.turn and state.plays > 0 and not state.asleep and cfg.manifest.double_trouble in state.hands[c]


def double_cands(state, cfg, p: int, ctx=None) -> list:
    """The Gem Jam caster's answers before it resolves: pass, or attach a Double Trouble."""
    e = state.stack[-1]
    return [[cfg.PASS]] + ([[cfg.PLAY + cfg.manifest.double_trouble]] if may_double(state, cfg, e) else [])


def resolve_top(state, cfg) -> StackEntry | None:
    """The ``["resolve"]`` step up to the effect: resolve the top of the stack, the entries below
    following without new windows (docs/gemjam.md "Spells: casting and the stack"). Returns the entry whose card's
    effect applies now
    (the caller, :func:`gemenvs.gemjam.steps.resolve_step`, applies it), or None."""
    if not state.stack:
        return None
    e = state.stack[-1]
    if not e.cancelled and not e.double_declined and cfg.effect[e.kind] in ("any_gem_jam", "paired_gem_jam"):
        # always asked (a forced pass when it holds no Double Trouble), so that nobody learns
        # from the question itself whether the caster holds one (docs/gemjam.md "Spells: casting and the stack")
        ask(state, cfg, e.caster, "double", double_cands(state, cfg, e.caster))
        return None
    state.stack.pop()
    state.resolving.append(e.kind)
    state.tasks.append(["resolve"])
    eff = cfg.effect[e.kind]
    if e.cancelled:
        event(state, "cancelled", e.caster, e.kind)
        state.tasks.append(["to_discard", e.kind])
        return None
    if eff not in ("gem_guardian", "chaos_cube"):
        state.tasks.append(["to_discard", e.kind])
    event(state, "resolve", e.caster, e.kind)
    return e


def finish_double(state, cfg, p, pre, ctx):
    e = state.stack[-1]
    if pre[0] == cfg.PASS:
        e.double_declined = 1
        state.tasks.append(["resolve"])
        return
    # Double Trouble attached to the Gem Jam uses a play and has its own window (docs/gemjam.md "Spells: casting and
    # the stack")
    state.plays -= 1
    dt = StackEntry(cfg.manifest.double_trouble, p)
    dt.attached = 1
    cast(state, cfg, p, dt)


def cancel_top(state) -> None:
    """Counter Spell / Diabolic Denial: cancel the spell they answered, now on top of the stack;
    it goes to the Discard Pile when its turn to resolve comes (docs/gemjam.md "Spells: casting and the stack")."""
    if state.stack:
        state.stack[-1].cancelled = 1


def recast(state, cfg, cube: StackEntry) -> None:
    """A resolving Chaos Cube's player takes over the spell below and chooses its new targets now
    (its own gems excluded from the targeted side); with none the stolen spell fails. The recast
    is that player's, uses no play and gets its own window (docs/gemjam.md "Spells: casting and the stack")."""
    c = cube.caster
    stolen = state.stack[-1]
    rules.arrange(state, cfg)
    tails = target_tails(state, cfg, c, stolen.kind, recast=True)
    if not tails:
        state.stack.pop()
        state.resolving.remove(cube.kind)
        state.discard.append(cube.kind)
        state.discard.append(stolen.kind)
        event(state, "fail", c, stolen.kind)
        return
    ask(state, cfg, c, "chaos_cube", tails, {"chaos_cube": cube.kind})


def finish_chaos_cube(state, cfg, p, pre, ctx):
    stolen = state.stack[-1]
    stolen.clear_targets()
    entry_with_targets(state, cfg, p, stolen.kind, pre, stolen)
    event(state, "recast", p, stolen.kind, stolen.target_player)
    state.tasks.append(["window", 0])
    state.tasks.append(["to_discard", ctx["chaos_cube"]])


def to_discard_step(state, cfg, t):
    """A resolved (or cancelled, or failed) spell goes to the Discard Pile (docs/gemjam.md "Spells: casting and the
    stack")."""
    _, kind = t
    move_rebirth(state, cfg, kind, "stack", "discard", "spent")
    state.resolving.remove(kind)
    state.discard.append(kind)

