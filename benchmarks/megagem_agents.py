"""Win rates of the MegaGem baselines: HeuristicBidder against Random and Truthful fields.

HeuristicBidder plays ``--games`` seeded games against three (``--players`` - 1) copies of each
opponent type, rotating through every seat (``gemenvs.agents.run_match``); the script prints the
win rate with its 95% Wilson interval, the mean margin (own score minus the best other score)
with its 95% interval, and the agent's cost per decision. The script's own thresholds, checked at
4 players: at least 80% wins against RandomAgents and at least 60% against TruthfulAgents; the
table's threshold column says whether each lower Wilson bound clears it, and with ``--check`` the
exit status is 1 when one misses.

    python benchmarks/megagem_agents.py                 # 1,000 games per opponent type
    python benchmarks/megagem_agents.py --games 200 --players 5 --chart random
"""
from __future__ import annotations

import argparse
import sys

from gemenvs import megagem_v0
from gemenvs.agents import RandomAgent
from gemenvs.arena import run_match
from gemenvs.arena.match import TimedAgent
from gemenvs.agents.megagem import HeuristicBidder, TruthfulAgent
from gemenvs.arena.benchmark import CountGames
from gemenvs.arena.tournament import progress_bar

#: opponent type -> the least win rate of HeuristicBidder (the script's own threshold, 4 players)
TARGETS = {"random": 0.80, "truthful": 0.60}
OPPONENTS = {"random": RandomAgent, "truthful": TruthfulAgent}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1000, help="games per opponent type (default 1000)")
    ap.add_argument("--players", type=int, default=4, choices=(3, 4, 5))
    ap.add_argument("--chart", default="A", help="value chart A-E or 'random' (default A)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the first game (game g uses seed + g)")
    ap.add_argument("--opponents", default="random,truthful", help="comma-separated: random, truthful")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if a lower 95%% bound misses its threshold (4 players)")
    ap.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="progress bars on stderr (default: only when stderr is a terminal)")
    args = ap.parse_args(argv)

    def env_fn():
        return megagem_v0.env(num_players=args.players, value_chart=args.chart)

    env = env_fn()
    print(f"MegaGem {args.players} players, chart {args.chart}, {args.games} games per field, "
          f"seeds {args.seed}..{args.seed + args.games - 1}, focal seat rotated\n")
    print("| focal | opponents | games | win rate | 95% CI | mean margin | 95% CI | us/decision | threshold |")
    print("|---|---|---:|---:|---|---:|---|---:|---|")
    ok = True
    for name in args.opponents.split(","):
        opponents = [OPPONENTS[name].for_env(env, seed=100 + i) for i in range(args.players - 1)]
        focal = TimedAgent(HeuristicBidder.for_env(env, seed=1))
        with progress_bar(args.games, f"heuristic vs {name}", args.progress, leave=False) as bar:
            res = run_match(lambda: CountGames(env_fn(), bar), focal, opponents, args.games, seed=args.seed)
        lo, hi = res.win_ci
        mlo, mhi = res.margin_ci
        target = TARGETS.get(name)
        verdict = ""
        if target is not None and args.players == 4:
            passed = lo >= target
            ok &= passed
            verdict = f"lower bound >= {target:.0%}: {'PASS' if passed else 'FAIL'}"
        print(f"| heuristic | {args.players - 1} x {name} | {res.games:g} | {res.win_rate:.1%} | {lo:.1%} - {hi:.1%} | "
              f"{res.mean_margin:+.1f} | {mlo:+.1f} - {mhi:+.1f} | {focal.seconds / max(focal.decisions, 1) * 1e6:.0f} | "
              f"{verdict or '-'} |")
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
