"""ISMCTSAgent (agents/search.py) and the match runner's protocol for search agents.

The search agent is handed the engine state, but may use only what its seat can see: the main
test re-deals the hidden part of the true state (``resample_hidden`` from the agent's seat with
another RNG) and requires the same decision, and the same search statistics, from the same seed.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from gemenvs.agents.base import decide
from gemenvs.arena.match import TimedAgent, play_engine_game, play_game
from gemenvs.agents.megagem import HeuristicBidder
from gemenvs.agents.random_agent import RandomAgent
from gemenvs.agents.registry import make_agent
from gemenvs.agents.search import ISMCTSAgent
from gemenvs.gem.game import Gem
from gemenvs.gemjam.game import GemJam
from gemenvs import megagem_v0
from gemenvs.megagem.game import MegaGem


def random_states(game, seed: int, every: int = 5):
    """Non-terminal states of one random game, every ``every``-th decision (bids and reveals)."""
    rnd = random.Random(seed)
    s = game.new_state(seed)
    out = []
    while not game.is_over(s):
        if len(s.log) % every == 0:
            out.append(s.copy())
        p = rnd.choice(game.to_act(s))
        game.apply(s, p, rnd.choice(list(game.legal_actions(s, p))))
    return out


def opponents(game, k: int):
    return [RandomAgent(spec=game.spec, action_spec=game.action_spec) for _ in range(k)]


@pytest.mark.parametrize("public_bids,rollout", [(True, "heuristic"), (False, "random")])
def test_same_decision_when_the_hidden_part_is_redealt(public_bids, rollout):
    """Other hands, deck orders and sealed (or private) bids redrawn: the seat cannot tell, nor can the agent."""
    game = MegaGem(num_players=4, value_chart="random", public_bids=public_bids)
    agent = ISMCTSAgent(game, simulations=12, determinizations=4, rollout=rollout, seed=7)
    checked = differs = 0
    for k, s in enumerate(random_states(game, 11 + public_bids, every=7)):
        p = game.to_act(s)[0]
        if game.legal_actions(s, p).size < 2:
            continue
        before = s.to_dict()
        agent.reset(seed=100 + k)
        action, stats = agent.act_with_state(s, p, game.observe(s, p), game.legal_mask(s, p)), agent.last_search
        assert s.to_dict() == before, "the search changed the state it was handed"
        other = game.resample_hidden(s, p, np.random.default_rng(5000 + k))
        differs += other.hands != s.hands
        agent.reset(seed=100 + k)
        assert agent.act_with_state(other, p) == action
        assert agent.last_search == stats
        checked += 1
    assert checked >= 5 and differs >= 3


def test_legal_decisions_through_the_match_runner_and_the_aec_env():
    """Whole games: every decision is checked legal by ``game.apply`` / the env (illegal_action="raise")."""
    game = MegaGem(num_players=3)
    agent = TimedAgent(ISMCTSAgent(game, simulations=3, rollout="random", seed=1))
    for seed in range(2):
        s = play_engine_game(game, [*opponents(game, 1), agent, *opponents(game, 1)], seed=seed)
        assert game.is_over(s)
    assert agent.decisions > 10 and agent.needs_state
    env = megagem_v0.env(num_players=3)
    search = make_agent("megagem", "ismcts", env, seed=2, simulations=3, rollout="random")
    final = play_game(env, [search, *opponents(game, 2)], seed=4)
    assert set(final) == set(env.possible_agents)


def test_heuristic_rollout_and_budgets():
    """``simulations`` playouts per decision (the root visits add up), ``determinizations`` samples."""
    game = MegaGem(num_players=4)
    s = random_states(game, 3, every=4)[2]
    p = game.to_act(s)[0]
    calls = []
    resample = game.resample_hidden
    game.resample_hidden = lambda *a: calls.append(1) or resample(*a)
    for sims, dets, expected in ((9, 3, 3), (6, None, 6)):
        calls.clear()
        agent = ISMCTSAgent(game, simulations=sims, determinizations=dets, rollout="heuristic", seed=0)
        action = agent.act_with_state(s, p)
        assert game.legal_mask(s, p)[action]
        assert sum(agent.last_search["visits"].values()) == agent.last_search["simulations"] == sims
        assert len(calls) == agent.last_search["determinizations"] == expected
        assert agent.last_search["decisions"] >= sims


def test_seeded_determinism_and_a_single_legal_action():
    game = MegaGem(num_players=3)
    logs = []
    for _ in range(2):
        agent = ISMCTSAgent(game, simulations=3, rollout="random", seed=3)
        logs.append(play_engine_game(game, [agent, *opponents(game, 2)], seed=9).log)
    assert logs[0] == logs[1]
    # a seat with one legal action gets it at once, without searching
    s = game.new_state(0)
    only = np.zeros(game.num_actions, np.int8)
    only[game.legal_actions(s, 0)[0]] = 1
    game.legal_mask = lambda state, p: only.copy()
    agent = ISMCTSAgent(game, simulations=5, rollout="random", seed=0)
    assert agent.act_with_state(s, 0) == int(np.flatnonzero(only)[0]) and agent.last_search["simulations"] == 0


@pytest.mark.parametrize("game", [Gem(num_players=3), GemJam(num_players=3)], ids=["gem", "gemjam"])
def test_other_games_decisions_are_legal(game):
    """The agent is generic over the Game protocol: a few decisions of GEM and Gem Jam, heuristic rollouts."""
    agent = ISMCTSAgent(game, simulations=2, rollout="heuristic", seed=0)
    for s in random_states(game, 2, every=40)[:3]:
        p = game.to_act(s)[0]
        assert game.legal_mask(s, p)[decide(agent, s, p, game.observe(s, p), game.legal_mask(s, p))]


def test_bad_parameters_and_misuse_are_clear_errors(tmp_path):
    game = MegaGem(num_players=4)
    bad = [({"simulations": 0}, "simulations must be an integer >= 1"),
           ({"simulations": -3}, "simulations"), ({"simulations": 2.5}, "simulations"),
           ({"simulations": 4, "determinizations": 5}, "at most simulations"),
           ({"determinizations": 0}, "determinizations"),
           ({"rollout": "nope"}, "unknown rollout policy 'nope'"),
           ({"rollout": str(tmp_path / "missing.zip")}, "unknown rollout policy"),
           ({"exploration": -1.0}, "exploration"), ({"widening": 0}, "widening"),
           ({"reward": "points"}, "reward must be one of")]
    for kwargs, words in bad:
        with pytest.raises(ValueError, match=words):
            ISMCTSAgent(game, **kwargs)
    agent = ISMCTSAgent(game, simulations=2, rollout="random", seed=0)
    s = game.new_state(0)
    with pytest.raises(TypeError, match="needs the engine state"):
        agent.act(game.observe(s, 0), game.legal_mask(s, 0))
    with pytest.raises(ValueError, match="not the legal mask"):
        agent.act_with_state(s, 0, action_mask=np.zeros(game.num_actions, np.int8))
    done = s.copy()
    while game.to_act(done) and game.to_act(done)[0] == 0:
        game.apply(done, 0, int(game.legal_actions(done, 0)[0]))
    with pytest.raises(ValueError, match="not to act"):
        agent.act_with_state(done, 0)
    # the tuned baseline is a rollout policy too, and the heuristic one is the game's baseline
    assert isinstance(ISMCTSAgent(game, simulations=1)._policies[0], HeuristicBidder)
    assert ISMCTSAgent(game, simulations=1, rollout="tuned")._policies[0].name == "tuned"
