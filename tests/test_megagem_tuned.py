"""The tuned MegaGem bidder family (gemenvs.agents.megagem.tuned): ParametricBidder at DEFAULT_WEIGHTS is
HeuristicBidder decision for decision; weights files and their errors; the tuner end to end; make_agent("tuned")."""
from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

from gemenvs import megagem_v0
from gemenvs.agents import make_agent
from gemenvs.arena import play_game
from gemenvs.arena.match import play_engine_game
from gemenvs.agents.megagem import HeuristicBidder, TruthfulAgent
from gemenvs.agents.megagem.tuned import (
    DEFAULT_WEIGHTS, FORMAT, WEIGHT_NAMES, WEIGHTS, ParametricBidder, TunedBidder, WeightsError, check_weights,
    load_weights, random_weights, read_weights_file, write_weights_file,
)
from gemenvs.megagem import MegaGem
from gemenvs.megagem.data import CHART_NAMES

ROOT = Path(__file__).resolve().parents[1]


class Twin:
    """Plays HeuristicBidder's action and fails the test if ParametricBidder (same observations) chooses otherwise."""

    def __init__(self, game, weights=None):
        self.ref = HeuristicBidder(spec=game.spec, action_spec=game.action_spec)
        self.cand = ParametricBidder(spec=game.spec, action_spec=game.action_spec, weights=weights)
        self.decisions = self.differences = 0

    def reset(self, seed=None):
        self.ref.reset(seed)
        self.cand.reset(seed)

    def act(self, obs, mask):
        a, b = self.ref.act(obs, mask), self.cand.act(obs, mask)
        self.decisions += 1
        self.differences += a != b
        return a


@pytest.mark.parametrize("num_players", [3, 4, 5])
@pytest.mark.parametrize("options", [{}, {"public_bids": False}, {"tie_break": "queue"},
                                     {"reveal_after": "treasure_only", "two_pairs": "distinct"}])
def test_default_weights_make_every_heuristic_decision(num_players, options):
    """Seeded games on every chart: every bid and reveal of ParametricBidder(DEFAULT_WEIGHTS) is HeuristicBidder's."""
    total = 0
    for chart in CHART_NAMES:
        game = MegaGem(num_players=num_players, value_chart=chart, **options)
        # twins in every seat but one, a TruthfulAgent for variety of bids
        for seed in range(2 if not options else 1):
            seats = [Twin(game) for _ in range(num_players - 1)]
            agents = seats[:seed % num_players] + [TruthfulAgent(spec=game.spec, action_spec=game.action_spec)] \
                + seats[seed % num_players:]
            play_engine_game(game, agents, 1000 * num_players + 10 * CHART_NAMES.index(chart) + seed)
            assert sum(t.differences for t in seats) == 0
            total += sum(t.decisions for t in seats)
    assert total > 100 * (2 if not options else 1)


def test_changed_weights_change_decisions():
    """The equivalence above is not vacuous: a moved weight makes other decisions."""
    game = MegaGem(num_players=4, value_chart="A")
    for name, x in [("shade_treasure1", 1.6), ("opp_bid_scale", 0.6), ("reveal_value", 1.5), ("chart_scale_A", 1.5)]:
        twins = [Twin(game, {**DEFAULT_WEIGHTS, name: x}) for _ in range(4)]
        for seed in range(3):
            play_engine_game(game, twins, seed)
        assert sum(t.differences for t in twins) > 0, name


# ----------------------------------------------------------------------------- weights and files

def test_weight_table_is_consistent():
    assert WEIGHT_NAMES == tuple(DEFAULT_WEIGHTS) and len(set(WEIGHT_NAMES)) == len(WEIGHTS)
    for w in WEIGHTS:
        assert w.low <= w.default <= w.high and w.step > 0 and w.meaning, w.name
    assert check_weights(DEFAULT_WEIGHTS) == dict(DEFAULT_WEIGHTS)
    with pytest.raises(TypeError):
        DEFAULT_WEIGHTS["psi"] = 1.0  # read-only


@pytest.mark.parametrize("change, message", [
    ({"gem_privat": 1.0}, "unknown weight name.*'gem_privat'"),
    ({"psi": None}, "'psi' must be a number"),
    ({"psi": "0.4"}, "'psi' must be a number"),
    ({"psi": True}, "'psi' must be a number"),
    ({"psi": math.nan}, "'psi' is nan"),
    ({"lam_max": math.inf}, "'lam_max' is inf"),
    ({"share": 0.0}, r"'share' = 0.0 is outside its bounds \[0.05, 2.0\]"),
])
def test_bad_weights_are_named(change, message):
    with pytest.raises(WeightsError, match=message):
        check_weights({**DEFAULT_WEIGHTS, **change})


def test_missing_weights_and_non_mappings_are_errors():
    partial = dict(DEFAULT_WEIGHTS)
    del partial["psi"], partial["reveal_info"]
    with pytest.raises(WeightsError, match="missing weight.*psi, reveal_info"):
        check_weights(partial)
    with pytest.raises(WeightsError, match="expected a mapping"):
        check_weights([1.0] * len(WEIGHTS))
    game = MegaGem(num_players=4)
    with pytest.raises(WeightsError, match="unknown weight"):
        ParametricBidder(spec=game.spec, action_spec=game.action_spec, weights={**DEFAULT_WEIGHTS, "x": 1})


def test_weights_file_round_trip_keeps_other_player_counts(tmp_path):
    path = tmp_path / "w.json"
    four = {**DEFAULT_WEIGHTS, "psi": 0.7}
    write_weights_file(path, {4: {"weights": four, "tuning": {"how": "test"}}}, note="n")
    write_weights_file(path, {3: {"weights": DEFAULT_WEIGHTS}})
    data = read_weights_file(path)
    assert sorted(data["players"]) == [3, 4] and data["note"] == "n"
    assert load_weights(path, 4) == four and data["players"][4]["tuning"] == {"how": "test"}
    with pytest.raises(WeightsError, match="no weights for 5 players"):
        load_weights(path, 5)


@pytest.mark.parametrize("content, message", [
    ("{not json", "not valid JSON"),
    (json.dumps({"format": "other"}), "not a weights file"),
    (json.dumps({"format": FORMAT, "players": {}}), "\"players\" must map"),
    (json.dumps({"format": FORMAT, "players": {"6": {"weights": {}}}}), "'6' is not one of"),
    (json.dumps({"format": FORMAT, "players": {"4": {"w": {}}}}), "must be an object with \"weights\""),
    (json.dumps({"format": FORMAT, "players": {"4": {"weights": dict(DEFAULT_WEIGHTS), "x": 1}}}), "unknown field"),
    (json.dumps({"format": FORMAT, "players": {"4": {"weights": {**DEFAULT_WEIGHTS, "psi": 1e999}}}}),
     r"players\['4'\]: weight 'psi' is inf"),
])
def test_bad_weights_files_are_named(tmp_path, content, message):
    path = tmp_path / "w.json"
    path.write_text(content)
    with pytest.raises(WeightsError, match=message):
        read_weights_file(path)
    game = MegaGem(num_players=4)
    with pytest.raises(WeightsError):
        TunedBidder(spec=game.spec, action_spec=game.action_spec, weights_file=path)


def test_tuned_bidder_falls_back_to_the_defaults_without_a_file(tmp_path):
    game = MegaGem(num_players=5)
    agent = TunedBidder(spec=game.spec, action_spec=game.action_spec, weights_file=tmp_path / "none.json")
    assert agent.weights == dict(DEFAULT_WEIGHTS) and "DEFAULT_WEIGHTS" in agent.weights_source
    write_weights_file(tmp_path / "four.json", {4: {"weights": {**DEFAULT_WEIGHTS, "psi": 0.5}}})
    with pytest.warns(UserWarning, match="no weights for 5 players"):
        agent = TunedBidder(spec=game.spec, action_spec=game.action_spec, weights_file=tmp_path / "four.json")
    assert agent.weights == dict(DEFAULT_WEIGHTS)


def test_random_weights_stay_in_bounds_and_follow_the_seed():
    a = random_weights(np.random.default_rng(3), spread=5.0)
    assert a == random_weights(np.random.default_rng(3), spread=5.0)
    assert check_weights(a) == a and a != dict(DEFAULT_WEIGHTS)
    assert random_weights(np.random.default_rng(3), spread=0.0) == dict(DEFAULT_WEIGHTS)


# ----------------------------------------------------------------------------- the shipped agent

def test_the_shipped_weights_file_is_valid_for_every_player_count():
    from gemenvs.agents.megagem.tuned import TUNED_WEIGHTS_FILE

    data = read_weights_file(TUNED_WEIGHTS_FILE)
    assert sorted(data["players"]) == [3, 4, 5]
    for n, entry in data["players"].items():
        assert entry["tuning"]["method"].startswith("CMA-ES") and "provisional" in entry["tuning"]
        game = MegaGem(num_players=n)
        assert TunedBidder(spec=game.spec, action_spec=game.action_spec).weights == entry["weights"]


class MaskChecked:
    def __init__(self, agent):
        self.agent, self.decisions = agent, 0

    def reset(self, seed=None):
        self.agent.reset(seed)

    def act(self, observation, action_mask):
        a = self.agent.act(observation, action_mask)
        assert isinstance(a, int) and action_mask[a] == 1
        self.decisions += 1
        return a


@pytest.mark.parametrize("num_players", [3, 4, 5])
def test_make_agent_tuned_plays_legal_games(num_players):
    env = megagem_v0.env(num_players=num_players, value_chart="random")  # illegal_action="raise"
    agents = [MaskChecked(make_agent("megagem", "tuned" if i % 2 == 0 else "heuristic", env, seed=i))
              for i in range(num_players)]
    assert isinstance(agents[0].agent, TunedBidder) and agents[0].agent.name == "tuned"
    for seed in range(2):
        final = play_game(env, agents, seed)
        assert set(final) == set(env.possible_agents)
    assert all(a.decisions > 0 for a in agents)


# ----------------------------------------------------------------------------- the scripts

def _script(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TINY = ["--games", "4", "--popsize", "4", "--players", "3,5", "--charts", "AE", "--workers", "1", "--table-games", "2"]


def test_tuner_runs_resumes_and_writes_loadable_weights(tmp_path, capsys):
    pytest.importorskip("cma")
    tune = _script("tune_megagem")
    out = tmp_path / "w.json"
    # two generations at once, and one + one resumed: the same run
    a = ["--state", str(tmp_path / "a" / "state.json"), "--out", str(out)]
    assert tune.main(TINY + a + ["--generations", "2"]) == 0
    b = ["--state", str(tmp_path / "b" / "state.json"), "--out", str(tmp_path / "wb.json"), "--provisional"]
    assert tune.main(TINY + b + ["--generations", "1"]) == 0
    assert tune.main(TINY + b + ["--generations", "2"]) == 0
    sa = json.loads((tmp_path / "a" / "state.json").read_text())
    sb = json.loads((tmp_path / "b" / "state.json").read_text())
    assert len(sa["generations"]) == len(sb["generations"]) == 2
    for ga, gb in zip(sa["generations"], sb["generations"]):
        assert {k: v for k, v in ga.items() if k != "wall_s"} == {k: v for k, v in gb.items() if k != "wall_s"}
    # generation 0's mean is the start point (DEFAULT_WEIGHTS): it scores as the default does
    g0 = sa["generations"][0]
    assert g0["mean_weights"] == dict(DEFAULT_WEIGHTS) and g0["mean_share"] == g0["default_share"]
    assert len((tmp_path / "a" / "generations.jsonl").read_text().splitlines()) == 2
    # the weights file: both player counts, loadable, playable, metadata
    data = read_weights_file(out)
    assert sorted(data["players"]) == [3, 5] and data["players"][3]["tuning"]["generations"] == 2
    assert read_weights_file(tmp_path / "wb.json")["players"][5]["tuning"]["provisional"] is True
    game = MegaGem(num_players=3, value_chart="E")
    agents = [TunedBidder(spec=game.spec, action_spec=game.action_spec, weights_file=out) for _ in range(3)]
    assert agents[0].weights == load_weights(out, 3) != dict(DEFAULT_WEIGHTS)
    assert game.is_over(play_engine_game(game, agents, 7))
    # another configuration on the same state is refused with a one-line reason
    capsys.readouterr()
    assert tune.main(["--games", "5"] + TINY[2:] + b + ["--generations", "3"]) == 2
    assert "other settings (games)" in capsys.readouterr().err
    assert tune.main(TINY + ["--field", "heuristic:1,bogus:1"] + b) == 2


def test_candidate_tables_seat_one_heuristic_and_rotate_it():
    """Table games: the candidate in every seat but one, a HeuristicBidder in that one, rotated; the field
    games are those of a run without tables (own random stream)."""
    tune = _script("tune_megagem")
    config = {"seed": 3, "games": 10, "table_games": 40, "players": [3, 4], "charts": ["A", "C"],
              "field": [["heuristic", 2.0], ["truthful", 1.0], ["hall", 1.0]]}
    plan = tune.game_plan(config, 5, hall_size=2)
    assert plan[:10] == tune.game_plan({**config, "table_games": 0}, 5, hall_size=2)
    tables = [g for g in plan if g[4] == tune.TABLE]
    assert len(tables) == 40 and all(g[4] != tune.TABLE for g in plan[:10])
    for g in tables:
        who = tune.seating(g)
        assert len(who) == g[0] and who.count("heuristic") == 1 and who.count("candidate") == g[0] - 1
        assert who[g[3]] == "heuristic"
    for n in (3, 4):
        for chart in "AC":
            seats = [g[3] for g in tables if g[:2] == (n, chart)]
            assert sorted(set(seats)) == list(range(n)), (n, chart, seats)
    # a field game: the candidate once, the field elsewhere in order
    g = plan[0]
    who = tune.seating(g)
    assert who.count("candidate") == 1 and who[g[3]] == "candidate"
    assert [w for s, w in enumerate(who) if s != g[3]] == list(g[4])
    # every candidate plays the same plan (common random numbers)
    assert plan == tune.game_plan(config, 5, hall_size=2) != tune.game_plan(config, 6, hall_size=2)


def test_fitness_combines_field_share_and_the_heuristic_share_at_candidate_tables():
    tune = _script("tune_megagem")
    T = tune.TABLE
    plan = [(4, "A", 1, 0, ("heuristic",) * 3), (4, "A", 2, 1, ("heuristic",) * 3), (3, "B", 3, 2, ("truthful",) * 2),
            (4, "A", 4, 0, T), (4, "B", 5, 1, T), (3, "C", 6, 2, T), (3, "C", 7, 0, T)]
    # field shares 1, 0, 1/2; heuristic shares at the tables 0, 1, 1/2, 0
    results = [(1.0, 3.0), (0.0, -2.0), (0.5, 0.0), (0.0, 4.0), (1.0, -1.0), (0.5, 0.0), (0.0, 2.0)]
    field = (1.0 + 0.0 + 0.5) / 3
    table = ((1 - 0) / 3 + (1 - 1) / 3 + (1 - 0.5) / 2 + (1 - 0) / 2) / 4
    t = tune.fitness_terms(plan, results, 0.7)
    assert t["field_share"] == pytest.approx(field) and t["table_heuristic_share"] == pytest.approx(0.375)
    assert t["table_share"] == pytest.approx(table)
    assert t["fitness"] == pytest.approx(0.3 * field + 0.7 * table)
    # W = 0: the field share alone (table games only watched); W = 1: the tables alone
    assert tune.fitness_terms(plan, results, 0.0)["fitness"] == pytest.approx(field)
    assert tune.fitness_terms(plan, results, 1.0)["fitness"] == pytest.approx(table)
    # at chance everywhere (1/n each) the two terms agree: the table term is a candidate seat's win share
    chance = [(1 / g[0], 0.0) for g in plan]
    c = tune.fitness_terms(plan, chance, 0.5)
    assert c["table_share"] == pytest.approx(np.mean([1 / g[0] for g in plan[3:]]))
    # a lower heuristic share at the tables is a higher fitness; the paired difference sees it
    better = results[:3] + [(0.0, 0.0)] * 4
    assert tune.fitness_terms(plan, better, 0.7)["fitness"] > t["fitness"]
    d, half = tune.fitness_difference(plan, better, results, 0.7)
    assert d == pytest.approx(tune.fitness_terms(plan, better, 0.7)["fitness"] - t["fitness"]) and half > 0
    assert tune.fitness_difference(plan, results, results, 0.7) == (0.0, 0.0)
    with pytest.raises(tune.TuneError, match="needs candidate-table games"):
        tune.fitness_terms(plan[:3], results[:3], 0.5)


def test_tuner_with_candidate_tables_scores_them_and_refuses_other_table_settings(tmp_path, capsys):
    pytest.importorskip("cma")
    tune = _script("tune_megagem")
    base = ["--games", "2", "--table-games", "3", "--exploit-weight", "0.5", "--popsize", "3", "--players", "3",
            "--charts", "A", "--workers", "1", "--tune", "psi,opp_bid_scale",
            "--state", str(tmp_path / "s.json"), "--out", str(tmp_path / "w.json")]
    assert tune.main(base + ["--generations", "1"]) == 0
    g = json.loads((tmp_path / "s.json").read_text())["generations"][0]
    assert g["games"] == 5 and g["table_games"] == 3 and len(g["table_heuristic_shares"]) == 3 + 2
    # generation 0's mean is DEFAULT_WEIGHTS: the same fitness as the default on the same games
    assert g["mean_fitness"] == g["default_fitness"] and len(g["fitness"]) == 3
    assert g["table_heuristic_shares"][-1] == g["table_heuristic_shares"][-2]
    capsys.readouterr()
    for change, name in [(["--exploit-weight", "0.6"], "exploit_weight"), (["--table-games", "4"], "table_games")]:
        assert tune.main(base + change + ["--generations", "2"]) == 2
        assert f"other settings ({name})" in capsys.readouterr().err
    assert tune.main(base + ["--generations", "2"]) == 0  # the same settings resume
    assert len(json.loads((tmp_path / "s.json").read_text())["generations"]) == 2
    # bad values are one-line errors
    for bad, message in [(["--exploit-weight", "1.5"], "must be in"), (["--table-games", "-1"], ">= 0"),
                         (["--table-games", "0"], "needs candidate-table games")]:
        assert tune.main(base + bad) == 2
        assert message in capsys.readouterr().err


def test_states_from_before_candidate_tables_resume_as_without_them(tmp_path):
    pytest.importorskip("cma")
    tune = _script("tune_megagem")
    ns = tune.parse_args(["--games", "2", "--table-games", "0", "--exploit-weight", "0", "--tune", "psi,share"])
    config = tune.make_config(ns)
    old = {k: v for k, v in config.items() if k not in ("table_games", "exploit_weight")}
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"format": tune.STATE_FORMAT, "config": old, "generations": []}))
    assert tune.load_state(path, config)["config"] == config
    with pytest.raises(tune.TuneError, match=r"other settings \(exploit_weight, table_games\)"):
        tune.load_state(path, {**config, "table_games": 5, "exploit_weight": 0.5})


def test_evaluation_script_prints_the_table_with_its_thresholds(capsys):
    ev = _script("megagem_tuned_eval")
    assert ev.main(["--games", "2", "--charts", "AB", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "tuned vs 3 x heuristic" in out and "heuristic vs 3 x tuned" in out
    assert out.count("| all | 4 |") == 2 and "threshold >= 40%" in out and "threshold <= 20%" in out


def test_docs_table_lists_every_weight_as_defined():
    """docs/megagem.md's weight table is the code's (name, group, default, bounds, step, meaning)."""
    text = (ROOT / "docs" / "megagem.md").read_text()
    block = text.split("| weight | group | default | bounds | step | meaning |")[1].split("\n\n")[0]
    rows = [line for line in block.splitlines()[1:] if line.startswith("| `")]
    want = [f"| `{w.name}` | {w.group} | {w.default:g} | [{w.low:g}, {w.high:g}] | {w.step:g} | {w.meaning} |"
            for w in WEIGHTS]
    assert rows == want, "docs/megagem.md: the weights table differs from agents/megagem/tuned.WEIGHTS"


def test_last_valuation_bounds_every_bid():
    """``last_valuation`` is what the bidder computed before weighing the opponents: it never bids above the
    largest bid it considered, and bids nothing on a lot it values at nothing."""
    env = megagem_v0.env(num_players=4, value_chart="random")
    game = env.unwrapped.game
    bidder = make_agent("megagem", "tuned", env)
    others = [make_agent("megagem", "heuristic", env) for _ in range(3)]
    state, bids = game.new_state(5), 0
    while not game.is_over(state):
        chosen = []
        for p in game.to_act(state):
            obs, mask = game.observe(state, p), game.legal_mask(state, p)
            agent = bidder if p == 0 else others[p - 1]
            a = agent.act(obs, mask)
            if p == 0 and bidder.last_valuation is not None:
                value, cost, top = bidder.last_valuation
                assert a <= top and (value > 0 or a == 0) and cost >= 0
                bids += 1
                bidder.last_valuation = None
            chosen.append((p, a))
        for p, a in chosen:
            game.apply(state, p, a)
    assert bids >= 15
