"""Acceptance benchmark for the MegaGem baselines: HeuristicBidder against Random and Truthful fields.

HeuristicBidder plays ``--games`` seeded games against three (``--players`` - 1) copies of each
opponent type, rotating through every seat (``gemenvs.agents.run_match``); the script prints the
win rate with its 95% Wilson interval, the mean margin (own score minus the best other score)
with its 95% interval, and the agent's cost per decision. Targets (4 players, chart A): at least
80% wins against RandomAgents and at least 60% against TruthfulAgents; with ``--check`` the exit
status is 1 when a lower Wilson bound misses its target.

    python benchmarks/megagem_agents.py                 # 1,000 games per opponent type
    python benchmarks/megagem_agents.py --games 200 --players 5 --chart random
"""
from __future__ import annotations

import argparse
import sys
import time

from gemenvs import megagem_v0
from gemenvs.agents import RandomAgent
from gemenvs.arena import run_match
from gemenvs.arena.match import TimedAgent
from gemenvs.agents.megagem import HeuristicBidder, TruthfulAgent
from gemenvs.arena.benchmark import CountGames
from gemenvs.arena.tournament import progress_bar

TARGETS = {"random": 0.80, "truthful": 0.60}
OPPONENTS = {"random": RandomAgent, "truthful": TruthfulAgent}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1000, help="games per opponent type (default 1000)")
    ap.add_argument("--players", type=int, default=4, choices=(3, 4, 5))
    ap.add_argument("--chart", default="A", help="value chart A-E or 'random' (default A)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the first game (game g uses seed + g)")
    ap.add_argument("--opponents", default="random,truthful", help="comma-separated: random, truthful")
    ap.add_argument("--check", action="store_true", help="exit 1 if a lower 95%% bound misses its target")
    ap.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="progress bars on stderr (default: only when stderr is a terminal)")
    args = ap.parse_args(argv)

    def env_fn():
        return megagem_v0.env(num_players=args.players, value_chart=args.chart)

    env = env_fn()
    print(f"MegaGem {args.players} players, chart {args.chart}, {args.games} games per field, "
          f"seeds {args.seed}..{args.seed + args.games - 1}, focal seat rotated")
    ok = True
    for name in args.opponents.split(","):
        opponents = [OPPONENTS[name].for_env(env, seed=100 + i) for i in range(args.players - 1)]
        focal = TimedAgent(HeuristicBidder.for_env(env, seed=1))
        t0 = time.perf_counter()
        with progress_bar(args.games, f"heuristic vs {name}", args.progress, leave=False) as bar:
            res = run_match(lambda: CountGames(env_fn(), bar), focal, opponents, args.games, seed=args.seed)
        wall = time.perf_counter() - t0
        lo, hi = res.win_ci
        mlo, mhi = res.margin_ci
        target = TARGETS.get(name)
        verdict = ""
        if target is not None and args.players == 4:
            passed = lo >= target
            ok &= passed
            verdict = f"  target >= {target:.0%}: {'PASS' if passed else 'FAIL'} (lower bound {lo:.1%})"
        print(f"heuristic vs {args.players - 1} x {name:8s} win {res.win_rate:6.1%}  95% CI [{lo:.1%}, {hi:.1%}]  "
              f"mean margin {res.mean_margin:+6.1f} [{mlo:+.1f}, {mhi:+.1f}]  "
              f"{focal.seconds / max(focal.decisions, 1) * 1e6:.0f} us/decision  {wall:.1f}s{verdict}")
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
