"""Agent decisions per second of random masked play, and memory per environment instance.

Every environment is played by the same loop with the same seeds: at each decision the loop
builds the acting agent's observation and mask (``env.last()`` for AEC environments, the dict
returned by ``step`` for Parallel ones) and samples an action uniformly among the legal ones.
PettingZoo's own ``texas_holdem_v4`` and ``connect_four_v3`` run in the same process as
references; every rate is also shown as a ratio to ``texas_holdem_v4``.

    python benchmarks/throughput.py                    # ~5 s per environment, 4 MegaGem players
    python benchmarks/throughput.py --seconds 2 --players 5
    python benchmarks/throughput.py --profile "MegaGem env()"   # cProfile of one entry instead

To add a game, add one line to :data:`ENTRIES`.
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import pstats
import sys
import time
import tracemalloc
from collections.abc import Callable

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # the peers import pygame

import numpy as np
from pettingzoo import AECEnv, ParallelEnv


def _megagem_env(players: int) -> AECEnv:
    from gemenvs import megagem_v0
    return megagem_v0.env(num_players=players)


def _megagem_parallel_env(players: int) -> ParallelEnv:
    from gemenvs import megagem_v0
    return megagem_v0.parallel_env(num_players=players)


def _texas_holdem_env(players: int) -> AECEnv:
    from pettingzoo.classic import texas_holdem_v4
    return texas_holdem_v4.env()


def _connect_four_env(players: int) -> AECEnv:
    from pettingzoo.classic import connect_four_v3
    return connect_four_v3.env()


#: label of the reference entry every rate is divided by
REFERENCE = "texas_holdem_v4 env()"

#: (label, constructor taking the --players value); AEC or Parallel is read from the env's type
ENTRIES: list[tuple[str, Callable[[int], AECEnv | ParallelEnv]]] = [
    ("MegaGem env()", _megagem_env),
    ("MegaGem parallel_env()", _megagem_parallel_env),
    (REFERENCE, _texas_holdem_env),
    ("connect_four_v3 env()", _connect_four_env),
]


def _pick(mask: np.ndarray, rng: np.random.Generator) -> int:
    """A uniformly random legal action of ``mask``."""
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(len(legal))])


def play_aec_game(env: AECEnv, rng: np.random.Generator) -> int:
    """Play one game of a reset AEC env with random masked actions; return the decisions taken."""
    decisions = 0
    for _agent in env.agent_iter():
        obs, _reward, terminated, truncated, _info = env.last()
        if terminated or truncated:
            env.step(None)
        else:
            env.step(_pick(obs["action_mask"], rng))
            decisions += 1
    return decisions


def play_parallel_game(env: ParallelEnv, obs: dict, rng: np.random.Generator) -> int:
    """Play one game of a Parallel env from its reset observations; one decision per acting agent."""
    decisions = 0
    while env.agents:
        actions = {}
        for agent in env.agents:
            mask = obs[agent]["action_mask"]
            if mask.any():  # an agent that is not to act has an all-zero mask
                actions[agent] = _pick(mask, rng)
        decisions += len(actions)
        obs, _rewards, _terms, _truncs, _infos = env.step(actions)
    return decisions


def play_games(env: AECEnv | ParallelEnv, seed: int, seconds: float, max_games: int | None = None) -> tuple[int, int, float]:
    """Play whole games until ``seconds`` have passed; return (decisions, games, elapsed seconds).

    The env is seeded once, on its first reset; the action RNG is seeded with the same ``seed``.
    """
    rng = np.random.default_rng(seed)
    parallel = isinstance(env, ParallelEnv)
    decisions = games = 0
    start = time.perf_counter()
    elapsed = 0.0
    while elapsed < seconds and (max_games is None or games < max_games):
        if parallel:
            obs, _infos = env.reset(seed=seed if games == 0 else None)
            decisions += play_parallel_game(env, obs, rng)
        else:
            env.reset(seed=seed if games == 0 else None)
            decisions += play_aec_game(env, rng)
        games += 1
        elapsed = time.perf_counter() - start
    return decisions, games, elapsed


def _rss_bytes() -> int | None:
    """Resident set size of this process, or None where /proc is unavailable."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def memory_per_instance(make: Callable[[], AECEnv | ParallelEnv], seed: int, count: int) -> tuple[float, float | None]:
    """Bytes per live instance (created and reset): (tracemalloc delta, RSS delta) over ``count``."""
    warm = make()  # first-use costs (imports, caches) are not per instance
    warm.reset(seed=seed)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    envs = []
    for i in range(count):
        e = make()
        e.reset(seed=seed + i)
        envs.append(e)
    gc.collect()
    traced = (tracemalloc.get_traced_memory()[0] - before) / count
    tracemalloc.stop()
    del envs
    gc.collect()
    rss0 = _rss_bytes()
    envs = []
    for i in range(count):
        e = make()
        e.reset(seed=seed + i)
        envs.append(e)
    gc.collect()
    rss1 = _rss_bytes()
    del envs, warm
    gc.collect()
    rss = None if rss0 is None or rss1 is None else (rss1 - rss0) / count
    return traced, rss


def _kib(x: float | None) -> str:
    return "n/a" if x is None else f"{x / 1024:.1f}"


def run(args: argparse.Namespace) -> list[dict]:
    """Measure every entry; return one row per entry."""
    rows = []
    for label, construct in ENTRIES:
        def make(construct=construct):
            return construct(args.players)
        env = make()
        n_agents = len(env.possible_agents)
        play_games(env, args.seed, 0.0, max_games=2)  # warm-up: imports, caches
        decisions, games, elapsed = play_games(env, args.seed, args.seconds)
        env.close()
        traced, rss = memory_per_instance(make, args.seed, args.instances)
        rows.append({
            "label": label, "api": "parallel" if isinstance(env, ParallelEnv) else "aec", "agents": n_agents,
            "decisions": decisions, "games": games, "seconds": elapsed, "rate": decisions / elapsed,
            "per_game": decisions / games, "traced": traced, "rss": rss,
        })
        print(f"  measured {label}: {decisions / elapsed:,.0f} decisions/s", file=sys.stderr, flush=True)
    return rows


def print_table(rows: list[dict], args: argparse.Namespace) -> None:
    """The side-by-side table of every entry, rates also as a ratio to the reference."""
    ref = next((r["rate"] for r in rows if r["label"] == REFERENCE), None)
    head = ("environment", "api", "agents", "decisions/s", "x " + REFERENCE.split()[0], "us/decision",
            "decisions/game", "games", "KiB/inst (traced)", f"KiB/inst (RSS/{args.instances})")
    table = [head]
    for r in rows:
        table.append((
            r["label"], r["api"], str(r["agents"]), f"{r['rate']:,.0f}",
            "n/a" if ref is None else f"{r['rate'] / ref:.2f}", f"{1e6 / r['rate']:.1f}",
            f"{r['per_game']:.1f}", str(r["games"]), _kib(r["traced"]), _kib(r["rss"]),
        ))
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    line = lambda row: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))  # noqa: E731
    print(f"Random masked play, seed {args.seed}, ~{args.seconds:g} s per environment, MegaGem players {args.players}, "
          f"Python {sys.version.split()[0]}, numpy {np.__version__}")
    print(line(table[0]))
    print("  ".join("-" * w for w in widths))
    for row in table[1:]:
        print(line(row))


def profile(label: str, args: argparse.Namespace) -> None:
    """cProfile one entry's random play for ``--seconds`` and print the top functions."""
    construct = dict(ENTRIES).get(label)
    if construct is None:
        raise SystemExit(f"--profile must be one of {', '.join(repr(lbl) for lbl, _ in ENTRIES)}; got {label!r}")
    env = construct(args.players)
    play_games(env, args.seed, 0.0, max_games=2)
    prof = cProfile.Profile()
    prof.enable()
    decisions, games, elapsed = play_games(env, args.seed, args.seconds)
    prof.disable()
    print(f"{label}: {decisions} decisions in {games} games, {elapsed:.2f} s under cProfile")
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(25)
    print(out.getvalue())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="playing time per environment (default 5)")
    parser.add_argument("--players", type=int, default=4, help="players of the gemenvs games (default 4)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every env's first reset and of the action RNG")
    parser.add_argument("--instances", type=int, default=100, help="live instances for the memory figures (default 100)")
    parser.add_argument("--profile", metavar="LABEL", help="cProfile this entry instead of printing the table")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.instances <= 0:
        parser.error("--seconds and --instances must be positive")
    if args.profile:
        profile(args.profile, args)
        return
    print_table(run(args), args)


if __name__ == "__main__":
    main()
