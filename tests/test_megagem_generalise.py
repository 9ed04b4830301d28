"""Training that generalises (issue 12): the tuned bidder family in the pool, evaluation per value chart,
and the MegaGem configs that use them (every chart in training, charts A-E in the tables)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gemenvs.agents import RandomAgent, make_agent
from gemenvs.agents.megagem.family import FAMILY_SALT, FamilyBidder, member_name, member_weights, parse_member
from gemenvs.agents.megagem.tuned import DEFAULT_WEIGHTS, WEIGHTS, TunedBidder, check_weights
from gemenvs.arena import run_match
from gemenvs.agents.registry import baseline_names, check_agent_name
from gemenvs.megagem_v0 import env as megagem_env

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs" / "megagem"
ENV_ID = "gemenvs/MegaGem-v0"


# ----------------------------------------------------------------------------- the family

def test_family_members_are_seeded_distinct_and_within_bounds():
    env = megagem_env(num_players=4)
    members = [make_agent("megagem", member_name(k), env, seed=k) for k in range(8)]
    assert all(isinstance(m, FamilyBidder) and m.name == "tuned_family" for m in members)
    for m in members:
        assert check_weights(m.weights) == m.weights  # every weight finite and within its bounds
    vectors = {tuple(m.weights.values()) for m in members}
    assert len(vectors) == 8, "every member plays a different weight vector"
    # a member is its index alone: any agent seed, any instance, the same weights
    again = make_agent("megagem", "tuned_family:3", env, seed=99)
    assert again.weights == members[3].weights
    tuned = make_agent("megagem", "tuned", env)
    assert members[3].weights != tuned.weights
    assert make_agent("megagem", "tuned_family:3:0.0", env).weights == tuned.weights  # spread 0: the tuned bidder
    # spread scales the same draws: away from the bounds, twice the spread moves twice as far
    center = dict(tuned.weights)
    one, two = member_weights(3, center, 1.0), member_weights(3, center, 2.0)
    inside = [w.name for w in WEIGHTS if w.low < two[w.name] < w.high]
    assert len(inside) > 15
    for name in inside:
        assert two[name] - center[name] == pytest.approx(2 * (one[name] - center[name]))
    z = np.random.default_rng([FAMILY_SALT, 3]).standard_normal(len(WEIGHTS))
    w0 = WEIGHTS[0]
    if w0.low < one[w0.name] < w0.high:
        assert one[w0.name] == pytest.approx(center[w0.name] + w0.step * z[0])


def test_family_members_follow_the_tuned_weights_of_each_player_count(tmp_path):
    for n in (3, 5):
        env = megagem_env(num_players=n)
        member = make_agent("megagem", "tuned_family:0", env)
        center = dict(make_agent("megagem", "tuned", env).weights)
        assert member.weights == member_weights(0, center, 1.0)
    # without a tuned weights file the family centres on HeuristicBidder's weights
    lone = FamilyBidder.for_env(megagem_env(), member=2, weights_file=tmp_path / "absent.json")
    assert lone.weights == member_weights(2, dict(DEFAULT_WEIGHTS), 1.0) and "absent.json" in lone.weights_source


def test_family_members_play_legal_games():
    for n in (3, 4, 5):
        env = megagem_env(num_players=n, value_chart="random")  # illegal_action="raise": an illegal bid fails here
        opponents = [make_agent("megagem", f"tuned_family:{k}:2.0", env, seed=k) for k in range(n - 1)]
        result = run_match(lambda: megagem_env(num_players=n, value_chart="random"),
                           make_agent("megagem", "tuned_family:7", env, seed=0), opponents, games=n, seed=n)
        assert result.games == n and len(result.scores) == n


@pytest.mark.parametrize("name, message", [
    ("tuned_family", "bad member name 'tuned_family': a member is named tuned_family:K"),
    ("tuned_family:-1", "bad member name"),
    ("tuned_family:one", "bad member name"),
    ("tuned_family:1:wide", "spread 'wide' is not a number"),
    ("tuned_family:1:-0.5", "spread must be a finite number >= 0"),
    ("tuned_family:1:inf", "spread must be a finite number >= 0"),
    ("tuned_family:1:1:1", "bad member name"),
    ("tuned_famly:1", "unknown opponent 'tuned_famly:1' for megagem; known: random, truthful, heuristic, tuned, "
                      "tuned_family:K"),
])
def test_bad_member_names_are_named(name, message):
    with pytest.raises(ValueError, match=message):
        check_agent_name("megagem", name)
    with pytest.raises(ValueError, match=message.replace("unknown opponent", "unknown agent")):
        make_agent("megagem", name, megagem_env())


def test_member_names_and_the_baseline_list():
    assert member_name(4) == "tuned_family:4" and member_name(4, 0.5) == "tuned_family:4:0.5"
    assert parse_member("tuned_family:4:0.5") == (4, 0.5) and parse_member("tuned_family:12") == (12, 1.0)
    with pytest.raises(ValueError, match="spread must be"):
        member_name(1, -1)
    assert baseline_names("megagem") == ["random", "truthful", "heuristic", "tuned"]  # family members are extra
    with pytest.raises(ValueError, match="unknown opponent 'tuned_family:1' for gem"):
        check_agent_name("gem", "tuned_family:1")
    assert isinstance(make_agent("megagem", "tuned", megagem_env()), TunedBidder)


# ----------------------------------------------------------------------------- evaluation per chart

def test_evaluation_per_chart_rows_pool_and_seeds(tmp_path):
    from gemenvs.arena.evaluate import ChartResults, chart_games, evaluate, results_dict, results_table

    assert chart_games(500, 5, 4) == 100 and chart_games(500, 5, 3) == 102 and chart_games(10, 3, 4) == 4
    focal = RandomAgent(seed=0)
    charts = ["A", "C", "E"]
    results = evaluate(focal, ENV_ID, {"num_players": 4}, ["random", "tuned_family:1"], 10, seed=5,
                       charts=charts, save_dir=tmp_path / "games")
    for r in results.values():
        assert isinstance(r, ChartResults) and list(r.by_chart) == charts
        assert r.games == 12 and all(c.games == 4 for c in r.by_chart.values())
        assert r.wins == sum(c.wins for c in r.by_chart.values())
        assert r.margins == [m for c in r.by_chart.values() for m in c.margins]
    # chart C's games are the games of that chart alone, seeds seed + 1 x 4 onwards
    alone = evaluate(focal, ENV_ID, {"num_players": 4, "value_chart": "C"}, ["random"], 4, seed=9)["random"]
    assert alone.margins == results["random"].by_chart["C"].margins and alone.scores == results["random"].by_chart["C"].scores
    saved = sorted(p.relative_to(tmp_path / "games").as_posix() for p in (tmp_path / "games").rglob("*.jsonl"))
    assert len(saved) == 24 and "random/chart_C/game_9.jsonl" in saved and "tuned_family_1/chart_E/game_13.jsonl" in saved
    header = json.loads((tmp_path / "games" / "random" / "chart_E" / "game_13.jsonl").read_text().splitlines()[0])
    assert header["options"]["value_chart"] == "E"

    table = results_table(results, 4)
    lines = table.splitlines()
    assert lines[0].startswith("| opponents (3 copies) | chart | games | win rate | 95% CI |")
    rows = [line for line in lines if line.startswith("| random") or line.startswith("| tuned_family:1")]
    assert [r.split(" | ")[1] for r in rows] == ["all (A, C, E)", "A", "C", "E"] * 2
    summary = results_dict(results)
    assert summary["random"]["games"] == 12 and list(summary["random"]["charts"]) == charts
    assert summary["random"]["charts"]["C"]["win_ci"] == list(alone.win_ci)
    # without charts: the table and summary as before (one row per opponent, no "charts" key)
    plain = evaluate(focal, ENV_ID, {"num_players": 4}, ["random"], 4, seed=9)
    assert "chart" not in results_table(plain, 4).splitlines()[0] and "charts" not in results_dict(plain)["random"]
    with pytest.raises(ValueError, match="at least one value chart"):
        evaluate(focal, ENV_ID, {"num_players": 4}, ["random"], 4, charts=[])


# ----------------------------------------------------------------------------- configs

pytest.importorskip("yaml")


def test_shipped_megagem_configs_train_on_every_chart_against_the_family():
    from gemenvs.training.config import load_config
    from gemenvs.arena.pool import pool_baselines

    for name, players, members in (("selfplay", 4, 6), ("selfplay_sb3", 4, 6), ("selfplay_long", 4, 8), ("selfplay_3p", 3, 6),
                                   ("selfplay_5p", 5, 6)):
        cfg = load_config(CONFIGS / f"{name}.yaml")
        assert cfg.env.options == {"num_players": players, "value_chart": "random"}, name
        assert cfg.eval.charts == ["A", "B", "C", "D", "E"] and {"heuristic", "tuned"} <= set(cfg.eval.opponents)
        assert pool_baselines(cfg.pool) == ["heuristic", "tuned"] + [f"tuned_family:{k}" for k in range(members)]
        assert cfg.name == f"megagem_{name}"
    default = load_config(CONFIGS / "selfplay.yaml")
    assert default.max_train_minutes is None and default.total_timesteps == 2_000_000  # the make train budget: work


@pytest.mark.parametrize("override, message", [
    ("eval.charts=[A, F]", r"eval.charts\[1\]: 'F' is not a value chart of megagem"),
    ("eval.charts=[A, random]", r"eval.charts\[1\] is 'random' \(per-chart rows need fixed charts\)"),
    ("eval.charts=[B, B]", r"eval.charts\[1\] is repeated"),
    ("eval.charts=[]", "eval.charts must name at least one chart"),
    ("eval.charts=A", r"eval.charts must be list\[str\] or null; got .A."),
    ("pool.family.members=-1", "pool.family.members must be at least 0"),
    ("pool.family.spread=-0.5", "pool.family.spread must be at least 0"),
    ("pool.family.size=3", "unknown config key 'pool.family.size'"),
    ("pool.family=4", "pool.family must be a mapping"),
    ("pool.baselines=[heuristic, tuned_family:0]", "pool.baselines names tuned_family:0, which pool.family adds too"),
    ("pool.baselines=[tuned_family]", "pool.baselines: bad member name 'tuned_family'"),
    ("eval.opponents=[tuned_family:x]", "eval.opponents: bad member name 'tuned_family:x'"),
])
def test_config_errors_name_the_key(override, message):
    from gemenvs.training.config import ConfigError, load_config

    with pytest.raises(ConfigError, match=message):
        load_config(CONFIGS / "selfplay_sb3.yaml", [override])


def test_family_and_charts_are_megagem_only():
    from gemenvs.training.config import ConfigError, load_config

    gemjam = ROOT / "configs" / "gemjam" / "selfplay.yaml"
    with pytest.raises(ConfigError, match="pool.family: the tuned bidder family plays MegaGem only, not gemjam"):
        load_config(gemjam, ["pool.family.members=2"])
    with pytest.raises(ConfigError, match="eval.charts: gemjam has no value_chart option"):
        load_config(gemjam, ["eval.charts=[A]"])
    cfg = load_config(CONFIGS / "selfplay_sb3.yaml", ["eval.opponents=[tuned_family:100]", "pool.family.members=0",
                                                   "eval.best_by=mean"])
    assert cfg.eval.opponents == ["tuned_family:100"]  # a held-out member as an evaluation opponent


def test_tiny_run_with_the_family_and_per_chart_tables(tmp_path):
    pytest.importorskip("sb3_contrib")
    from gemenvs.training.config import load_config
    from gemenvs.training.checkpoint import find_checkpoint
    from gemenvs.training.run import train

    overrides = [
        f"run_root={tmp_path}", "name=tiny", "total_timesteps=512", "n_envs=2", "checkpoint_every=0",
        "progress_bar=false", "ppo.n_steps=128", "ppo.batch_size=128", "ppo.n_epochs=1", "ppo.net_arch=[16]",
        "pool.baselines=[heuristic]", "pool.family.members=2", "pool.snapshot_every=0", "eval.every=256",
        "eval.games=2", "eval.opponents=[random, tuned_family:9]", "eval.charts=[B, D]", "eval.final_games=4",
        "eval.workers=1",
    ]
    run = train(load_config(CONFIGS / "selfplay_sb3.yaml", overrides))
    pool = json.loads((find_checkpoint(run) / "pool.json").read_text())
    assert [m["name"] for m in pool["members"]] == ["heuristic", "tuned_family:0", "tuned_family:1"]
    assert sum(len(v) for v in pool["results"].values()) > 0, "the learner met the pool"
    summary = json.loads((run / "results.json").read_text())["results"]
    assert set(summary) == {"random", "tuned_family:9"}
    assert summary["random"]["games"] == 8 and list(summary["random"]["charts"]) == ["B", "D"]
    table = (run / "results.md").read_text()
    assert "| random | all (B, D) | 8 |" in table and "| tuned_family:9 | D | 4 |" in table
    rows = (run / "eval.csv").read_text().splitlines()
    assert rows[1].startswith("256,random,8,")  # periodic rows pooled over the charts (2 games: 4 per chart)
