"""``resample_hidden(state, observer, rng)`` draws from what the observer sees and from ``rng`` alone.

T = resample_hidden(S, seat, rng_a) is a state the seat cannot tell from S, so resampling S and T
with equal Generators must give equal states; and the search agent (agents/search.py), which sees
the true state only through ``resample_hidden``, must decide the same from S and from T.
"""
from __future__ import annotations

import numpy as np
import pytest

from gemenvs.agents.search import ISMCTSAgent
from gemenvs.gem.game import Gem
from gemenvs.gemjam.game import GemJam
from gemenvs.megagem.game import MegaGem
from test_contract import random_states  # seeded random games' states, every k-th decision and the last

GAMES = ([(Gem, n, {}) for n in Gem.player_counts]
         + [(GemJam, n, {}) for n in GemJam.player_counts]
         + [(MegaGem, n, {}) for n in MegaGem.player_counts]
         + [(MegaGem, 4, {"public_bids": False})])


def _id(case) -> str:
    cls, n, kw = case
    return f"{cls.__name__}-{n}p" + "".join(f"-{k}={v}" for k, v in kw.items())


@pytest.mark.parametrize("case", GAMES, ids=_id)
def test_resampling_indistinguishable_states_gives_the_same_state(case):
    cls, n, kw = case
    game = cls(num_players=n, **kw)
    rng_a = np.random.default_rng(1)
    checked = differs = 0
    for i, s in enumerate(random_states(game, seed=3 + n, games=2, every=5 if cls is GemJam else 3)):
        observer = i % n
        t = game.resample_hidden(s, observer, rng_a)
        np.testing.assert_array_equal(game.observe(t, observer), game.observe(s, observer))
        differs += t != s
        for k in (10 * i, 10 * i + 1):
            from_s = game.resample_hidden(s, observer, np.random.default_rng(k))
            from_t = game.resample_hidden(t, observer, np.random.default_rng(k))
            if from_s != from_t:
                ds, dt = from_s.to_dict(), from_t.to_dict()
                fields = [f for f in ds if ds[f] != dt[f]]
                pytest.fail(f"state {i} (log length {len(s.log)}), observer {observer}, Generator({k}): "
                            f"the resamples of S and of T differ in {fields}")
        checked += 1
    assert checked >= 10 and differs >= 3, (checked, differs)


@pytest.mark.parametrize("cls,n", [(Gem, 3), (GemJam, 3)], ids=["gem", "gemjam"])
def test_search_agent_decides_the_same_after_a_redeal(cls, n):
    game = cls(num_players=n)
    agent = ISMCTSAgent(game, simulations=6, determinizations=2, rollout="random", seed=7)
    checked = differs = 0
    for k, s in enumerate(random_states(game, seed=11, games=1, every=9 if cls is Gem else 15)):
        if game.is_over(s):
            continue
        p = game.to_act(s)[0]
        if game.legal_actions(s, p).size < 2:
            continue
        agent.reset(seed=100 + k)
        action, stats = agent.act_with_state(s, p), agent.last_search
        other = game.resample_hidden(s, p, np.random.default_rng(5000 + k))
        differs += other != s
        agent.reset(seed=100 + k)
        assert agent.act_with_state(other, p) == action, k
        assert agent.last_search == stats, k
        checked += 1
        if checked == 6:
            break
    assert checked >= 4 and differs >= 3, (checked, differs)
