"""``value_chart="random"``: each game draws its chart A-E from its seed (clarification 1), in the scalar
engine and, byte for byte, in the batched engine; the chart in play is public (one-hot in every observation)."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from gemenvs.megagem.batched import BatchedMegaGem
from gemenvs.megagem.data import CHART_NAMES
from gemenvs.megagem.game import MegaGem


def test_the_option_is_validated():
    assert MegaGem(value_chart="random").options()["value_chart"] == "random"
    for bad in ("F", "a", "", None, 1):
        with pytest.raises(ValueError, match="value_chart"):
            MegaGem(value_chart=bad)
    with pytest.raises(ValueError, match="value_chart"):
        BatchedMegaGem(2, seed=0, value_chart="Random")


def test_each_game_draws_its_chart_from_its_seed():
    game = MegaGem(num_players=4, value_chart="random")
    charts = [game.new_state(seed).chart for seed in range(300)]
    assert charts == [game.new_state(seed).chart for seed in range(300)]  # deterministic per seed
    counts = Counter(charts)
    assert set(counts) == set(CHART_NAMES) and min(counts.values()) >= 40  # about 60 each
    state = game.new_state(7)
    assert state.to_dict()["chart"] == state.chart and game.state_from_dict(state.to_dict()) == state
    # the chart is public: every seat's observation shows it, one-hot in A-E order
    for p in range(4):
        onehot = game.spec.decode(game.observe(state, p))["value_chart"]
        assert np.flatnonzero(onehot).tolist() == [CHART_NAMES.index(state.chart)]
    # a fixed chart is that chart whatever the seed, and the rest of the deal does not move with it
    fixed = MegaGem(num_players=4, value_chart="C").new_state(7)
    assert fixed.chart == "C" and fixed.hands == MegaGem(num_players=4, value_chart="E").new_state(7).hands


@pytest.mark.parametrize("players", [3, 4, 5])
def test_batched_engine_draws_the_same_charts_and_plays_the_same_games(players):
    game = MegaGem(num_players=players, value_chart="random")
    eng = BatchedMegaGem(64, seed=players, auto_reset=False, value_chart="random", num_players=players)
    states = [game.new_state(int(s)) for s in eng.seeds]
    assert [CHART_NAMES[int(c)] for c in eng.chart] == [s.chart for s in states]
    assert len({s.chart for s in states}) == 5
    rng = np.random.default_rng(players)
    over = np.zeros(64, np.bool_)
    while not over.all():
        obs, masks = eng.observations(), eng.action_masks()
        # a game at a round whose every bid is forced has no seat to act (the scalar engine is past it)
        waiting = masks.any(axis=(1, 2))
        for b, s in enumerate(states):
            if waiting[b] or over[b]:
                for p in range(players):
                    assert obs[b, p].tobytes() == game.observe(s, p).tobytes(), f"game {b} seat {p}"
        actions = np.full(masks.shape[:2], -1, np.int64)
        for b, p in zip(*np.nonzero(masks.any(axis=2))):
            actions[b, p] = rng.choice(np.flatnonzero(masks[b, p]))
        result = eng.step(actions)
        over |= result.done
        for b, s in enumerate(states):
            if waiting[b]:
                for p in game.to_act(s):
                    game.apply_legal(s, p, int(actions[b, p]))
            if result.done[b]:
                assert game.is_over(s) and result.scores[b].tolist() == game.results(s).scores
