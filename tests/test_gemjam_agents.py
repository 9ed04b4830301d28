"""The Gem Jam agents: the rule-of-thumb baseline plays legal moves and beats random play; the lookahead
agent plays legal, deterministic games and decides only from what its seat can see."""
from __future__ import annotations

import numpy as np
import pytest

from gemenvs import gemjam_v0
from gemenvs.agents import make_agent
from gemenvs.arena import play_game
from gemenvs.agents.gemjam import GemJamRuleAgent


def test_rule_agent_beats_random_agents():
    env = gemjam_v0.env(num_players=3)
    wins = 0.0
    for g in range(6):
        seat = g % 3
        agents = [make_agent("gemjam", "random", env, seed=g * 10 + i) for i in range(3)]
        agents[seat] = make_agent("gemjam", "rule", env)
        final = play_game(env, agents, g)
        winners = final[f"player_{seat}"]["winners"]
        wins += (f"player_{seat}" in winners) / len(winners)
    assert wins >= 4  # measured: it wins nearly every game against two random players


def test_rule_agent_needs_the_specs():
    with pytest.raises(ValueError, match="needs the observation and action specs"):
        GemJamRuleAgent()


# ---------------------------------------------------------------------------------- the lookahead agent

def _lookahead_game(seed: int, agent_seed: int = 0):
    """One engine game: the lookahead agent in seat seed % 3 against two rule agents; the final state."""
    from gemenvs.arena.match import play_engine_game

    env = gemjam_v0.env(num_players=3)
    game = env.unwrapped.game
    agents = [GemJamRuleAgent.for_env(env) for _ in range(3)]
    agents[seed % 3] = make_agent("gemjam", "lookahead", env)
    seeds = [agent_seed + i for i in range(3)]
    return game, play_engine_game(game, agents, seed, agent_seeds=seeds)  # game.apply checks every action


def test_lookahead_plays_legal_games_deterministically():
    game, a = _lookahead_game(1)
    assert game.is_over(a)
    _, b = _lookahead_game(1)
    assert a.log == b.log  # the same seed, the same decisions


def test_lookahead_never_reads_hidden_information():
    """Re-dealing what its seat cannot see (resample_hidden from its seat) never changes its decision."""
    env = gemjam_v0.env(num_players=3)
    game = env.unwrapped.game
    rule = GemJamRuleAgent.for_env(env)
    look = make_agent("gemjam", "lookahead", env)
    redeal = np.random.default_rng(7)
    state, checked = game.new_state(3), 0
    while not game.is_over(state) and checked < 12:
        p = game.to_act(state)[0]
        obs, mask = game.observe(state, p), game.legal_mask(state, p)
        searched = state.decision.kind in ("play", "react", "place")
        if np.count_nonzero(mask) > 1 and searched and len(state.log) % 3 == 0:
            other = game.resample_hidden(state, p, redeal)
            assert other.to_dict() != state.to_dict()
            look.reset(seed=len(state.log))
            a = look.act_with_state(state, p, obs, mask)
            look.reset(seed=len(state.log))
            assert look.act_with_state(other, p, obs, mask) == a
            checked += 1
        game.apply(state, p, rule.act(obs, mask))
    assert checked >= 6


def test_lookahead_names_and_errors():
    from gemenvs.agents.gemjam import GemJamLookaheadAgent
    from gemenvs.agents.registry import check_agent_name

    env = gemjam_v0.env(num_players=3)
    assert make_agent("gemjam", "lookahead:3", env).samples == 3 and make_agent("gemjam", "lookahead", env).samples == 2
    check_agent_name("gemjam", "lookahead:3")
    with pytest.raises(ValueError, match="number of hidden states"):
        check_agent_name("gemjam", "lookahead:0")
    with pytest.raises(TypeError, match="needs the engine state"):
        GemJamLookaheadAgent.for_env(env).act(np.zeros(env.unwrapped.game.spec.size, np.float32), np.ones(3, np.int8))


def test_lookahead_rollouts_choose_as_the_rule_agent():
    env = gemjam_v0.env(num_players=3)
    game = env.unwrapped.game
    rule, look = GemJamRuleAgent.for_env(env), make_agent("gemjam", "lookahead", env)
    state, seen = game.new_state(5), 0
    while not game.is_over(state):
        p = game.to_act(state)[0]
        obs, mask = game.observe(state, p), game.legal_mask(state, p)
        a = rule.act(obs, mask)
        assert look.rule_act(obs, mask) == a
        seen += np.count_nonzero(mask) > 1
        game.apply(state, p, a)
    assert seen > 50


def _small_policy(game, seed: int = 0, inputs: int | None = None):
    """A PolicyAgent with random weights shaped for ``game`` (or for ``inputs`` observation values)."""
    from gemenvs.agents.policy import PolicyAgent

    rng = np.random.default_rng(seed)
    sizes = [game.spec.size if inputs is None else inputs, 16, game.num_actions]
    return PolicyAgent([(rng.normal(0, 0.3, (a, b)), rng.normal(0, 0.1, b)) for a, b in zip(sizes, sizes[1:])], "tanh")


def test_lookahead_around_a_policy_starts_from_it_and_never_reads_hidden_information():
    """With ``policy`` the policy's choice replaces the rule agent's: where nothing is searched it is the decision,
    and every seat's rollout play is the policy's; re-dealing what the seat cannot see changes nothing."""
    from gemenvs.agents.gemjam import SEARCHED, GemJamLookaheadAgent

    env = gemjam_v0.env(num_players=3)
    game = env.unwrapped.game
    policy = _small_policy(game)
    look = GemJamLookaheadAgent.for_env(env, policy=policy)
    rule = GemJamRuleAgent.for_env(env)
    redeal = np.random.default_rng(3)
    state, unsearched, searched, differs = game.new_state(4), 0, 0, 0
    while not game.is_over(state):
        p = game.to_act(state)[0]
        obs, mask = game.observe(state, p), game.legal_mask(state, p)
        assert look.base_act(obs, mask) == policy.act(obs, mask)  # the rollout policy of every seat
        differs += np.count_nonzero(mask) > 1 and policy.act(obs, mask) != rule.act(obs, mask)
        if np.count_nonzero(mask) > 1 and len(state.log) % 4 == 0:
            look.reset(seed=len(state.log))
            a = look.act_with_state(state, p, obs, mask)
            if state.decision.kind not in SEARCHED:
                assert a == policy.act(obs, mask)
                unsearched += 1
            elif searched < 6:
                look.reset(seed=len(state.log))
                assert look.act_with_state(game.resample_hidden(state, p, redeal), p, obs, mask) == a
                searched += 1
        game.apply(state, p, rule.act(obs, mask))
    assert unsearched >= 1 and searched >= 4 and differs >= 10  # (a random policy is no rule agent)


def test_lookahead_around_a_policy_plays_legal_games_and_refuses_a_policy_of_another_shape():
    from gemenvs.agents.gemjam import GemJamLookaheadAgent
    from gemenvs.arena.match import play_engine_game

    env = gemjam_v0.env(num_players=3)
    game = env.unwrapped.game
    agents = [GemJamRuleAgent.for_env(env), GemJamLookaheadAgent.for_env(env, policy=_small_policy(game)),
              GemJamRuleAgent.for_env(env)]
    a = play_engine_game(game, agents, 2, agent_seeds=[0, 1, 2])  # game.apply checks every action
    b = play_engine_game(game, agents, 2, agent_seeds=[0, 1, 2])
    assert game.is_over(a) and a.log == b.log
    with pytest.raises(ValueError, match="was it trained on another game or player count"):
        GemJamLookaheadAgent.for_env(env, policy=_small_policy(game, inputs=game.spec.size + 1))
    with pytest.raises(TypeError, match="policy must be a PolicyAgent"):
        GemJamLookaheadAgent.for_env(env, policy=GemJamRuleAgent.for_env(env))


def test_rotated_wins_seats_the_focal_agent_by_seed():
    from gemenvs.arena.match import play_engine_game, rotated_wins

    env = gemjam_v0.env(num_players=3)
    game = env.unwrapped.game
    rule = GemJamRuleAgent.for_env(env)
    others = [make_agent("gemjam", "random", env, seed=1), make_agent("gemjam", "random", env, seed=2)]
    expected = 0.0
    for seed in (3, 4, 5):  # seats 0, 1, 2
        agents = list(others)
        agents.insert(seed % 3, rule)
        r = game.results(play_engine_game(game, agents, seed))
        expected += (seed % 3 in r.winners) / len(r.winners)
    assert rotated_wins(game, rule, others, [3, 4, 5]) == expected >= 2  # the rule agent beats random players
