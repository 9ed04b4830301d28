"""Tournaments: rank any set of agents of one game fairly, with intervals, ratings and pictures.

    gemenvs-tournament --game megagem --players 4 --agents random truthful heuristic \\
        runs/x/best_model.npz --games 2000 --value-chart random --workers 2 --out runs/tournaments/t1

**Schedule.** A *lineup* is the set of agents at one table. With at least as many agents as seats,
the lineups are every ``players``-subset of the agents; with fewer, every multiset of ``players``
agents holding at least two different agents. Either set is unchanged when the agents are
renamed, so every agent appears equally often and every pair meets equally often. Each lineup
is played ``players`` times, rotated so that each of its agents sits once in every seat (one
*deal*: with ``duplicate`` the rotations replay the same seed, so luck of the deal cancels);
odd cycles reverse the lineup, so who sits left of whom is balanced too. A *cycle* is every
lineup of every rotation; ``--games`` is rounded up to whole cycles, which keeps the schedule
balanced.

**Seeds.** Deal ``d`` (cycle ``c``, lineup ``l``: ``d = c * lineups + l``) is game seed ``seed + d``
(without ``duplicate`` every game ``g`` has seed ``seed + g``); the agent in seat ``s`` of game
``g`` is reseeded from ``(seed, g, s)``. Games run directly on the core engine
(:func:`gemenvs.arena.match.play_engine_game`), each agent seeing only its own seat; a search agent
(``ismcts:N``) is handed the engine state through :func:`gemenvs.agents.base.decide` and searches
only states its seat cannot tell apart. An agent may be another program that plays over the JSON-lines
protocol (``cmd:python my_agent.py``, ``tcp:HOST:PORT``, ``unix:PATH``; :mod:`gemenvs.agents.protocol`): each
(agent, seat) of a process starts its own copy of the program (so ``--workers`` works too), whose stderr goes
to ``--out``/:data:`PROTOCOL_LOGS`; a program that is too slow (``--decision-timeout``, ``--game-timeout``),
crashes or keeps answering badly (after ``--retries``) *forfeits* that game, which counts as a loss (its
seat ranks last, never among the winners), and the tournament goes on.

**Results.** Every game is one JSON line of ``results.jsonl`` (index, deal, seed, seats, options,
scores, winners, ranks and the engine's decision log; ``forfeits``, every seat's forfeit reason or null, only in a game
where a seat forfeited), appended as games finish. A killed
tournament started again with the same command and ``--out`` plays only the missing games; the
summary is always computed from the results sorted by game index, so the numbers do not depend
on workers, order of completion or interruptions. :func:`replay_record` replays a line through
the engine and checks its final scores; a resumed tournament replays every stored line before it
trusts it (:func:`read_results`: the line must be the scheduled game, and its scores, winners and
ranks those of its replay); a line that is not is a one-line error naming it (only a last line cut
by a kill is skipped). While games are played, a bar on stderr counts the games of
the schedule played (a resumed tournament's starts at those already played) with the time left; it
is drawn when stderr is a terminal (``progress``, :func:`progress_bar`).

**Files.** ``--out`` is a folder the tournament owns: it writes :data:`TOURNAMENT_MARKER` there
when it makes the folder (or finds it empty), and writes into an existing folder without that
marker only with ``--overwrite``. Every file is written all or nothing and never through a
symbolic link (:mod:`gemenvs.files`); nothing outside ``--out`` is touched.

**Summary.** Per agent (over its seat-games): win rate (a shared win counts 1/winners; Wilson 95%
interval), mean score, mean margin (own score minus the best other score) and mean rank (1 =
first; tied seats share the mean of their places), each with a normal 95% interval treating
seat-games as independent; an ``openskill`` Plackett-Luce rating (mu, sigma; ordinal mu - 3 sigma,
rated in game-index order) and a head-to-head matrix (how often the row agent finished ahead of
the column agent when both sat at one table; ties count half). Per agent too, its forfeits and those of
them that were timeouts: columns of ``leaderboard.csv`` and ``summary.json`` always, of the Markdown
leaderboard when some agent forfeited.
"""
from __future__ import annotations

import argparse
import csv
import itertools
import json
import math
import os
import sys
from collections.abc import Iterable, Sequence
from concurrent.futures import as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from gemenvs.agents.base import close_agents, forfeit_of, standing
from gemenvs.arena.match import play_engine_game, wilson_interval
from gemenvs.agents.protocol import FORFEIT_REASONS, TIMEOUT_REASONS, is_protocol_spec
from gemenvs.arena.resolve import AgentSpecError, agent_label, resolve_agent
from gemenvs.core.entry import game_pool
from gemenvs.core.replay import replay_game
from gemenvs.files import (
    FileProblem,
    existing_head,
    iter_lines,
    loads_json,
    open_append,
    owned_folder,
    read_json,
    remove_file,
    write_file,
)

#: files a tournament writes into ``--out`` (nothing else there is touched)
OUT_FILES = ("tournament.json", "results.jsonl", "leaderboard.md", "leaderboard.csv", "head_to_head.csv",
             "head_to_head.png", "summary.json")
#: the file that marks ``--out`` as a folder gemenvs-tournament made (written first, with the folder)
TOURNAMENT_MARKER = ".gemenvs-tournament"
_MARKER_TEXT = "gemenvs-tournament writes its results into this folder; --overwrite may replace them.\n"
#: the longest line of results.jsonl read back, in bytes (a game's record with its decision log: a few KB)
MAX_RESULT_LINE_BYTES = 4 * 2**20
#: the keys of a game's record (a line of results.jsonl)
RECORD_KEYS = ("index", "cycle", "lineup", "rotation", "deal", "seed", "game", "options", "seats", "agent_seeds",
               "scores", "winners", "ranks", "log")
#: the key a record has besides RECORD_KEYS when a seat forfeited the game: every seat's reason or null
FORFEITS_KEY = "forfeits"
#: the folder of ``--out`` that holds the stderr logs of the programs playing over the protocol
PROTOCOL_LOGS = "protocol-logs"


class TournamentError(ValueError):
    """A tournament that cannot be run as asked (bad agent, option, file or folder): one line for the user."""


# ----------------------------------------------------------------------------- games and agents

def make_raw_env(game: str, options: dict):
    """The raw AEC environment of registered game ``game`` with game ``options`` (an unknown game or a bad
    option is a TournamentError)."""
    import gemenvs

    names = [e.name for e in gemenvs.entries()]
    if game not in names:
        raise TournamentError(f"unknown game {game!r}; games: {', '.join(names)}")
    try:
        return gemenvs.entry(game).env_functions().raw_env(**options)
    except (TypeError, ValueError) as e:
        raise TournamentError(f"bad {game} options {options}: {' '.join(str(e).split())}") from None


# ----------------------------------------------------------------------------- schedule

def lineups(num_agents: int, num_players: int) -> list[tuple[int, ...]]:
    """The tables of one cycle (sorted agent indices): ``players``-subsets when there are enough
    agents, else multisets with at least two different agents. Invariant under renaming agents."""
    if num_agents < 2:
        raise TournamentError("a tournament needs at least two agents")
    if num_agents >= num_players:
        return list(itertools.combinations(range(num_agents), num_players))
    return [c for c in itertools.combinations_with_replacement(range(num_agents), num_players) if len(set(c)) > 1]


@dataclass(frozen=True)
class Fixture:
    """One scheduled game: its index, deal, seed and the agent index in every seat."""

    index: int
    cycle: int
    lineup: int
    rotation: int
    deal: int
    seed: int
    seats: tuple[int, ...]


def schedule(num_agents: int, num_players: int, cycles: int, seed: int = 0, duplicate: bool = True) -> list[Fixture]:
    """Every game of ``cycles`` cycles: each lineup rotated through every seat (reversed in odd cycles)."""
    tables = lineups(num_agents, num_players)
    out = []
    for c in range(cycles):
        for li, table in enumerate(tables):
            order = table[::-1] if c % 2 else table
            deal = c * len(tables) + li
            for r in range(num_players):
                index = len(out)
                seats = tuple(order[(s - r) % num_players] for s in range(num_players))
                out.append(Fixture(index, c, li, r, deal, seed + (deal if duplicate else index), seats))
    return out


def cycle_size(num_agents: int, num_players: int) -> int:
    """Games in one balanced cycle."""
    return len(lineups(num_agents, num_players)) * num_players


def agent_seed(seed: int, index: int, seat: int) -> int:
    """The reseed of the agent in ``seat`` of game ``index`` (independent streams per game and seat)."""
    return int(np.random.SeedSequence([seed, index, seat]).generate_state(1, np.uint64)[0] >> 1)


# ----------------------------------------------------------------------------- playing

@dataclass
class TournamentSpec:
    """Everything that fixes a tournament's numbers (saved as ``tournament.json``)."""

    game: str
    agents: list[str]
    options: dict
    games: int
    seed: int = 0
    duplicate: bool = True
    greedy: bool = False

    @property
    def num_players(self) -> int:
        """Seats per game."""
        return int(self.options["num_players"])

    def fixtures(self) -> list[Fixture]:
        """The schedule (``games`` is a whole number of cycles)."""
        size = cycle_size(len(self.agents), self.num_players)
        return schedule(len(self.agents), self.num_players, self.games // size, self.seed, self.duplicate)


def make_spec(game: str, agents: Sequence[str], games: int, options: dict | None = None, seed: int = 0,
              duplicate: bool = True, greedy: bool = False) -> tuple[TournamentSpec, int]:
    """A checked spec, ``games`` rounded up to whole cycles, and the cycle size; builds every agent once
    so a bad name or model file fails here (TournamentError)."""
    agents = list(agents)
    if len(set(agents)) != len(agents):
        dup = next(a for a in agents if agents.count(a) > 1)
        raise TournamentError(f"agent {dup!r} is listed twice")
    if not isinstance(games, int) or games < 1:
        raise TournamentError(f"--games must be a positive integer; got {games!r}")
    env = make_raw_env(game, dict(options or {}))
    options = dict(env.game.options())
    options = {k: v for k, v in options.items() if _jsonable(v)}
    for spec in agents:
        resolve_agent(game, spec, env)
    size = cycle_size(len(agents), env.game.num_players)
    rounded = -(-games // size) * size
    return TournamentSpec(game, agents, options, rounded, seed, duplicate, greedy), size


def _jsonable(value) -> bool:
    try:
        json.dumps(value)
        return True
    except TypeError:
        return False


_WORKER: dict = {}


def _worker_setup(spec: TournamentSpec, protocol: dict | None = None) -> dict:
    """Build (once per process) the game and one agent per (agent, seat); ``protocol``: the settings of the
    agents that are programs (:func:`~gemenvs.arena.resolve.resolve_agent`)."""
    key = json.dumps([asdict(spec), {k: str(v) for k, v in (protocol or {}).items()}], sort_keys=True)
    if _WORKER.get("key") != key:
        env = make_raw_env(spec.game, spec.options)
        close_worker_agents()
        _WORKER.update(key=key, env=env, agents={}, protocol=dict(protocol or {}))
    return _WORKER


def close_worker_agents() -> None:
    """Close the agents this process built for a tournament (a program's process is ended) and forget them."""
    close_agents(list(_WORKER.get("agents", {}).values()))
    _WORKER.clear()


def _agent(worker: dict, spec: TournamentSpec, a: int, seat: int):
    cache = worker["agents"]
    if (a, seat) not in cache:
        protocol = dict(worker["protocol"])
        protocol.setdefault("log_name", f"agent{a}-seat{seat}-{os.getpid()}")
        cache[(a, seat)] = resolve_agent(spec.game, spec.agents[a], worker["env"], seed=0, greedy=spec.greedy,
                                         protocol=protocol)
    return cache[(a, seat)]


def ranks_of(keys: Sequence) -> list[float]:
    """Place of every seat (1 = first); tied seats share the mean of their places."""
    return [1 + sum(1 for o in keys if o > k) + 0.5 * (sum(1 for o in keys if o == k) - 1) for k in keys]


def play_fixture(spec: TournamentSpec, fx: Fixture, protocol: dict | None = None) -> dict:
    """Play one scheduled game; its raw record (JSON data)."""
    worker = _worker_setup(spec, protocol)
    game = worker["env"].game
    seats = [_agent(worker, spec, a, s) for s, a in enumerate(fx.seats)]
    seeds = [agent_seed(spec.seed, fx.index, s) for s in range(len(seats))]
    state = play_engine_game(game, seats, fx.seed, seeds)
    return game_record(spec, fx, game, state, [forfeit_of(agent) for agent in seats])


def game_record(spec: TournamentSpec, fx: Fixture, game, state, forfeits: Sequence | None = None) -> dict:
    """The record (a line of results.jsonl) of scheduled game ``fx`` that ended in ``state``; ``forfeits``:
    every seat's forfeit reason or None (a seat that forfeited lost: :func:`~gemenvs.agents.base.standing`)."""
    res = game.results(state)
    forfeits = list(forfeits) if forfeits is not None and any(f is not None for f in forfeits) else None
    winners, ranks = standing(game, state, forfeits)
    record = {
        "index": fx.index, "cycle": fx.cycle, "lineup": fx.lineup, "rotation": fx.rotation, "deal": fx.deal,
        "seed": fx.seed, "game": spec.game, "options": spec.options, "seats": [spec.agents[a] for a in fx.seats],
        "agent_seeds": [agent_seed(spec.seed, fx.index, s) for s in range(len(fx.seats))],
        "scores": [float(x) for x in res.scores], "winners": winners, "ranks": ranks,
        "log": [[int(x) for x in e] for e in state.log],
    }
    if forfeits is not None:
        record[FORFEITS_KEY] = forfeits
    return record


def _play_many(spec: TournamentSpec, fixtures: list[Fixture], protocol: dict | None = None) -> list[dict]:
    return [play_fixture(spec, fx, protocol) for fx in fixtures]


def replay_record(record: dict):
    """Replay one raw result line through the engine's decision log; the final state. Raises
    ValueError when the replay differs (log, or final scores)."""
    env = make_raw_env(record["game"], record["options"])
    state = replay_game(env.game, record["seed"], record["log"])
    scores = [float(x) for x in env.game.results(state).scores]
    if scores != record["scores"]:
        raise ValueError(f"replay of game {record.get('index')} scores {scores}, saved {record['scores']}")
    return state


# ----------------------------------------------------------------------------- files and resuming

def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _canonical(value) -> str:
    """JSON text that tells apart what ``==`` does not (1, 1.0 and true)."""
    return json.dumps(value, sort_keys=True)


def check_record(rec, spec: TournamentSpec, fixtures: dict[int, Fixture], game, where: str) -> dict:
    """A stored game's record checked against the schedule and replayed through the engine (``game``, built
    with ``spec.options``); the record the replay gives (equal to ``rec``). A record that is not the scheduled
    game, does not replay, or states other scores, winners or ranks than its replay: a TournamentError."""
    if not isinstance(rec, dict) or set(rec) - {FORFEITS_KEY} != set(RECORD_KEYS):
        keys = sorted(rec) if isinstance(rec, dict) else type(rec).__name__
        raise TournamentError(f"{where}: not a game record of gemenvs-tournament (expected the keys "
                              f"{', '.join(RECORD_KEYS)}; got {str(keys)[:120]})")
    index = rec["index"]
    if not _is_int(index) or index not in fixtures:
        raise TournamentError(f"{where}: game index {str(index)[:40]} is not one of the {len(fixtures)} games of this "
                              f"tournament's schedule")
    fx = fixtures[index]
    log = rec["log"]
    if not isinstance(log, list) or not all(isinstance(e, list) and len(e) == 3 and all(_is_int(x) for x in e)
                                            for e in log):
        raise TournamentError(f"{where}: game {index}: the log must be a list of [seat, action, forced] integers")
    try:
        state = replay_game(game, fx.seed, log)
    except (ValueError, IndexError, KeyError, TypeError, OverflowError) as e:
        raise TournamentError(f"{where}: game {index} does not replay through the engine "
                              f"({' '.join(str(e).split())[:200]})") from None
    forfeits = rec.get(FORFEITS_KEY)
    if forfeits is not None and not (isinstance(forfeits, list) and len(forfeits) == len(fx.seats)
                                     and all(f is None or f in FORFEIT_REASONS for f in forfeits)
                                     and any(f is not None for f in forfeits)):
        raise TournamentError(f"{where}: game {index}: {FORFEITS_KEY} must list every seat's forfeit reason or null "
                              f"(reasons: {', '.join(FORFEIT_REASONS)}), with at least one reason")
    expected = game_record(spec, fx, game, state, forfeits)
    differ = [k for k in (*RECORD_KEYS, FORFEITS_KEY) if _canonical(rec.get(k)) != _canonical(expected.get(k))]
    if differ:
        raise TournamentError(f"{where}: game {index} differs from its replay through the engine in "
                              f"{', '.join(differ)}; the line was changed, so it is not used (delete it, and the "
                              f"game is played again)")
    return expected


def _ends_with_newline(path: Path) -> bool:
    from gemenvs.files import open_regular

    with open_regular(path, what="results file") as f:
        if f.seek(0, os.SEEK_END) == 0:
            return True
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def read_results(path: Path, spec: TournamentSpec) -> dict[int, dict]:
    """The games of ``spec``'s schedule stored in a results file, by game index, each checked and replayed
    first (:func:`check_record`). A last line cut by a kill is skipped; any other line that is not JSON, not
    a record of this schedule, a game stored twice or a record its replay contradicts is a TournamentError
    naming the line (reading: :func:`gemenvs.files.iter_lines`, bounded)."""
    if not path.exists() and not path.is_symlink():
        return {}
    fixtures = {fx.index: fx for fx in spec.fixtures()}
    game = make_raw_env(spec.game, spec.options).game
    done: dict[int, dict] = {}
    lines_of: dict[int, int] = {}

    def take(number: int, text: str, last: bool) -> None:
        where = f"{path}, line {number}"
        try:
            rec = loads_json(text, where, max_depth=8)
        except FileProblem:
            if last and cut:
                return  # (the line a kill cut: that game is played again)
            raise
        rec = check_record(rec, spec, fixtures, game, where)
        if rec["index"] in done:
            raise TournamentError(f"{where}: game {rec['index']} is stored twice (lines {lines_of[rec['index']]} "
                                  f"and {number})")
        done[rec["index"]], lines_of[rec["index"]] = rec, number

    try:
        existing_head(path.parent, path.name, 0)  # (a symbolic link or a special file there: refused)
        cut = not _ends_with_newline(path)
        before = None
        for number, text in iter_lines(path, MAX_RESULT_LINE_BYTES, len(fixtures) + 1,
                                       max_bytes=(len(fixtures) + 1) * MAX_RESULT_LINE_BYTES, what="results file"):
            if before is not None:
                take(*before, last=False)
            before = (number, text)
        if before is not None:
            take(*before, last=True)
    except FileProblem as e:
        raise TournamentError(str(e)) from None
    return done


def prepare_out(out: Path, spec: TournamentSpec, overwrite: bool = False) -> dict[int, dict]:
    """Make ``out`` ready: a new (or empty) folder, marked with :data:`TOURNAMENT_MARKER`; or the same
    tournament's folder (resume: its finished games, checked by :func:`read_results`, are returned); or with
    ``overwrite`` the tournament files there removed. A folder the tournament did not make, without
    ``overwrite``, another tournament's folder, or a symbolic link at ``out`` or at any file it writes, is a
    TournamentError; nothing outside ``out`` is written."""
    meta = out / "tournament.json"
    try:
        owned_folder(out, TOURNAMENT_MARKER, _MARKER_TEXT, overwrite,
                     hint=f"give another --out, or --overwrite to write the tournament's files into it (a folder "
                          f"of an older version can be marked with: touch {out / TOURNAMENT_MARKER})")
        if overwrite:
            for name in OUT_FILES:
                remove_file(out, name)
        elif meta.exists() or meta.is_symlink():
            existing_head(out, meta.name, 0)  # (a symbolic link there is refused, not read)
            try:
                saved = read_json(meta, 2**20, "tournament.json")
            except FileProblem as e:
                raise TournamentError(f"{out} holds a tournament.json that cannot be read ({e}); give another --out "
                                      f"or --overwrite") from None
            if saved != asdict(spec):
                raise TournamentError(f"{out} holds another tournament ({meta}); give another --out or --overwrite")
        elif (out / "results.jsonl").exists() or (out / "results.jsonl").is_symlink():
            raise TournamentError(f"{out} has results.jsonl but no tournament.json; give another --out or --overwrite")
        done = read_results(out / "results.jsonl", spec)
        # rewrite the file without the cut line, in index order, so appends start on a clean line
        write_file(out, "results.jsonl", "".join(json.dumps(done[k], separators=(",", ":")) + "\n"
                                                 for k in sorted(done)))
        write_file(out, "tournament.json", json.dumps(asdict(spec), indent=1) + "\n")
    except FileProblem as e:  # (a symbolic link or a special file where a file goes, a folder not the tournament's)
        raise TournamentError(str(e)) from None
    return done


def progress_bar(total: int, desc: str, progress: bool | None = None, unit: str = "game", initial: int = 0,
                 leave: bool = True, iterable: Iterable | None = None):
    """A tqdm bar on stderr for a long phase (count, rate, ETA), over ``iterable`` when given: ``progress``
    True shows it, False hides it, None shows it only when stderr is a terminal (tqdm's ``disable=None``).
    Only the calling process draws it: worker processes report finished work, and the caller advances it."""
    from tqdm import tqdm

    return tqdm(iterable, total=total, initial=initial, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True,
                leave=leave, disable=None if progress is None else not progress)


def run_games(spec: TournamentSpec, done: dict[int, dict] | None = None, workers: int = 1,
              results_path: Path | None = None, progress: bool | None = None,
              protocol: dict | None = None) -> list[dict]:
    """Play every scheduled game not in ``done``, over ``workers`` processes, appending each finished
    record to ``results_path`` as it comes; all records in game-index order. ``progress``: a bar of the
    games played of the schedule (starting at those in ``done``), see :func:`progress_bar`. ``protocol``:
    the settings of the agents that are programs (their limits, ``log_dir``); their programs are ended
    when the games are played (a worker's when it exits)."""
    done = dict(done or {})
    fixtures = spec.fixtures()
    todo = [fx for fx in fixtures if fx.index not in done]
    chunks = [todo[k:k + spec.num_players] for k in range(0, len(todo), spec.num_players)]  # about one deal each
    sink = open_append(results_path.parent, results_path.name) if results_path is not None else None
    bar = progress_bar(len(fixtures), f"{spec.game} tournament", progress, initial=len(fixtures) - len(todo))

    def take(records: list[dict]) -> None:
        for rec in records:
            done[rec["index"]] = rec
            if sink is not None:
                sink.write(json.dumps(rec, separators=(",", ":")) + "\n")
        if sink is not None:
            sink.flush()
        bar.update(len(records))

    try:
        if workers <= 1 or len(chunks) <= 1:
            for chunk in chunks:
                take(_play_many(spec, chunk, protocol))
        else:
            with game_pool(workers, "spawn") as pool:
                for fut in as_completed([pool.submit(_play_many, spec, chunk, protocol) for chunk in chunks]):
                    take(fut.result())
    finally:
        close_worker_agents()
        if sink is not None:
            sink.close()
        bar.close()
    return [done[k] for k in sorted(done)]


# ----------------------------------------------------------------------------- summary

def mean_interval(values: Sequence[float], z: float = 1.96) -> tuple[float, float, float]:
    """Mean and its normal-approximation 95% interval (the interval is the mean itself for n < 2)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return (float("nan"), float("nan"), float("nan"))
    m = float(x.mean())
    if x.size < 2:
        return (m, m, m)
    half = z * float(x.std(ddof=1)) / math.sqrt(x.size)
    return (m, m - half, m + half)


@dataclass
class AgentSummary:
    """One row of the leaderboard."""

    agent: str
    games: int = 0
    wins: float = 0.0
    win_rate: float = 0.0
    win_ci: tuple[float, float] = (0.0, 1.0)
    score: tuple[float, float, float] = (0.0, 0.0, 0.0)
    margin: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rank: tuple[float, float, float] = (0.0, 0.0, 0.0)
    mu: float = 25.0
    sigma: float = 25.0 / 3
    ordinal: float = 0.0
    seat_games: list[int] = field(default_factory=list)
    #: seat-games it forfeited (a program that failed: each counts as a loss), and those that were timeouts
    forfeits: int = 0
    timeouts: int = 0


def rate(records: Iterable[dict], agents: Sequence[str]) -> dict[str, tuple[float, float]]:
    """Plackett-Luce ratings (openskill) from every game in order: agent -> (mu, sigma). An agent in
    several seats of one game is rated in each and takes the mean of the updates."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = {a: model.rating(name=a) for a in agents}
    for rec in records:
        seats = rec["seats"]
        new = model.rate([[ratings[a]] for a in seats], ranks=list(rec["ranks"]))
        updates: dict[str, list] = {}
        for a, team in zip(seats, new):
            updates.setdefault(a, []).append(team[0])
        for a, rs in updates.items():
            ratings[a] = model.rating(mu=float(np.mean([r.mu for r in rs])),
                                      sigma=float(np.mean([r.sigma for r in rs])), name=a)
    return {a: (float(r.mu), float(r.sigma)) for a, r in ratings.items()}


def summarize(records: Sequence[dict], agents: Sequence[str]) -> tuple[list[AgentSummary], np.ndarray]:
    """The leaderboard (best rating ordinal first) and the head-to-head matrix (row ahead of column)."""
    records = sorted(records, key=lambda r: r["index"])
    k = len(agents)
    idx = {a: i for i, a in enumerate(agents)}
    per = {a: {"win": [], "score": [], "margin": [], "rank": [], "forfeits": 0, "timeouts": 0} for a in agents}
    seat_games = {a: [0] * len(records[0]["seats"]) if records else [] for a in agents}
    ahead = np.zeros((k, k))
    met = np.zeros((k, k))
    for rec in records:
        scores, seats, ranks = rec["scores"], rec["seats"], rec["ranks"]
        for s, a in enumerate(seats):
            others = [x for t, x in enumerate(scores) if t != s]
            per[a]["win"].append(1.0 / len(rec["winners"]) if s in rec["winners"] else 0.0)
            per[a]["score"].append(scores[s])
            per[a]["margin"].append(scores[s] - max(others))
            per[a]["rank"].append(ranks[s])
            reason = (rec.get(FORFEITS_KEY) or [None] * len(seats))[s]
            per[a]["forfeits"] += reason is not None
            per[a]["timeouts"] += reason in TIMEOUT_REASONS
            seat_games[a][s] += 1
            for t, b in enumerate(seats):
                if b != a:
                    met[idx[a], idx[b]] += 1
                    ahead[idx[a], idx[b]] += 1.0 if ranks[s] < ranks[t] else 0.5 if ranks[s] == ranks[t] else 0.0
    ratings = rate(records, agents)
    rows = []
    for a in agents:
        p = per[a]
        n, wins = len(p["win"]), float(sum(p["win"]))
        mu, sigma = ratings[a]
        rows.append(AgentSummary(a, n, wins, wins / n if n else 0.0, wilson_interval(wins, n),
                                 mean_interval(p["score"]), mean_interval(p["margin"]), mean_interval(p["rank"]),
                                 mu, sigma, mu - 3 * sigma, seat_games[a], p["forfeits"], p["timeouts"]))
    rows.sort(key=lambda r: (-r.ordinal, r.agent))
    with np.errstate(invalid="ignore", divide="ignore"):
        h2h = np.where(met > 0, ahead / np.maximum(met, 1), np.nan)
    return rows, h2h


def leaderboard_markdown(rows: Sequence[AgentSummary]) -> str:
    """The leaderboard as a Markdown table (with forfeits and timeouts columns when some agent forfeited)."""
    forfeits = any(r.forfeits for r in rows)
    out = ["| # | agent | seat-games | win rate [95% CI] | mean score [95% CI] | mean margin [95% CI] | "
           "mean rank [95% CI] | rating mu ± sigma | ordinal |" + (" forfeits | timeouts |" if forfeits else ""),
           "|---|---|---|---|---|---|---|---|---|" + ("---|---|" if forfeits else "")]
    for i, r in enumerate(rows, 1):
        out.append(f"| {i} | {r.agent} | {r.games} | {r.win_rate:.1%} [{r.win_ci[0]:.1%}, {r.win_ci[1]:.1%}] | "
                   f"{r.score[0]:.1f} [{r.score[1]:.1f}, {r.score[2]:.1f}] | "
                   f"{r.margin[0]:+.1f} [{r.margin[1]:+.1f}, {r.margin[2]:+.1f}] | "
                   f"{r.rank[0]:.2f} [{r.rank[1]:.2f}, {r.rank[2]:.2f}] | {r.mu:.1f} ± {r.sigma:.1f} | "
                   f"{r.ordinal:.1f} |" + (f" {r.forfeits} | {r.timeouts} |" if forfeits else ""))
    return "\n".join(out)


def write_outputs(out: Path, spec: TournamentSpec, rows: Sequence[AgentSummary], h2h: np.ndarray,
                  title: str) -> None:
    """Leaderboard (Markdown, CSV), head-to-head (CSV, PNG) and summary.json into ``out``, each all or nothing
    and never through a symbolic link (:func:`gemenvs.files.write_file`)."""
    import io

    write_file(out, "leaderboard.md", f"{title}\n\n{leaderboard_markdown(rows)}\n")
    f = io.StringIO(newline="")
    w = csv.writer(f)
    w.writerow(["rank", "agent", "seat_games", "win_rate", "win_lo", "win_hi", "mean_score", "score_lo", "score_hi",
                "mean_margin", "margin_lo", "margin_hi", "mean_rank", "rank_lo", "rank_hi", "mu", "sigma",
                "ordinal", "forfeits", "timeouts"])
    for i, r in enumerate(rows, 1):
        w.writerow([i, r.agent, r.games, *(f"{x:.6g}" for x in (r.win_rate, *r.win_ci, *r.score, *r.margin,
                                                                  *r.rank, r.mu, r.sigma, r.ordinal)),
                    r.forfeits, r.timeouts])
    write_file(out, "leaderboard.csv", f.getvalue())
    f = io.StringIO(newline="")
    w = csv.writer(f)
    w.writerow(["row ahead of column", *spec.agents])
    for a, line in zip(spec.agents, h2h):
        w.writerow([a, *("" if np.isnan(x) else f"{x:.6g}" for x in line)])
    write_file(out, "head_to_head.csv", f.getvalue())
    write_file(out, "head_to_head.png", head_to_head_png(h2h, spec.agents, title))
    summary = {"spec": asdict(spec), "leaderboard": [asdict(r) for r in rows],
               "head_to_head": [[None if np.isnan(x) else float(x) for x in line] for line in h2h]}
    write_file(out, "summary.json", json.dumps(summary, indent=1) + "\n")


def plot_head_to_head(h2h: np.ndarray, agents: Sequence[str], path: Path, title: str = "") -> Path:
    """A heatmap PNG at ``path`` (:func:`head_to_head_png`; never written through a symbolic link)."""
    from gemenvs.files import user_folder

    path = Path(path)
    write_file(user_folder(path), path.name, head_to_head_png(h2h, agents, title))
    return path


def _short_label(label: str, width: int = 28) -> str:
    """A heatmap tick label: ``label``, its middle elided to ``width`` characters (a ``cmd:`` spec can be long)."""
    if len(label) <= width:
        return label
    keep = width - 3
    return label[:keep - keep // 2] + "..." + label[len(label) - keep // 2:]


def head_to_head_png(h2h: np.ndarray, agents: Sequence[str], title: str = "") -> bytes:
    """A heatmap as PNG bytes: cell (row, column) = how often row finished ahead of column at one table."""
    import io

    from matplotlib.figure import Figure  # no pyplot: the caller's backend (a notebook's) stays as it is

    labels = [_short_label(agent_label(a)) for a in agents]
    k = len(agents)
    fig = Figure(figsize=(max(4.5, 1.6 + 0.9 * k), max(3.6, 1.2 + 0.8 * k)), dpi=110)
    ax = fig.subplots()
    im = ax.imshow(np.ma.masked_invalid(h2h), cmap="RdBu", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(k), labels, rotation=30, ha="right")
    ax.set_yticks(range(k), labels)
    for i in range(k):
        for j in range(k):
            if not np.isnan(h2h[i, j]):
                ax.text(j, i, f"{h2h[i, j]:.0%}", ha="center", va="center", fontsize=9,
                        color="white" if abs(h2h[i, j] - 0.5) > 0.3 else "black")
    ax.set_xlabel("column agent")
    ax.set_ylabel("row agent")
    if title:
        import textwrap

        ax.set_title("\n".join(textwrap.wrap(title, 48)), fontsize=8)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="share of tables: row ahead of column")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def title_of(spec: TournamentSpec) -> str:
    """One line naming the game, options and schedule."""
    opts = ", ".join(f"{k}={v}" for k, v in spec.options.items() if k != "num_players")
    return (f"{spec.game}, {spec.num_players} players ({opts}); {spec.games} games, seed {spec.seed}, "
            f"{'duplicate deals' if spec.duplicate else 'a fresh deal per game'}")


def run_tournament(spec: TournamentSpec, out: str | os.PathLike | None = None, workers: int = 1,
                   progress: bool | None = None, overwrite: bool = False, limits: dict | None = None
                   ) -> tuple[list[AgentSummary], np.ndarray, list[dict]]:
    """Play (or resume, from ``out``) a tournament; leaderboard, head-to-head and the records. ``progress``:
    a bar of the games played on stderr (True, False, or None: when stderr is a terminal). ``limits``: the
    limits of the agents that are programs (:class:`~gemenvs.agents.protocol.Limits`' fields; a spec's own
    win), whose stderr goes to ``out/protocol-logs`` (with no ``out``: to this process's stderr)."""
    done, path = {}, None
    protocol = dict(limits or {})
    if out is not None:
        out = Path(out)
        done = prepare_out(out, spec, overwrite)
        path = out / "results.jsonl"
        if any(is_protocol_spec(a) for a in spec.agents):
            protocol["log_dir"] = str(out / PROTOCOL_LOGS)
    records = run_games(spec, done, workers, path, progress, protocol)
    rows, h2h = summarize(records, spec.agents)
    if out is not None:
        write_outputs(out, spec, rows, h2h, title_of(spec))
    return rows, h2h, records


# ----------------------------------------------------------------------------- command line

def parse_option(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` with VALUE read as JSON when it parses (numbers, true/false), else as a string."""
    if "=" not in text:
        raise TournamentError(f"--option takes KEY=VALUE; got {text!r}")
    key, value = text.split("=", 1)
    try:
        return key.strip(), json.loads(value)
    except ValueError:
        return key.strip(), value


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see ``gemenvs-tournament --help``)."""
    from gemenvs.console import add_version_argument

    p = argparse.ArgumentParser(
        prog="gemenvs-tournament", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="A balanced tournament between agents of one gemenvs game: leaderboard with 95% intervals, "
                    "Plackett-Luce ratings, head-to-head heatmap and raw per-game results.",
        epilog="examples:\n  gemenvs-tournament --game megagem --players 4 --agents random truthful heuristic "
               "--games 240 --out runs/tournaments/megagem4\n"
               "  gemenvs-tournament --game gemjam --players 3 --agents random rule --games 60 --workers 2\n"
               "  gemenvs-tournament --game megagem --players 3 --agents heuristic ismcts:32 --games 12\n"
               "  gemenvs-tournament --game gem --agents greedy \"cmd:python examples/random_agent.py\" --games 12 "
               "--decision-timeout 2 --out runs/tournaments/gem-cmd\n")
    p.add_argument("--game", default="megagem", help="megagem, gem or gemjam (default megagem)")
    p.add_argument("--players", type=int, default=None, help="seats per game (default: the game's default)")
    p.add_argument("--agents", nargs="+", required=True, metavar="AGENT",
                   help="baseline names (e.g. random truthful heuristic), search agents (ismcts, or ismcts:N for "
                        "N simulations per decision), model files (.zip, .npz) and/or programs playing over the "
                        "JSON-lines protocol (\"cmd:python my_agent.py\", tcp:HOST:PORT, unix:PATH)")
    p.add_argument("--games", type=int, default=240, help="games, rounded up to whole balanced cycles (default 240)")
    p.add_argument("--value-chart", default=None, help="MegaGem value chart: A-E or random")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="any other game option")
    p.add_argument("--seed", type=int, default=0, help="seed of the first deal (default 0)")
    p.add_argument("--no-duplicate", action="store_true", help="a fresh deal for every game instead of replaying "
                   "each deal with the seats rotated")
    p.add_argument("--greedy", action="store_true", help="models play their most likely action (default: sample)")
    p.add_argument("--workers", type=int, default=1, help="processes playing games (default 1)")
    add_limit_arguments(p)
    p.add_argument("--out", default=None, help="folder for results.jsonl, leaderboard, heatmap (resumes there)")
    p.add_argument("--overwrite", action="store_true", help="replace another tournament's files in --out, or write "
                                                            "into an --out folder the tournament did not make")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_version_argument(p)
    return p.parse_args(argv)


def add_limit_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of the limits of agents that are programs (cmd:, tcp:, unix:; docs/protocol.md)."""
    p.add_argument("--decision-timeout", type=float, default=None, metavar="SECONDS",
                   help="programs playing over the protocol: seconds for an answer (default 10)")
    p.add_argument("--game-timeout", type=float, default=None, metavar="SECONDS",
                   help="programs: seconds for all of a game's answers (default 600)")
    p.add_argument("--retries", type=int, default=None, help="programs: tries again after a malformed or illegal "
                                                             "answer before the seat forfeits (default 1)")


def limits_of(ns: argparse.Namespace) -> dict:
    """The limits the flags of :func:`add_limit_arguments` set (checked: a bad one is a TournamentError)."""
    from gemenvs.agents.protocol import Limits

    given = {k: getattr(ns, k) for k in ("decision_timeout", "game_timeout", "retries") if getattr(ns, k) is not None}
    try:
        Limits(**given)
    except ValueError as e:
        raise TournamentError(f"--{str(e).replace('_', '-')}") from None
    return given


def _error(message: str) -> int:
    print(f"gemenvs-tournament: error: {' '.join(str(message).split())}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``gemenvs-tournament``; returns the exit status (2 and one line for a user error)."""
    from gemenvs.console import extra_hint

    try:
        ns = parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    try:
        if ns.workers < 1:
            raise TournamentError(f"--workers must be at least 1; got {ns.workers}")
        if ns.seed < 0:
            raise TournamentError(f"--seed must be a non-negative integer; got {ns.seed}")
        options = dict(parse_option(o) for o in ns.option)
        if ns.players is not None:
            options["num_players"] = ns.players
        if ns.value_chart is not None:
            if ns.game != "megagem":
                raise TournamentError(f"--value-chart is a MegaGem option; {ns.game} has no value charts")
            options["value_chart"] = ns.value_chart
        limits = limits_of(ns)
        spec, size = make_spec(ns.game, ns.agents, ns.games, options, ns.seed, not ns.no_duplicate, ns.greedy)
        if spec.games != ns.games:
            print(f"{ns.games} games asked; playing {spec.games} ({spec.games // size} balanced cycles of {size})",
                  file=sys.stderr)
        rows, _, _ = run_tournament(spec, ns.out, ns.workers, progress=False if ns.no_progress else None,
                                       overwrite=ns.overwrite, limits=limits)
    except (TournamentError, AgentSpecError, OSError) as e:
        return _error(e)
    except ImportError as e:  # the train extra (openskill, matplotlib; torch for .zip models); else a bug
        hint = extra_hint(e)
        if hint is None:
            raise
        return _error(hint)
    print(title_of(spec))
    print(leaderboard_markdown(rows))
    if ns.out:
        print(f"written to {ns.out}: {', '.join(OUT_FILES)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
