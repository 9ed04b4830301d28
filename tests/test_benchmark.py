"""gemenvs-benchmark: frozen definitions, metrics read from the engine state, tables and one-line errors."""
from __future__ import annotations

import csv

import pytest

from gemenvs.arena.match import play_engine_game
from gemenvs.agents.registry import make_agent
from gemenvs.megagem.data import AUCTION_AMOUNT, AUCTION_TYPE
from gemenvs.arena import benchmark as B
from gemenvs.megagem_v0 import raw_env as megagem_env
from gemenvs.training import benchmark_cli
from gemenvs.training import exploitability as X


def test_definitions_are_frozen():
    """A changed definition must be published as a new version: these digests never change."""
    assert B.fingerprint(B.BENCHMARKS["megagem-bidding-v1"]) == "0e56484653c1"
    assert B.fingerprint(B.BENCHMARKS["gem-bidding-v1"]) == "33aa58b475d5"
    mg = B.BENCHMARKS["megagem-bidding-v1"]
    assert len(mg.cells) == 15 and {dict(c)["value_chart"] for c in mg.cells} == set("ABCDE")
    assert {dict(c)["num_players"] for c in mg.cells} == {3, 4, 5}


def test_megagem_metrics_add_up_to_the_score():
    env = megagem_env(num_players=4, value_chart="C")
    agents = [make_agent("megagem", name, env, seed=i) for i, name in enumerate(["heuristic", "truthful", "random",
                                                                                 "heuristic"])]
    for seed in range(3):
        state = play_engine_game(env.game, agents, seed)
        res = env.game.results(state)
        for seat in range(4):
            m = B.megagem_metrics(env.game, state, seat)
            won = [r for r in state.history if r.winner == seat]
            assert m["lots"] == len(won)
            assert m["loans"] == len(state.loans[seat]) and m["investments"] == len(state.investments[seat])
            b = res.breakdown[seat]
            start = env.game.opts.start_coins
            # the score is the start coins plus the profit of every lot won plus missions
            assert m["score"] == pytest.approx(start + m["profit"] + m["missions"]), (seed, seat, b)
            invest = sum(AUCTION_AMOUNT[r.card] for r in won if AUCTION_TYPE[r.card] == "invest")
            loans = -sum(r.bids[seat] for r in won if AUCTION_TYPE[r.card] == "loan")
            assert m["loan_invest_net"] == invest + loans and m["coins_left"] == b["coins"]


def test_gem_metrics_follow_the_log():
    from gemenvs.gem_v0 import raw_env

    env = raw_env(num_players=3)
    agents = [make_agent("gem", n, env, seed=i) for i, n in enumerate(["greedy", "random", "greedy"])]
    state = play_engine_game(env.game, agents, 5)
    total = 0
    for seat in range(3):
        m = B.gem_metrics(env.game, state, seat)
        assert m["held_cards"] == sum(1 for o in state.owner if o == seat) == m["cards"]
        assert m["score"] == m["gems"] + m["majorities"] and m["paid"] >= 0
        total += m["cards"]
    assert total == sum(1 for o in state.owner if o >= 0)


def test_a_quick_run_ranks_the_heuristic_above_random_and_is_reproducible():
    bench = B.BENCHMARKS["megagem-bidding-v1"]
    cells = [0, 1, 14]  # chart A with 3 and 4 players, chart E with 5
    assert [dict(bench.cells[c]) for c in cells] == [{"value_chart": "A", "num_players": 3},
                                                     {"value_chart": "A", "num_players": 4},
                                                     {"value_chart": "E", "num_players": 5}]
    results = B.run_benchmark(bench, ["random", "heuristic"], deals=1, cells=cells)
    assert len(results["random"]) == 3 + 4 + 5
    rows = B.summarize(bench, results)
    overall = {r["policy"]: r for r in rows if r["scope"] == "overall"}
    assert overall["heuristic"]["win_rate"] > overall["random"]["win_rate"]
    assert overall["heuristic"]["score"] > overall["random"]["score"]
    assert {(r["scope"], r["value"]) for r in rows if r["policy"] == "random"} >= {("value_chart", "E"),
                                                                                   ("num_players", 5)}
    assert B.run_benchmark(bench, ["random"], deals=1, cells=cells)["random"] == results["random"]


def test_cli_prints_and_writes_markdown_and_csv(tmp_path, capsys):
    assert B.main(["gem", "random", "greedy", "--deals", "1", "--out", str(tmp_path), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "gem-bidding-v1" in printed and "quick" in printed and "| greedy |" in printed
    text = (tmp_path / "gem-bidding-v1.md").read_text()
    assert "per player count" in text
    with open(tmp_path / "gem-bidding-v1.csv") as f:
        rows = list(csv.DictReader(f))
    assert {r["policy"] for r in rows} == {"random", "greedy"} and {r["scope"] for r in rows} == {"overall",
                                                                                                   "num_players"}


@pytest.mark.parametrize("argv,words", [
    (["poker", "random"], "unknown benchmark"),
    (["bidding", "nobody"], "unknown agent 'nobody'"),
    (["bidding", "missing/model.zip"], "no policy file"),
    (["bidding", "random", "--deals", "0"], "--deals"),
    (["bidding", "random", "random"], "listed twice"),
])
def test_bad_input_is_one_line_and_exit_2(argv, words, capsys, tmp_path):
    assert benchmark_cli.main(argv + ["--out", str(tmp_path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gemenvs-benchmark: error: ") and words in err, err


def test_exploitability_config_is_checked_and_a_tiny_run_reports_the_figure(tmp_path, capsys):
    import yaml

    cfg = X.load_exploit_config()
    assert cfg["name"] == "exploitability-v1" and cfg["total_timesteps"] == 100_000
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**cfg, "extra": 1}))
    with pytest.raises(B.TournamentError, match="exactly the keys"):
        X.load_exploit_config(bad)
    bad.write_text(yaml.safe_dump({**cfg, "eval_games": 0}))
    with pytest.raises(B.TournamentError, match="eval_games"):
        X.load_exploit_config(bad)
    tiny = {**cfg, "options": {"num_players": 3, "value_chart": "A"}, "total_timesteps": 64, "n_envs": 1,
            "eval_games": 3, "ppo": {**cfg["ppo"], "n_steps": 64, "batch_size": 64, "n_epochs": 1}}
    capsys.readouterr()
    row = X.exploitability("random", tiny, progress=True)
    err = capsys.readouterr().err
    assert "best response to random" in err and f"{row['timesteps']}/64" in err and "decision" in err, err
    assert "best response vs random" in err and "3/3" in err
    assert row["games"] == 3 and row["chance"] == pytest.approx(1 / 3) and row["timesteps"] >= 64
    assert row["exploitability"] == pytest.approx(row["win_rate"] - 1 / 3)
    assert "| random |" in X.exploit_markdown([row])


def test_progress_counts_games_and_workers_give_the_same_games(capsys):
    bench = B.BENCHMARKS["gem-bidding-v1"]
    one = B.run_benchmark(bench, ["random"], deals=2, cells=[0, 1], progress=True)
    err = capsys.readouterr().err
    # 2 deals from every seat: 2 x 2 games at 2 players, 2 x 3 at 3 players
    assert "gem-bidding-v1" in err and "10/10" in err and "game" in err, err
    assert B.run_benchmark(bench, ["random"], deals=2, cells=[0, 1], workers=2, progress=False) == one
    B.run_benchmark(bench, ["random"], deals=1, cells=[0])  # None: no terminal here, no bar
    assert capsys.readouterr().err == ""


def test_count_games_moves_a_bar_once_a_game_and_changes_nothing_else():
    from gemenvs.arena.match import run_match
    from gemenvs.arena.tournament import progress_bar

    def env_fn():
        return megagem_env(num_players=3)

    env = env_fn()
    focal = make_agent("megagem", "heuristic", env, seed=1)
    others = [make_agent("megagem", "random", env, seed=2 + i) for i in range(2)]
    plain = run_match(env_fn, focal, others, 4, seed=9)
    bar = progress_bar(4, "games", progress=False)
    counted = run_match(lambda: B.CountGames(env_fn(), bar), focal, others, 4, seed=9)
    assert (counted.wins, counted.scores, counted.margins) == (plain.wins, plain.scores, plain.margins)

    class Counter:
        n = 0

        def update(self, k):
            self.n += k

    seen = Counter()
    run_match(lambda: B.CountGames(env_fn(), seen), focal, others, 3, seed=9)
    assert seen.n == 3
