"""What a spell may target when cast, and the stack entry its chosen targets make.

Targets are chosen at cast and checked again at resolution (docs/gemjam.md, "Spells: casting and
the stack"). A composite play answer ends with the targets' action ids (its *tail*):
:func:`target_tails` lists every legal tail of a spell, :func:`entry_with_targets` turns the one
chosen into a stack entry.
"""
from __future__ import annotations

from gemenvs.gemjam.rules import MAX_SETS, StackEntry, is_complete


def opponents(state, p: int) -> list[int]:
    """``p``'s opponents clockwise from its left."""
    return [(p + j) % state.n for j in range(1, state.n)]


def target_player_id(cfg, p: int, q: int) -> int:
    """The ``target_player`` action id naming ``q`` from ``p``'s seat."""
    return cfg.TARGET_PLAYER + (q - p) % cfg.num_players


def jam_types(state, cfg, p: int) -> list[int]:
    """Types ``p`` may cast Gem Jam for: a Basic or Dual Gem of the type in its Shrine
    (docs/gemjam.md "Gem Jam and payments")."""
    m = cfg.manifest
    out = set()
    for s in state.shrines[p]:
        if any(m.is_basic[k] or m.is_dual[k] for k in s.gems):
            out.add(s.gem_type)
    return sorted(out)


def addressable_sets(state, cfg, q: int, want) -> list[int]:
    """Slots of ``q``'s sets for which ``want(set)`` holds (addressable slots only; the caller has
    arranged the Shrines, :func:`gemenvs.gemjam.rules.arrange`)."""
    return [i for i, s in enumerate(state.shrines[q][:MAX_SETS]) if want(s)]


def unprotected_complete(cfg):
    """A test of a set: completed and unprotected (Dragon's Loot, Armageddon, Gem Guardian)."""
    return lambda s: not s.guarded and is_complete(cfg, s)


def incomplete(cfg):
    """A test of a set: not completed (Meteor Strike, Rat!, Switch, Forced Wager)."""
    return lambda s: not is_complete(cfg, s)


def unprotected_with_basic(cfg):
    """A test of a set: unprotected and holding a Basic of its type (Tsunami, Golem Grab)."""
    return lambda s: not s.guarded and cfg.basic_of[s.gem_type] in s.gems


def target_tails(state, cfg, p: int, kind: int, recast: bool = False) -> list[list[int]]:
    """Every legal choice of targets for ``p`` casting ``kind`` (empty list: not castable now).
    ``recast``: a Chaos Cube player recasting, its own gems excluded from the targeted side
    (docs/gemjam.md "Spells: casting and the stack")."""
    eff = cfg.effect[kind]
    n = state.n
    opps = opponents(state, p)

    def at(q: int) -> int:
        return target_player_id(cfg, p, q)

    if eff == "any_gem_jam":
        return [[cfg.GEM_TYPE + t] for t in jam_types(state, cfg, p)]
    if eff == "paired_gem_jam":
        ok = set(jam_types(state, cfg, p))
        return [[cfg.GEM_TYPE + t, at(q)] for t in cfg.manifest.types[kind] if t in ok for q in opps]
    if eff in ("double_trouble", "shakedown", "howling_fear"):
        return [[at(q)] for q in opps]
    if eff == "eye_see":
        return [[at(q)] for q in opps if state.hands[q]]
    if eff == "sirens_call":
        return [[at(q)] for q in range(n)]
    if eff in ("kings_ransom", "take_two", "lucky_draw", "fire_reborn", "natures_rebirth", "sleep_spell", "freeze"):
        return [[]]
    if eff == "reanimate":
        return [[]] if state.discard else []
    if eff in ("dragons_loot", "armageddon"):
        return [[at(q), cfg.SET + i] for q in opps
                for i in addressable_sets(state, cfg, q, unprotected_complete(cfg))]
    if eff in ("tsunami", "golem_grab"):
        return [[at(q), cfg.SET + i] for q in opps
                for i in addressable_sets(state, cfg, q, unprotected_with_basic(cfg))]
    if eff in ("meteor_strike", "rat", "forced_wager"):
        who = opps if (eff != "forced_wager" or recast) else [p] + opps  # docs/gemjam.md "Spells, one by one"
        return [[at(q), cfg.SET + i, cfg.CARD + k] for q in who
                for i in addressable_sets(state, cfg, q, incomplete(cfg))
                for k in sorted(set(state.shrines[q][i].gems))]
    if eff == "switch":
        mine = [[cfg.SET + i, cfg.CARD + k] for i in addressable_sets(state, cfg, p, incomplete(cfg))
                for k in sorted(set(state.shrines[p][i].gems))]
        theirs = [[at(q), cfg.SET + i, cfg.CARD + k] for q in opps
                  for i in addressable_sets(state, cfg, q, incomplete(cfg))
                  for k in sorted(set(state.shrines[q][i].gems))]
        return [a + b for a in mine for b in theirs]
    if eff == "greedy_goblin":
        out = [[at(q)] for q in range(n) if state.vaults[q]]
        return out + ([[cfg.KING_VAULT]] if state.king else [])
    if eff == "basilisk":
        out = [[at(q)] for q in opps if state.vaults[q]]
        return out + ([[cfg.KING_VAULT]] if state.king else [])
    if eff == "gem_guardian":
        return [[cfg.SET + i] for i in addressable_sets(state, cfg, p, unprotected_complete(cfg))]
    return []  # reactive spells are cast only in a window (docs/gemjam.md "Spells: casting and the stack")


def entry_with_targets(state, cfg, p: int, kind: int, tail: list[int], entry: StackEntry | None = None) -> StackEntry:
    """The stack entry of ``p`` casting ``kind`` at the targets ``tail`` (action ids)."""
    e = entry if entry is not None else StackEntry(kind, p)
    e.caster = p
    n = state.n
    if cfg.effect[kind] == "switch":
        e.own_set = state.shrines[p][tail[0] - cfg.SET].set_id
        e.own_gem = tail[1] - cfg.CARD
        tail = tail[2:]
    for a in tail:
        if cfg.GEM_TYPE <= a < cfg.GEM_TYPE + cfg.num_types:
            e.gem_type = a - cfg.GEM_TYPE
        elif cfg.TARGET_PLAYER <= a < cfg.TARGET_PLAYER + n:
            e.target_player = e.vault = (p + a - cfg.TARGET_PLAYER) % n
        elif a == cfg.KING_VAULT:
            e.vault = n
        elif cfg.SET <= a < cfg.SET + MAX_SETS:
            owner = e.target_player if e.target_player >= 0 else p
            e.target_set = state.shrines[owner][a - cfg.SET].set_id
        elif cfg.CARD <= a < cfg.CARD + cfg.num_kinds:
            e.target_gem = a - cfg.CARD
    return e


__all__ = ["addressable_sets", "entry_with_targets", "jam_types", "opponents", "target_player_id",
           "target_tails"]
