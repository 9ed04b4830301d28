"""Replay of a decision log: a saved game's final state rebuilt through the engine."""
from __future__ import annotations

from collections.abc import Sequence


def replay_game(game, seed: int, log: Sequence[Sequence[int]]):
    """Replay a saved game on ``game`` (built with the saved options): ``new_state(seed)``, then every
    non-forced ``[seat, action, forced]`` entry of ``log`` through ``game.apply``; the engine plays the
    forced ones. Raises ``ValueError`` when the replay's log differs from ``log`` or the game is unfinished."""
    state = game.new_state(seed)
    for k, (p, a, forced) in enumerate(log):
        if k < len(state.log):
            if list(state.log[k]) != [int(p), int(a), int(forced)]:
                raise ValueError(f"log[{k}] is {list(log[k])} but the replay has {state.log[k]}")
            continue
        if forced:
            raise ValueError(f"log[{k}] is marked forced, but the replay offers a choice there")
        game.apply(state, int(p), int(a))
    if [list(e) for e in state.log] != [[int(x) for x in e] for e in log]:
        raise ValueError(f"the replay logged {len(state.log)} decisions, the saved game {len(log)}")
    if not game.is_over(state):
        raise ValueError("the saved log ends before the game does")
    return state
