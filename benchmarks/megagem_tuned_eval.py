"""Win table of the tuned MegaGem bidder: tuned vs three HeuristicBidders, HeuristicBidder vs three tuned.

For each value chart (``--charts``, default A-E) at ``--players`` (default 4), ``--games`` seeded
games per cell and matchup, the focal agent's seat rotated through every seat (game g: seat
g mod players); both matchups play the same deals (seeds). Per chart and overall it prints the
focal agent's win rate (a shared win counts 1/winners) with its 95% Wilson interval, and per game:
mission coins, Loans and Investments won, and coins left unspent at the end.

The script has its own thresholds, checked at 4 players: tuned vs three HeuristicBidders wins at
least 40% (chance 25%), HeuristicBidder vs three tuned wins at most 20%. It prints PASS or FAIL
for each; with ``--check`` the exit status is 1 when an overall 95% interval does not clear its
threshold (lower bound >= 40%, upper bound <= 20%).

    python benchmarks/megagem_tuned_eval.py                        # the full table: 2,000 games per cell
    python benchmarks/megagem_tuned_eval.py --games 100 --workers 2  # a quick look
    python benchmarks/megagem_tuned_eval.py --weights runs/tune_megagem/w.json   # another weights file
"""
from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from gemenvs.arena.match import play_engine_game, wilson_interval
from gemenvs.agents.megagem import HeuristicBidder
from gemenvs.agents.megagem.tuned import TUNED_WEIGHTS_FILE, TunedBidder, WeightsError
from gemenvs.megagem import MegaGem
from gemenvs.megagem.data import CHART_NAMES
from gemenvs.arena.tournament import progress_bar

MATCHUPS = (("tuned", "heuristic"), ("heuristic", "tuned"))  # (focal, the three others)
#: (focal, others) -> the threshold of the overall win rate (the script's own, checked at 4 players)
TARGETS = {("tuned", "heuristic"): (">=", 0.40), ("heuristic", "tuned"): ("<=", 0.20)}
METRICS = ("missions", "loans", "investments", "coins_left")


def _agent(kind: str, game: MegaGem, weights_file: str | None):
    if kind == "tuned":
        return TunedBidder(spec=game.spec, action_spec=game.action_spec, weights_file=weights_file)
    return HeuristicBidder(spec=game.spec, action_spec=game.action_spec)


def play_cell(task: tuple) -> list[dict]:
    """Games ``first..first+count-1`` of one (chart, matchup) cell: the focal seat's metrics per game."""
    players, chart, focal, other, seeds, first, weights_file = task
    game = MegaGem(num_players=players, value_chart=chart)
    focal_agent = _agent(focal, game, weights_file)
    others = [_agent(other, game, weights_file) for _ in range(players - 1)]
    out = []
    for g, seed in zip(range(first, first + len(seeds)), seeds):
        seat = g % players
        agents = others[:seat] + [focal_agent] + others[seat:]
        state = play_engine_game(game, agents, seed)
        res = game.results(state)
        out.append({"win": 1.0 / len(res.winners) if seat in res.winners else 0.0,
                    "missions": float(res.breakdown[seat]["missions"]), "loans": float(len(state.loans[seat])),
                    "investments": float(len(state.investments[seat])), "coins_left": float(state.coins[seat])})
    return out


def evaluate(charts, players: int, games: int, seed: int, workers: int, weights_file: str | None,
             chunk: int = 100, progress: bool | None = False) -> dict:
    """(focal, other) -> chart -> list of per-game metric dicts (``progress``: a bar of the games on stderr)."""
    tasks, keys = [], []
    for ci, chart in enumerate(charts):
        seeds = [seed + 100_000 * CHART_NAMES.index(chart) + g for g in range(games)]
        for focal, other in MATCHUPS:
            for first in range(0, games, chunk):
                tasks.append((players, chart, focal, other, seeds[first:first + chunk], first, weights_file))
                keys.append(((focal, other), chart))
    results = []
    with progress_bar(len(charts) * len(MATCHUPS) * games, "games", progress, leave=False) as bar:
        if workers > 1:
            with ProcessPoolExecutor(workers) as pool:
                for res in pool.map(play_cell, tasks):  # (in order, each as soon as it and those before are done)
                    results.append(res)
                    bar.update(len(res))
        else:
            for t in tasks:
                results.append(play_cell(t))
                bar.update(len(results[-1]))
    out: dict = {m: {c: [] for c in charts} for m in MATCHUPS}
    for (m, chart), res in zip(keys, results):
        out[m][chart].extend(res)
    return out


def row(label: str, games: list[dict]) -> str:
    """One table row: win rate [95% interval], then the per-game metric means."""
    n = len(games)
    wins = sum(g["win"] for g in games)
    lo, hi = wilson_interval(wins, n)
    means = [np.mean([g[m] for g in games]) for m in METRICS]
    return (f"| {label} | {n} | {wins / n:.1%} [{lo:.1%}, {hi:.1%}] | " + " | ".join(f"{x:.2f}" for x in means)
            + " |")


def main(argv: list[str] | None = None) -> int:
    """Play the games and print the table (markdown); with --check, 1 when a threshold is missed."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=2000, help="games per chart and matchup (default 2000)")
    ap.add_argument("--players", type=int, default=4, choices=(3, 4, 5))
    ap.add_argument("--charts", default="ABCDE", help="value charts (default ABCDE)")
    ap.add_argument("--seed", type=int, default=500_000, help="game g of chart c has seed SEED + 100000 c + g")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--weights", default=None, help=f"weights file of the tuned bidder (default {TUNED_WEIGHTS_FILE})")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if an overall 95%% interval misses its threshold (4 players)")
    ap.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="a progress bar of the games on stderr (default: only when stderr is a terminal)")
    args = ap.parse_args(argv)
    charts = list(args.charts.upper())
    if not charts or any(c not in CHART_NAMES for c in charts) or args.games < 1:
        print("megagem_tuned_eval: --charts takes letters of ABCDE and --games must be >= 1", file=sys.stderr)
        return 2
    try:
        probe = MegaGem(num_players=args.players)
        source = TunedBidder(spec=probe.spec, action_spec=probe.action_spec, weights_file=args.weights).weights_source
    except (WeightsError, FileNotFoundError) as e:
        print(f"megagem_tuned_eval: {e}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    res = evaluate(charts, args.players, args.games, args.seed, args.workers, args.weights, progress=args.progress)
    print(f"MegaGem, {args.players} players, {args.games} games per chart and matchup, focal seat rotated, "
          f"seeds from {args.seed}; tuned weights: {source}; {time.perf_counter() - t0:.0f}s\n")
    ok = True
    for m in MATCHUPS:
        focal, other = m
        print(f"**{focal} vs {args.players - 1} x {other}** (chance {1 / args.players:.0%})\n")
        print("| chart | games | focal win [95% CI] | mission coins | loans | investments | coins left |")
        print("|---|---|---|---|---|---|---|")
        for chart in charts:
            print(row(chart, res[m][chart]))
        every = [g for chart in charts for g in res[m][chart]]
        print(row("all", every))
        op, target = TARGETS[m]
        lo, hi = wilson_interval(sum(g["win"] for g in every), len(every))
        rate = sum(g["win"] for g in every) / len(every)
        passed = lo >= target if op == ">=" else hi <= target
        if args.players == 4:
            ok &= passed
            print(f"\nthreshold {op} {target:.0%}: {'PASS' if passed else 'FAIL'} (win {rate:.1%}, 95% CI "
                  f"[{lo:.1%}, {hi:.1%}])")
        print()
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
