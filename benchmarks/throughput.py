"""Agent decisions per second of random masked play, and memory per environment instance.

Every environment is played by the same loop with the same seeds: at each decision the loop
builds the acting agent's observation and mask (``env.last()`` for AEC environments, the dict
returned by ``step`` for Parallel ones) and samples an action uniformly among the legal ones.
PettingZoo's own ``texas_holdem_v4`` and ``connect_four_v3`` (made through PettingZoo's registry,
``pettingzoo.make("aec", "classic/texas_holdem-v4")``) run in the same process as references; every
rate is also shown as a ratio to ``texas_holdem_v4``.

    python benchmarks/throughput.py                    # ~5 s per environment, 4 MegaGem players
    python benchmarks/throughput.py --seconds 2 --players 5
    python benchmarks/throughput.py --profile "MegaGem env()"   # cProfile of one entry instead

Every registered game is measured (:func:`game_entries`, from the games' entries).

Gem Jam game length. After the table, the script plays seeded Gem Jam games at 2, 3 and 4
players under two policies and prints, per player count, how games end (four sets, deck-out,
``max_rounds``; draws, i.e. shared wins) and their length in decisions (every logged decision,
forced ones included, and the agents' own, non-forced ones) and in rounds: uniformly random play
at the engine level (``--length-games``, default 500 per player count) and every seat played by
``GemJamRuleAgent`` through ``gemjam_v0.env()`` (``--rule-games``, default 50).
``python -m benchmarks.report gemjam-length --write`` puts that table, stamped, into ``docs/gemjam.md``.

    python benchmarks/throughput.py --only-lengths --length-games 2000 --rule-games 200
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import subprocess
import sys
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # the peers import pygame

import numpy as np
from pettingzoo import AECEnv, ParallelEnv

from gemenvs.arena.tournament import progress_bar


def _seats(entry, players: int) -> int:
    """``players`` moved into the game's player counts (GEM and Gem Jam seat 2-4)."""
    counts = entry.player_counts
    return min(max(players, min(counts)), max(counts))


def game_entries() -> list[tuple[str, Callable[[int], AECEnv | ParallelEnv]]]:
    """``<title> env()`` of every registered game, and ``<title> parallel_env()`` of the games whose seats
    decide at once (``GameEntry.simultaneous``), in the order registered."""
    import gemenvs

    out = []
    for e in gemenvs.entries():
        made = e.env_functions()
        out.append((f"{e.title} env()", lambda players, e=e, make=made.env: make(num_players=_seats(e, players))))
        if e.simultaneous:
            out.append((f"{e.title} parallel_env()",
                        lambda players, e=e, make=made.parallel_env: make(num_players=_seats(e, players))))
    return out


def _texas_holdem_env(players: int) -> AECEnv:
    import pettingzoo
    return pettingzoo.make("aec", "classic/texas_holdem-v4")  # texas_holdem_v4.env(), from the registry


def _connect_four_env(players: int) -> AECEnv:
    import pettingzoo
    return pettingzoo.make("aec", "classic/connect_four-v3")  # connect_four_v3.env(), from the registry


#: label of the reference entry every rate is divided by
REFERENCE = "texas_holdem_v4 env()"

#: (label, constructor taking the --players value) of every registered game and the references; AEC or
#: Parallel is read from the env's type
ENTRIES: list[tuple[str, Callable[[int], AECEnv | ParallelEnv]]] = [
    *game_entries(),
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


class Player:
    """Random masked play of one env: whole games, seeded once, resumable in time slices."""

    def __init__(self, env: AECEnv | ParallelEnv, seed: int):
        self.env, self.seed = env, seed
        self.rng = np.random.default_rng(seed)  # the action RNG: same seed for every env
        self.parallel = isinstance(env, ParallelEnv)
        self.decisions = self.games = 0
        self.elapsed = 0.0

    def play_game(self) -> int:
        """Reset (with the seed on the first game only) and play one game; return its decisions."""
        seed = self.seed if self.games == 0 else None
        if self.parallel:
            obs, _infos = self.env.reset(seed=seed)
            return play_parallel_game(self.env, obs, self.rng)
        self.env.reset(seed=seed)
        return play_aec_game(self.env, self.rng)

    def play_for(self, seconds: float) -> None:
        """Play whole games until ``seconds`` have passed (at least one game)."""
        start = time.perf_counter()
        spent = 0.0
        while spent < seconds or spent == 0.0:
            self.decisions += self.play_game()
            self.games += 1
            spent = time.perf_counter() - start
        self.elapsed += spent


def _rss_bytes() -> int | None:
    """Resident set size of this process, or None where /proc is unavailable."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def memory_per_instance(make: Callable[[], AECEnv | ParallelEnv], seed: int, count: int) -> dict:
    """Bytes per live instance, created and reset: RSS delta and tracemalloc delta over ``count``.

    Meant to run in a fresh interpreter (see :func:`measure_memory`), where no memory freed by
    earlier work can hide the growth of the resident set.
    """
    warm = make()  # first-use costs (imports, caches) are not per instance
    warm.reset(seed=seed)
    gc.collect()
    rss0 = _rss_bytes()
    envs = []
    for i in range(count):
        envs.append(make())
        envs[-1].reset(seed=seed + i)
    gc.collect()
    rss1 = _rss_bytes()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    more = []
    for i in range(count):
        more.append(make())
        more[-1].reset(seed=seed + i)
    gc.collect()
    traced = (tracemalloc.get_traced_memory()[0] - before) / count
    tracemalloc.stop()
    rss = None if rss0 is None or rss1 is None else (rss1 - rss0) / count
    return {"traced": traced, "rss": rss}


def measure_memory(label: str, args: argparse.Namespace) -> dict:
    """:func:`memory_per_instance` of entry ``label``, run in a fresh Python process."""
    cmd = [sys.executable, os.path.abspath(__file__), "--memory-of", label, "--players", str(args.players),
           "--seed", str(args.seed), "--instances", str(args.instances)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _kib(x: float | None) -> str:
    return "n/a" if x is None else f"{x / 1024:.1f}"


def run(args: argparse.Namespace) -> list[dict]:
    """Measure every entry; return one row per entry.

    The playing time is cut into ``--rounds`` slices taken in turn by every entry, so that a
    change in the machine's load during the run weighs on all of them alike.
    """
    makers = [(label, (lambda construct=construct: construct(args.players))) for label, construct in ENTRIES]
    players = []
    for _label, make in makers:
        warm = Player(make(), args.seed)
        for _ in range(2):  # imports and first-use caches
            warm.play_game()
        warm.env.close()
        players.append(Player(make(), args.seed))
    # (the bar moves between slices only: nothing of it runs inside a timed slice)
    progress = getattr(args, "progress", None)
    with progress_bar(args.rounds * len(players), "random play", progress, unit="slice", leave=False) as bar:
        for _ in range(args.rounds):
            for (label, _make), player in zip(makers, players):
                bar.set_postfix_str(label, refresh=False)
                player.play_for(args.seconds / args.rounds)
                bar.update(1)
    rows = []
    bar = progress_bar(len(makers), "memory per instance", progress, unit="env", leave=False)
    for (label, make), player in zip(makers, players):
        player.env.close()
        memory = measure_memory(label, args)
        bar.update(1)
        rows.append({
            "label": label, "api": "parallel" if player.parallel else "aec",
            "agents": len(player.env.possible_agents), "decisions": player.decisions, "games": player.games,
            "seconds": player.elapsed, "rate": player.decisions / player.elapsed,
            "per_game": player.decisions / player.games, **memory,
        })
    bar.close()
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

    def line(row) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))

    print(f"Random masked play, seed {args.seed}, ~{args.seconds:g} s per environment in {args.rounds} turns, "
          f"players of the gemenvs games {args.players} (GEM and Gem Jam at most 4), "
          f"Python {sys.version.split()[0]}, numpy {np.__version__}")
    print(line(table[0]))
    print("  ".join("-" * w for w in widths))
    for row in table[1:]:
        print(line(row))


# ------------------------------------------------------------------ Gem Jam game length

#: the docs page and the markers around the measured game-length table (not ``<!-- BEGIN name -->``:
#: those blocks belong to docs/gen_tables.py, which derives them and checks them for drift)
#: how a Gem Jam game may end (``Results.extra["end_reason"]``)
END_REASONS = ("four_sets", "deck_out", "max_rounds")


class GameWatch:
    """Follows one Gem Jam game decision by decision: the longest turn in decisions and the most
    sets one Shrine held."""

    def __init__(self, state):
        self.turn, self.start, self.longest_turn, self.most_sets = (state.round, state.turn), 0, 0, 0
        self.see(state)

    def see(self, state) -> None:
        """Take note of ``state`` (after a decision, or the final one)."""
        self.most_sets = max(self.most_sets, *map(len, state.shrines))
        if (state.round, state.turn) != self.turn or state.over:
            self.longest_turn = max(self.longest_turn, len(state.log) - self.start)
            self.turn, self.start = (state.round, state.turn), len(state.log)


def gemjam_random_game(game, seed: int):
    """One Gem Jam game of uniformly random legal play at the engine level: (final state, watch)."""
    rng = np.random.default_rng(seed)
    state = game.new_state(seed)
    watch = GameWatch(state)
    while not game.is_over(state):
        (p,) = game.to_act(state)
        legal = game.legal_actions(state, p)
        game.apply_legal(state, p, int(legal[rng.integers(legal.size)]))
        watch.see(state)
    return state, watch


def gemjam_rule_games(players: int, games: int, seed: int):
    """(final state, watch) of ``games`` Gem Jam games with every seat played by GemJamRuleAgent
    through ``gemjam_v0.env()``; game g has seed ``seed + g``."""
    from gemenvs import gemjam_v0
    from gemenvs.agents.gemjam import GemJamRuleAgent

    env = gemjam_v0.env(num_players=players)
    agents = [GemJamRuleAgent.for_env(env, seed=i) for i in range(players)]
    seat = {a: i for i, a in enumerate(env.possible_agents)}
    for g in range(games):
        env.reset(seed=seed + g)
        for i, agent in enumerate(agents):
            agent.reset(seed=(seed + g) * 1009 + i)
        watch = GameWatch(env.unwrapped.game_state)
        for name in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            env.step(agents[seat[name]].act(obs["observation"], obs["action_mask"]))
            watch.see(env.unwrapped.game_state)
        yield env.unwrapped.game_state, watch
    env.close()


def length_stats(games) -> dict:
    """End mix and length (decisions, agent decisions, rounds, longest turn, most sets in one
    Shrine) of finished Gem Jam games given as (state, watch)."""
    ends, draws, decisions, agent_decisions, rounds, turns, sets = Counter(), 0, [], [], [], [], []
    for s, watch in games:
        ends[s.end_reason] += 1
        draws += len(s.winners) > 1
        decisions.append(len(s.log))
        agent_decisions.append(sum(1 for _p, _a, forced in s.log if not forced))
        rounds.append(s.round)
        turns.append(watch.longest_turn)
        sets.append(watch.most_sets)
    return {"games": len(decisions), "ends": ends, "draws": draws, "decisions": decisions,
            "agent_decisions": agent_decisions, "rounds": rounds, "longest_turn": max(turns), "most_sets": max(sets)}


def gemjam_lengths(args: argparse.Namespace) -> list[dict]:
    """One row per (policy, player count): random play, then all seats GemJamRuleAgent."""
    from gemenvs.gemjam import GemJam

    rows = []
    progress = getattr(args, "progress", None)
    for policy, games in (("random", args.length_games), ("rule", args.rule_games)):
        for players in (2, 3, 4):
            if games <= 0:
                continue
            if policy == "random":
                game = GemJam(num_players=players)
                states = (gemjam_random_game(game, args.seed + g) for g in range(games))
            else:
                states = gemjam_rule_games(players, games, args.seed)
            states = progress_bar(games, f"Gem Jam {policy}, {players} players", progress, leave=False,
                                  iterable=states)
            rows.append({"policy": policy, "players": players, **length_stats(states)})
    return rows


_POLICY_TEXT = {"random": "random", "rule": "all `GemJamRuleAgent`"}


def length_table(rows: list[dict]) -> str:
    """The Gem Jam game-length rows as a markdown table."""
    out = ["| players | policy | games | four sets | deck-out | `max_rounds` | draws | decisions, mean / max "
           "| agent decisions, mean / max | rounds, mean / max | longest turn | most sets in one Shrine |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        def mean_max(xs):
            return f"{np.mean(xs):.0f} / {max(xs)}"
        out.append(f"| {r['players']} | {_POLICY_TEXT[r['policy']]} | {r['games']} | "
                   + " | ".join(str(r["ends"][e]) for e in END_REASONS)
                   + f" | {r['draws']} | {mean_max(r['decisions'])} | {mean_max(r['agent_decisions'])} | "
                     f"{mean_max(r['rounds'])} | {r['longest_turn']} | {r['most_sets']} |")
    return "\n".join(out)


def profile(label: str, args: argparse.Namespace) -> None:
    """cProfile one entry's random play for ``--seconds`` and print the top functions."""
    construct = dict(ENTRIES).get(label)
    if construct is None:
        raise SystemExit(f"--profile must be one of {', '.join(repr(lbl) for lbl, _ in ENTRIES)}; got {label!r}")
    player = Player(construct(args.players), args.seed)
    player.play_game()
    prof = cProfile.Profile()
    prof.enable()
    player.play_for(args.seconds)
    prof.disable()
    print(f"{label}: {player.decisions} decisions in {player.games} games, {player.elapsed:.2f} s under cProfile")
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
    parser.add_argument("--rounds", type=int, default=5, help="time slices taken in turn by the envs (default 5)")
    parser.add_argument("--instances", type=int, default=100, 
                        help="live instances for the memory figures (default 100)")
    parser.add_argument("--profile", metavar="LABEL", help="cProfile this entry instead of printing the table")
    parser.add_argument("--length-games", type=int, default=500,
                        help="Gem Jam games of random play per player count for the length table (default 500; 0: none)")
    parser.add_argument("--rule-games", type=int, default=50,
                        help="Gem Jam games of GemJamRuleAgent play per player count (default 50; 0: none)")
    parser.add_argument("--only-lengths", action="store_true", help="only the Gem Jam length table, no throughput")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress bars on stderr, between timed slices (default: only when stderr is a terminal)")
    parser.add_argument("--memory-of", metavar="LABEL", help=argparse.SUPPRESS)  # the memory subprocess
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.instances <= 0 or args.rounds <= 0:
        parser.error("--seconds, --rounds and --instances must be positive")
    if args.length_games < 0 or args.rule_games < 0:
        parser.error("--length-games and --rule-games must be 0 or more")
    if args.memory_of:
        construct = dict(ENTRIES)[args.memory_of]
        print(json.dumps(memory_per_instance(lambda: construct(args.players), args.seed, args.instances)))
        return
    if args.profile:
        profile(args.profile, args)
        return
    if not args.only_lengths:
        print_table(run(args), args)
    if args.length_games or args.rule_games:
        t0 = time.perf_counter()
        rows = gemjam_lengths(args)
        print(f"\nGem Jam game length and end (seed {args.seed}, {time.perf_counter() - t0:.0f} s):")
        print(length_table(rows))


if __name__ == "__main__":
    main()
