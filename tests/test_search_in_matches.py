"""A search agent (ISMCTS, named ``ismcts`` or ``ismcts:N``) plays everywhere games are played between
agents: the tournament, ``gemenvs play --opponents``, the training evaluation, the single-learner
environment and the benchmark; bad names and budgets are one clear error. Tiny budgets, few games."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

from gemenvs.core.replay import replay_game
from gemenvs.agents.random_agent import RandomAgent
from gemenvs.agents.registry import check_agent_name, make_agent
from gemenvs.agents.search import ISMCTSAgent, parse_name
from gemenvs.cli import main as cli_main
from gemenvs.recording import load_game
from gemenvs.arena import tournament as T
from gemenvs.arena.single_agent import SingleAgentEnv, make_aec_env

MEGAGEM = "gemenvs/MegaGem-v0"


def test_names_carry_the_budget():
    env = make_aec_env(MEGAGEM, num_players=3)
    assert parse_name("ismcts") == {} and parse_name("ismcts:64") == {"simulations": 64}
    agent = make_agent("megagem", "ismcts:3", env, seed=1)
    assert isinstance(agent, ISMCTSAgent) and agent.simulations == 3 and agent.name == "ismcts:3"
    assert make_agent("megagem", "ismcts", env).simulations == 64
    assert make_agent("gem", "ismcts:2", make_aec_env("gemenvs/GEM-v0", num_players=2)).simulations == 2
    check_agent_name("gemjam", "ismcts:5")
    with pytest.raises(TypeError, match="already sets simulations"):
        make_agent("megagem", "ismcts:3", env, simulations=4)


@pytest.mark.parametrize("name,words", [
    ("ismcts:0", "bad search agent name 'ismcts:0'"),
    ("ismcts:", "bad search agent name 'ismcts:'"),
    ("ismcts:many", "an integer from 1"),
    ("ismcts:064", "without leading zeros"),
    ("ismcts:8:2", "bad search agent name"),
    ("ismctz:8", "unknown opponent 'ismctz:8' for megagem; known: .*ismcts, ismcts:N"),
])
def test_bad_names_and_budgets_are_named(name, words):
    with pytest.raises(ValueError, match=words):
        check_agent_name("megagem", name)
    with pytest.raises(ValueError, match=words.replace("unknown opponent", "unknown agent")):
        make_agent("megagem", name, make_aec_env(MEGAGEM, num_players=3))


def test_a_tournament_with_a_search_agent_plays_legal_games_and_lists_it(tmp_path, capsys):
    out = tmp_path / "t"
    assert T.main(["--agents", "heuristic", "ismcts:2", "--players", "3", "--games", "6", "--out", str(out),
                   "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "| ismcts:2 |" in printed and "| heuristic |" in printed
    spec = T.TournamentSpec(**json.loads((out / "tournament.json").read_text()))
    records = T.read_results(out / "results.jsonl", spec)
    assert len(records) == 6 and all("ismcts:2" in r["seats"] for r in records.values())
    for rec in records.values():  # every decision was legal: the engine replays the log to the same scores
        assert T.replay_record(rec) is not None


@pytest.mark.parametrize("argv,words", [
    (["--agents", "heuristic", "ismcts:0"], "agent 'ismcts:0': bad search agent name"),
    (["--agents", "heuristic", "ismcts:x"], "simulations per decision"),
    (["--agents", "heuristic", "mcts"], "unknown agent 'mcts' for megagem"),
])
def test_tournament_bad_search_names_are_one_line(argv, words, capsys):
    assert T.main(argv + ["--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gemenvs-tournament: error: ") and words in err, err


def test_gemenvs_play_against_a_search_opponent(tmp_path):
    path = tmp_path / "g.jsonl"
    out = io.StringIO()
    code = cli_main(["play", "megagem", "--players", "3", "--seed", "5", "--opponents", "ismcts:2", "heuristic",
                     "--save", str(path)], stdin=io.StringIO("1\n" * 400), stdout=out)
    text = out.getvalue()
    assert code == 0 and "game over" in text, text
    saved = load_game(path)
    assert saved.players == ["human", "ismcts:2", "heuristic"]
    assert saved.replay() is not None


def test_gemenvs_play_names_a_bad_budget(capsys):
    assert cli_main(["play", "megagem", "--opponents", "ismcts:0"], stdin=io.StringIO(), stdout=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err.startswith("gemenvs: error: opponent 'ismcts:0'") and "simulations per decision" in err, err


def test_an_evaluation_against_a_search_opponent():
    from gemenvs.training.config import ConfigError, load_config
    from gemenvs.arena.evaluate import evaluate, opponent_folders

    search_eval = ["eval.best_by=heuristic"]  # (the config ranks models by heuristic and tuned)
    cfg = load_config("configs/megagem/selfplay_3p.yaml", ["eval.opponents=[heuristic, ismcts:2]"] + search_eval)
    assert cfg.eval.opponents == ["heuristic", "ismcts:2"]
    with pytest.raises(ConfigError, match="eval.opponents: bad search agent name 'ismcts:0'"):
        load_config("configs/megagem/selfplay_3p.yaml", ["eval.opponents=[heuristic, ismcts:0]"] + search_eval)
    focal = RandomAgent.for_env(make_aec_env(MEGAGEM, num_players=3), seed=0)
    results = evaluate(focal, MEGAGEM, {"num_players": 3}, ["ismcts:2"], games=3, seed=4)
    assert results["ismcts:2"].games == 3 and len(results["ismcts:2"].scores) == 3
    assert opponent_folders(["ismcts:2"]) == {"ismcts:2": "ismcts_2"}


def test_the_single_learner_env_hands_search_opponents_the_state():
    env = SingleAgentEnv(MEGAGEM, opponents="ismcts:2", learner_seat=1, num_players=3)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=3)
    done, steps = False, 0
    while not done:
        assert obs.shape == env.observation_space.shape  # the learner gets its observation only
        obs, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        done, steps = term or trunc, steps + 1
    assert "illegal_action" not in info and "score" in info and steps > 1
    game = env.raw.game
    assert replay_game(game, env.raw.game_state.seed, env.raw.game_state.log) is not None
    env.close()


def test_the_benchmark_plays_a_search_policy():
    from gemenvs.arena.benchmark import BENCHMARKS, run_benchmark

    games = run_benchmark(BENCHMARKS["megagem-bidding-v1"], ["ismcts:2"], deals=1, cells=[0])["ismcts:2"]
    assert len(games) == 3 and {g["seat"] for g in games} == {0, 1, 2}


def test_search_agents_are_refused_as_training_opponents():
    """pool.baselines may not name a search agent (the batched and RLlib paths call act() only); eval.opponents may."""
    from gemenvs.training.config import ConfigError, load_config

    with pytest.raises(ConfigError, match=r"pool.baselines: ismcts:4: search agents .* evaluation opponents"):
        load_config(None, ["pool.baselines=[heuristic, ismcts:4]"])
    gemjam = Path(__file__).resolve().parents[1] / "configs" / "gemjam" / "selfplay.yaml"
    with pytest.raises(ConfigError, match=r"pool.baselines: lookahead:2: search agents .* evaluation opponents"):
        load_config(gemjam, ["pool.baselines=[rule, lookahead:2]"])  # Gem Jam's lookahead reads the state too
    cfg = load_config(gemjam, ["eval.opponents=[rule, lookahead]", "pretrain.teacher=lookahead"])
    assert cfg.eval.opponents == ["rule", "lookahead"]  # an evaluation opponent and a teacher it may be
