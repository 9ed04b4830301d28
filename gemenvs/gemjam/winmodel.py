"""Gem Jam's win model: each player's chance to win from a position, by a conditional logit over a few
facts of each player (its Shrine, hand, Vault and place in the turn order), fitted on rule-agent games.

Not part of the rules: a position evaluation for search (the lookahead agent scores the positions it
reaches with it) and a potential for reward shaping (``GemJam.win_chance``;
``SingleAgentEnv(potential="win_chance")``). Player ``q`` wins with probability
``exp(w . f_q) / sum_r exp(w . f_r)``, ``f`` the :data:`VALUE_FEATURES` of :func:`player_features`
and ``w`` :data:`VALUE_WEIGHTS`, fitted by maximum likelihood on the positions at turn starts of
2,500 games of three GemJamRuleAgents (``python benchmarks/gemjam_lookahead.py --fit 2500``).
Fitted and measured for 3 players. Pure Python on the engine state.
"""
from __future__ import annotations

import numpy as np

#: what :func:`player_features` measures of one player: its Shrine, hand and Vault, who moves next, its lead in
#: completed sets
VALUE_FEATURES = ("complete", "three_sets", "four_sets", "guarded", "one_short", "one_short_no_basic", "two_short",
                  "fill", "hand", "vault", "moves_next", "moves_second",
                  "hand_gems", "hand_reactive", "hand_attack", "hand_guardian", "hand_jam", "vault_gold",
                  "two_sets", "lead")
#: weights of the win model over :data:`VALUE_FEATURES` (a conditional logit: player q wins with probability
#: ``exp(w . f_q) / sum_r exp(w . f_r)``), fitted on positions at turn starts of rule-agent games
#: (2,500 games, ``python benchmarks/gemjam_lookahead.py --fit 2500``)
VALUE_WEIGHTS = (0.613, 0.698, 2.627, 0.240, 0.041, 0.140, -0.054, 0.412, 0.011, 0.027, 0.299, 0.161,
                 0.024, 0.100, 0.092, 0.064, 0.081, 0.027, 0.250, -0.153)


#: card kind groups counted in a hand by :func:`player_features`
_HAND_GROUPS = (("counter_spell", "diabolic_denial", "chaos_cube"),
                ("dragons_loot", "armageddon", "golem_grab", "tsunami"),
                ("gem_guardian",), ("any_gem_jam", "paired_gem_jam"))
_KIND_TABLES: dict = {}


def _kind_tables(cfg) -> tuple:
    """Per card kind: is a gem, its hand group (index into ``_HAND_GROUPS`` or -1), its gold (cached per manifest)."""
    m = cfg.manifest
    if id(m) not in _KIND_TABLES:
        group = [next((i for i, g in enumerate(_HAND_GROUPS) if e in g), -1) for e in m.effect]
        _KIND_TABLES[id(m)] = (m, [bool(x) for x in m.is_gem], group, [int(x) for x in m.gold])
    return _KIND_TABLES[id(m)][1:]


def player_features(state, cfg, q: int) -> list[float]:
    """:data:`VALUE_FEATURES` of player ``q`` in an engine ``state``: its Shrine's sets, who moves next
    (``state.turn``), and what its hand and Vault hold. Called by the lookahead agent only on states
    redrawn from its own seat, where other players' hands and Vaults are guesses consistent with what
    it sees. As a shaping potential it reads the true state."""
    complete = guarded = one = one_nb = two = 0
    fill = 0.0
    size, basic_of = cfg.set_size, cfg.basic_of
    for s in state.shrines[q]:
        t, gems = s.gem_type, s.gems
        need, has_basic = size[t], basic_of[t] in gems
        if len(gems) == need and has_basic:
            complete += 1
            guarded += s.guarded != 0
            continue
        short = need - len(gems)
        if has_basic:
            one += short == 1
            two += short == 2
            fill += len(gems) / need
        else:
            one_nb += short <= 1
    ahead = (q - state.turn) % state.n
    is_gem, group, gold = _kind_tables(cfg)
    counts = [0, 0, 0, 0]
    gems = 0
    for k in state.hands[q]:
        gems += is_gem[k]
        if group[k] >= 0:
            counts[group[k]] += 1
    others = max(sum(1 for s in state.shrines[r] if len(s.gems) == size[s.gem_type] and basic_of[s.gem_type] in s.gems)
                 for r in range(state.n) if r != q)
    return [complete, complete >= 3, complete >= 4, guarded, one, one_nb, two, fill,
            len(state.hands[q]), len(state.vaults[q]), ahead == 0, ahead == 1,
            gems, *counts, sum(gold[k] for k in state.vaults[q]) / 10, complete >= 2, complete - others]


def win_chances(state, cfg, weights=VALUE_WEIGHTS) -> np.ndarray:
    """Each player's chance to win from ``state`` by the win model (the exact result once the game is over)."""
    n = state.n
    if state.over:
        out = np.zeros(n)
        out[state.winners] = 1.0 / len(state.winners)
        return out
    u = np.array([player_features(state, cfg, q) for q in range(n)], float) @ np.asarray(weights, float)
    e = np.exp(u - u.max())
    return e / e.sum()


__all__ = ["VALUE_FEATURES", "VALUE_WEIGHTS", "player_features", "win_chances"]
