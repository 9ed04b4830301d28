"""Matches played side by side (gemenvs.arena.lockstep) are run_match's games: the same result, game for game,
and the same saved games, for every kind of games table (bidder tables, rows of any game, copies per game)."""
from __future__ import annotations

import numpy as np
import pytest

from gemenvs.arena.lockstep import CopiesTable, RowsTable, games_table, run_match_lockstep
from gemenvs.arena.match import run_match
from gemenvs.agents.megagem import BidderGames, HeuristicBidder, TruthfulAgent, TunedBidder
from gemenvs.agents.policy import PolicyAgent
from gemenvs.agents.random_agent import RandomAgent
from gemenvs.agents.registry import make_agent
from gemenvs.arena.single_agent import make_aec_env


def _policy(env, deterministic: bool, features=None) -> PolicyAgent:
    """A small random network for ``env`` (with ``features`` appended to its observation, if given)."""
    rng = np.random.default_rng(3)
    first = env.possible_agents[0]
    obs = int(np.prod(env.observation_space(first)["observation"].shape)) + (features.size if features else 0)
    sizes = [obs, 32, int(env.action_space(first).n)]
    layers = [(rng.normal(0, 0.3, (a, b)), rng.normal(0, 0.1, b)) for a, b in zip(sizes, sizes[1:])]
    return PolicyAgent(layers, "tanh", deterministic=deterministic, seed=5, features=features)


def _same(a, b) -> None:
    assert (a.games, a.wins, a.margins, a.scores) == (b.games, b.wins, b.margins, b.scores)


@pytest.mark.parametrize("options", [{"num_players": 4, "value_chart": "C"}, {"num_players": 3, "public_bids": False}],
                         ids=["4p", "3p-private"])
@pytest.mark.parametrize("opponent", ["random", "truthful", "heuristic", "tuned"])
def test_lockstep_match_is_run_matchs(options, opponent):
    from gemenvs.agents.features import make_features

    env = make_aec_env("gemenvs/MegaGem-v0", **options)
    n = len(env.possible_agents)
    focals = [_policy(env, True, make_features("megagem_tuned_advice", options)), _policy(env, False),
              TruthfulAgent.for_env(env)]
    for focal in focals:
        opponents = [make_agent("megagem", opponent, env, seed=7 + k) for k in range(n - 1)]
        games = 2 * n + 1
        serial = run_match(lambda: make_aec_env("gemenvs/MegaGem-v0", **options), focal, opponents, games, seed=40)
        side = run_match_lockstep(lambda: make_aec_env("gemenvs/MegaGem-v0", **options), focal, opponents, games,
                                  seed=40)
        _same(serial, side)


def test_lockstep_saves_the_same_games(tmp_path):
    env_fn = lambda: make_aec_env("gemenvs/MegaGem-v0", num_players=4)  # noqa: E731
    env = env_fn()
    focal, opponents = RandomAgent(seed=1), [HeuristicBidder.for_env(env), TunedBidder.for_env(env), RandomAgent(seed=2)]
    _same(run_match(env_fn, focal, opponents, 6, seed=3, save_dir=tmp_path / "serial"),
          run_match_lockstep(env_fn, focal, opponents, 6, seed=3, save_dir=tmp_path / "side"))
    names = sorted(p.name for p in (tmp_path / "serial").iterdir())
    assert len(names) == 6 and names == sorted(p.name for p in (tmp_path / "side").iterdir())
    for name in names:
        assert (tmp_path / "serial" / name).read_bytes() == (tmp_path / "side" / name).read_bytes()


def test_games_tables_by_kind_of_agent():
    env = make_aec_env("gemenvs/MegaGem-v0", num_players=4)
    assert isinstance(games_table(HeuristicBidder.for_env(env), 8), BidderGames)
    assert isinstance(games_table(TruthfulAgent.for_env(env), 8), RowsTable)
    assert isinstance(games_table(_policy(env, True), 8), RowsTable)
    assert isinstance(games_table(_policy(env, False), 8), CopiesTable)  # (sampling draws on the agent's RNG)
    assert isinstance(games_table(RandomAgent(seed=0), 8), CopiesTable)


@pytest.mark.parametrize("teacher", ["tuned", "truthful"])
def test_teacher_games_side_by_side_are_the_serial_games(teacher):
    """The warm start's teacher games (gemenvs.training.pretrain) played side by side keep the rows, in the order,
    of the games played one decision at a time; with a student in one seat (DAgger) too."""
    from gemenvs.agents.features import make_features
    from gemenvs.training import pretrain

    options = {"num_players": 4, "value_chart": "random"}
    env = make_aec_env("gemenvs/MegaGem-v0", **options)
    student = _policy(env, True, make_features("megagem_tuned_advice", options))
    seeds = list(range(30, 37))
    for who in (None, student):
        side = pretrain._play_games("gemenvs/MegaGem-v0", options, teacher, "win", 0.99, seeds, who)
        obs, masks, actions, returns, index = [], [], [], [], []
        for seed in seeds:
            got = pretrain._play_games("gemenvs/MegaGem-v0", options, teacher, "win", 0.99, [seed], who)
            serial_obs, serial_masks, serial_actions = [], [], []
            pretrain._serial_game(env.unwrapped.game, teacher, env, 4, seed, who, None, serial_obs, serial_masks,
                                  serial_actions)
            assert np.array_equal(np.asarray(serial_obs, np.float32), got[0])
            assert serial_actions == got[2].tolist()
            for part, array in zip((obs, masks, actions, returns, index), got):
                part.append(array)
        for part, array in zip((obs, masks, actions, returns, index), side):
            assert np.array_equal(np.concatenate(part), array)
