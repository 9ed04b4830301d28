"""Strength and speed of the MegaGem search agent (ISMCTSAgent) at a few budgets.

For each budget (``--simulations``, default 4 and 16 simulations per decision) and each field of
three opponents (``--opponents``, default three HeuristicBidders and three tuned bidders), it plays
``--games`` seeded games at ``--players`` (default 4): the search agent's seat rotates (game g: seat
g mod players) and the value chart cycles through ``--charts`` (default A-E). The same deals are
played with a reference agent (each baseline) in the focal seat, so the rows compare side by side.
Per row: win rate (a shared win counts 1/winners) with its 95% Wilson interval, mean margin (own
score minus the best other) with a 95% interval, and the focal agent's decisions per CPU second
(``time.thread_time``, robust to a loaded machine; forced decisions excluded: the engine plays them).

    python benchmarks/ismcts_eval.py --games 40 --simulations 4 16
    python benchmarks/ismcts_eval.py --games 20 --simulations 64 --opponents tuned --rollout random
"""
from __future__ import annotations

import argparse
import json
import time

from gemenvs.arena.match import MatchResult, TimedAgent, play_engine_game
from gemenvs.agents.megagem import HeuristicBidder
from gemenvs.agents.megagem.tuned import TunedBidder
from gemenvs.agents.search import ISMCTSAgent
from gemenvs.megagem import MegaGem
from gemenvs.megagem.data import CHART_NAMES
from gemenvs.arena.tournament import progress_bar

BASELINES = {"heuristic": HeuristicBidder, "tuned": TunedBidder}


def play_row(focal_fn, opponent: str, games: int, players: int, charts, seed: int, bar=None
             ) -> tuple[MatchResult, int, float, float]:
    """``games`` games of ``focal_fn(game)`` against ``players - 1`` ``opponent`` baselines: the result,
    the focal agent's decisions and CPU seconds, and the wall seconds (``bar``: moved on once a game)."""
    result, start = MatchResult(), time.perf_counter()
    engines = {c: MegaGem(num_players=players, value_chart=c) for c in charts}
    focal = {c: TimedAgent(focal_fn(engines[c])) for c in charts}
    others = {c: [BASELINES[opponent](spec=engines[c].spec, action_spec=engines[c].action_spec)
                  for _ in range(players - 1)] for c in charts}
    for g in range(games):
        chart, seat = charts[g % len(charts)], g % players
        game = engines[chart]
        agents = others[chart][:seat] + [focal[chart]] + others[chart][seat:]
        res = game.results(play_engine_game(game, agents, seed + g))
        result.games += 1
        result.wins += 1.0 / len(res.winners) if seat in res.winners else 0.0
        result.scores.append(res.scores[seat])
        result.margins.append(res.scores[seat] - max(s for k, s in enumerate(res.scores) if k != seat))
        if bar is not None:
            bar.update(1)
    decisions = sum(t.decisions for t in focal.values())
    return result, decisions, sum(t.seconds for t in focal.values()), time.perf_counter() - start


def main(argv=None) -> list[dict]:
    """Parse the arguments, play every row, print a markdown table (and write ``--out`` as JSON)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=40, help="games per row (default 40)")
    ap.add_argument("--simulations", type=int, nargs="*", default=[4, 16],
                    help="budgets (simulations per decision); none: only the baseline rows")
    ap.add_argument("--determinizations", type=int, default=None, help="sampled states per decision (default: one per simulation)")
    ap.add_argument("--rollout", default="heuristic", help="rollout policy: random, heuristic, tuned or a policy path")
    ap.add_argument("--exploration", type=float, default=None, help="UCT constant (default: the agent's)")
    ap.add_argument("--opponents", nargs="+", default=["heuristic", "tuned"], choices=sorted(BASELINES))
    ap.add_argument("--players", type=int, default=4, choices=(3, 4, 5))
    ap.add_argument("--charts", nargs="+", default=list(CHART_NAMES), choices=list(CHART_NAMES))
    ap.add_argument("--no-reference", action="store_true", help="skip the baseline rows on the same deals")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write the rows as JSON here")
    ap.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="a progress bar of each row's games on stderr (default: only when stderr is a terminal)")
    args = ap.parse_args(argv)
    extra = {} if args.exploration is None else {"exploration": args.exploration}
    rows = []
    print(f"{args.players} players, charts {''.join(args.charts)} in turn, seats rotated, {args.games} games per row, "
          f"seeds {args.seed}..{args.seed + args.games - 1}, rollout {args.rollout}")
    print("| focal agent | opponents | win rate [95% CI] | mean margin [95% CI] | decisions / CPU s | wall s |")
    print("|---|---|---|---|---|---|")
    for opponent in args.opponents:
        focals = [] if args.no_reference else [(name, lambda game, cls=cls: cls(spec=game.spec, action_spec=game.action_spec))
                                               for name, cls in BASELINES.items()]
        for sims in args.simulations:
            focals.append((f"ismcts {sims} sims", lambda game, sims=sims: ISMCTSAgent(
                game, simulations=sims, determinizations=args.determinizations, rollout=args.rollout, seed=args.seed,
                **extra)))
        for name, fn in focals:
            with progress_bar(args.games, f"{name} vs {opponent}", args.progress, leave=False) as bar:
                res, decisions, seconds, wall = play_row(fn, opponent, args.games, args.players, args.charts,
                                                         args.seed, bar)
            lo, hi = res.win_ci
            mlo, mhi = res.margin_ci
            rate = decisions / seconds if seconds else float("inf")
            rows.append({"focal": name, "opponents": opponent, "games": res.games, "win_rate": res.win_rate,
                         "win_ci": [lo, hi], "mean_margin": res.mean_margin, "margin_ci": [mlo, mhi],
                         "decisions_per_cpu_s": rate, "wall_s": wall})
            print(f"| {name} | {args.players - 1} x {opponent} | {100 * res.win_rate:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] | "
                  f"{res.mean_margin:+.1f} [{mlo:+.1f}, {mhi:+.1f}] | {rate:,.0f} | {wall:.0f} |", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"args": vars(args), "rows": rows}, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
