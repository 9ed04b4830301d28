"""Win rates of the Gem Jam baseline: GemJamRuleAgent against RandomAgents.

GemJamRuleAgent plays ``--games`` seeded games against ``players - 1`` RandomAgents at each player
count of ``--players``, rotating through every seat (``gemenvs.agents.run_match``: game g uses
seed ``--seed`` + g and puts the rule agent in seat g mod players); a shared win counts as
1/(number of winners). The script prints the win rate with its 95% Wilson interval, the mean
margin (own completed sets minus the best other player's) with its 95% interval, and the agent's
cost per decision. The script's own threshold, at 3 players: at least 70% wins; the table's
threshold column says whether the lower Wilson bound clears it, and with ``--check`` the exit
status is 1 when it misses.

    python benchmarks/gemjam_agents.py                  # 1,000 games at 2, 3 and 4 players
    python benchmarks/gemjam_agents.py --games 200 --players 3 --check
"""
from __future__ import annotations

import argparse
import sys

from gemenvs import gemjam_v0
from gemenvs.agents import RandomAgent
from gemenvs.arena import run_match
from gemenvs.arena.match import TimedAgent
from gemenvs.agents.gemjam import GemJamRuleAgent
from gemenvs.arena.benchmark import CountGames
from gemenvs.arena.tournament import progress_bar

#: player count -> the least win rate of the rule agent against random players (the script's own threshold)
TARGETS = {3: 0.70}


def _player_counts(text: str) -> list[int]:
    """Parse ``--players`` ("3" or "2,3,4"); each count must be one Gem Jam supports."""
    try:
        counts = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"player counts are integers such as 3 or 2,3,4; got {text!r}") from None
    bad = [n for n in counts if n not in (2, 3, 4)]
    if bad:
        raise argparse.ArgumentTypeError(f"Gem Jam has 2 to 4 players; got {bad}")
    return counts


def main(argv: list[str] | None = None) -> int:
    """Run the matches; return the exit status (1 with ``--check`` when a threshold is missed)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1000, help="games per player count (default 1000)")
    ap.add_argument("--players", type=_player_counts, default=[2, 3, 4], help="player counts (default 2,3,4)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the first game (game g uses seed + g)")
    ap.add_argument("--check", action="store_true", help="exit 1 if a lower 95%% bound misses its threshold")
    ap.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="progress bars on stderr (default: only when stderr is a terminal)")
    args = ap.parse_args(argv)
    if args.games <= 0:
        ap.error("--games must be positive")

    print(f"Gem Jam: GemJamRuleAgent vs RandomAgents, {args.games} games per player count, "
          f"seeds {args.seed}..{args.seed + args.games - 1}, rule agent's seat rotated, default options\n")
    print("| players | focal | opponents | games | win rate | 95% CI | mean margin (sets) | 95% CI | us/decision | threshold |")
    print("|---:|---|---|---:|---:|---|---:|---|---:|---|")
    ok = True
    for n in args.players:
        def env_fn(n=n):
            return gemjam_v0.env(num_players=n)

        env = env_fn()
        opponents = [RandomAgent.for_env(env, seed=100 + i) for i in range(n - 1)]
        focal = TimedAgent(GemJamRuleAgent.for_env(env, seed=1))
        env.close()
        with progress_bar(args.games, f"{n} players", args.progress, leave=False) as bar:
            res = run_match(lambda: CountGames(env_fn(), bar), focal, opponents, args.games, seed=args.seed)
        lo, hi = res.win_ci
        mlo, mhi = res.margin_ci
        target = TARGETS.get(n)
        verdict = ""
        if target is not None:
            passed = lo >= target
            ok &= passed
            verdict = f"lower bound >= {target:.0%}: {'PASS' if passed else 'FAIL'}"
        print(f"| {n} | rule | {n - 1} x random | {res.games:g} | {res.win_rate:.1%} | {lo:.1%} - {hi:.1%} | "
              f"{res.mean_margin:+.2f} | {mlo:+.2f} - {mhi:+.2f} | {focal.seconds / max(focal.decisions, 1) * 1e6:.0f} | "
              f"{verdict or '-'} |")
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
