"""Fixed, versioned bidding benchmarks (``gemenvs-benchmark bidding|gem POLICY...``); the approximate
exploitability figure (``gemenvs-benchmark exploit POLICY...``) trains a best response, so it lives in
training (:mod:`gemenvs.training.exploitability`) and uses this module's tables.

A benchmark is a frozen definition (:data:`BENCHMARKS`): a game, a set of *cells* (options such as
the value chart and the player count), a number of seeded deals per cell and a *field* of
reference bidders per player count. Each policy plays every deal of every cell once from every
seat (the same deal replayed with the seats rotated), the field sitting clockwise after it in a
fixed order, reversed in odd deals (so each reference bidder sits as often right after the policy
as right before it: in GEM, bidding once around, that position matters). The numbers of
``megagem-bidding-v1`` therefore mean the same next year: a change to the definition is a new
version (``-v2``), and :func:`fingerprint` prints a digest of the definition next to every table.
``--deals`` plays fewer deals per cell for a quick look; such a table is labelled ``quick`` and is
not the benchmark's figure. Bars on stderr count the games played (and, for ``exploit``, the best
response's training decisions) when stderr is a terminal (``progress``).

Every metric is read from the engine's final state (MegaGem's auction history, loans,
investments, mission owners and coins; GEM's card owners and sides, by replaying the decision
log through the engine), never from rendered text. A POLICY may be a search agent (``ismcts:N``, N
simulations per decision): the games run through :func:`gemenvs.arena.match.play_engine_game`, which
hands it the engine state (:func:`gemenvs.agents.base.decide`). A POLICY may also be another program that plays
over the JSON-lines protocol (``"cmd:python my_agent.py"``, ``tcp:HOST:PORT``, ``unix:PATH``;
:mod:`gemenvs.agents.protocol`), its stderr kept in ``--out``/``protocol-logs``: a game it forfeits (too slow,
crashed, answered badly after its retries) counts as a loss, and every row says how many games its policy
forfeited and how many of those were timeouts (columns of the CSV always, of the Markdown tables when a
policy forfeited).

**megagem-bidding-v1** (charts A-E x 3, 4, 5 players, 20 deals per cell, field: heuristic,
truthful, random, heuristic clockwise after the policy, as many as the seats need, reversed in odd
deals). Per policy:
win rate against the field (a shared win counts 1/winners; Wilson 95% interval) and chance (1/n),
mean final score (95% interval), mean profit per won lot (value realised at the end minus the
price: a Treasure's gems at their final chart value; a Loan realises 0 since it is repaid; an
Investment returns its locked bid plus its amount), overpay rate (won Treasure lots whose price
exceeded the gems' final value), Loans and Investments won per game and their net effect on the
score per game (Loans: minus the price; Investments: plus the amount), mission coins per game and
coins left unspent at the end. Per chart, per player count and overall.

**gem-bidding-v1** (2, 3, 4 players, 40 deals per cell, field: greedy, random, greedy, reversed in
odd deals). Per policy:
win rate and mean points (95% intervals), gem cards won per game, mean price per card won, the
share of won cards INVESTED at the end (the only ones that score), gems and majority points per
game.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import sys
from collections.abc import Sequence
from concurrent.futures import as_completed
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from gemenvs.agents.base import close_agents, forfeit_of, standing
from gemenvs.agents.protocol import TIMEOUT_REASONS, is_protocol_spec
from gemenvs.arena.match import play_engine_game, wilson_interval
from gemenvs.arena.resolve import AgentSpecError, resolve_agent
from gemenvs.arena.tournament import (
    PROTOCOL_LOGS, TournamentError, agent_seed, limits_of, make_raw_env, mean_interval, progress_bar,
)
from gemenvs.core.entry import game_pool


@dataclass(frozen=True)
class Benchmark:
    """A frozen benchmark definition (see the module docstring)."""

    name: str
    game: str
    cells: tuple[tuple[tuple[str, object], ...], ...]  # options per cell, as sorted (key, value) pairs
    deals: int                                         # seeded deals per cell
    seed: int                                          # deal k of cell c has seed ``seed + 1000 * c + k``
    field: tuple[tuple[int, tuple[str, ...]], ...]     # players -> reference bidders clockwise after the policy
    metrics: str                                       # name of the per-game metric reader
    mirror: bool = True                                # odd deals seat the field in the reverse order


def _cells(**axes) -> tuple:
    """Every combination of the option axes, in order (first axis slowest)."""
    import itertools

    keys = list(axes)
    return tuple(tuple(zip(keys, combo)) for combo in itertools.product(*axes.values()))


_MEGAGEM_FIELD = ("heuristic", "truthful", "random", "heuristic")
_GEM_FIELD = ("greedy", "random", "greedy")

#: the benchmarks by name; never edit one (publish a new version instead)
BENCHMARKS: dict[str, Benchmark] = {
    "megagem-bidding-v1": Benchmark(
        name="megagem-bidding-v1", game="megagem",
        cells=_cells(value_chart=("A", "B", "C", "D", "E"), num_players=(3, 4, 5)),
        deals=20, seed=1_000_000,
        field=tuple((n, _MEGAGEM_FIELD[:n - 1]) for n in (3, 4, 5)), metrics="megagem"),
    "gem-bidding-v1": Benchmark(
        name="gem-bidding-v1", game="gem", cells=_cells(num_players=(2, 3, 4)), deals=40, seed=2_000_000,
        field=tuple((n, _GEM_FIELD[:n - 1]) for n in (2, 3, 4)), metrics="gem"),
}
#: command-line name -> benchmark
SUITES = {"bidding": "megagem-bidding-v1", "gem": "gem-bidding-v1"}


def fingerprint(bench: Benchmark) -> str:
    """A short digest of the definition (printed with every table, so a figure names what it measured)."""
    return hashlib.sha256(json.dumps(asdict(bench), sort_keys=True).encode()).hexdigest()[:12]


# ----------------------------------------------------------------------------- per-game metrics

def megagem_metrics(game, state, seat: int) -> dict[str, float]:
    """The policy seat's raw counts of one finished MegaGem game, read from the engine state."""
    from gemenvs.megagem.data import AUCTION_AMOUNT, AUCTION_TYPE
    from gemenvs.megagem.rules import gem_value

    res = game.results(state)
    m = dict(win=1.0 / len(res.winners) if seat in res.winners else 0.0, score=res.scores[seat], lots=0.0,
             profit=0.0, treasure_lots=0.0, overpays=0.0, loans=0.0, investments=0.0, loan_invest_net=0.0,
             missions=float(res.breakdown[seat]["missions"]), coins_left=float(state.coins[seat]))
    for rec in state.history:
        if rec.winner != seat:
            continue
        price, kind, amount = rec.bids[seat], AUCTION_TYPE[rec.card], AUCTION_AMOUNT[rec.card]
        if kind == "treasure":
            value = sum(gem_value(state.chart, state.display[c]) for c in rec.gems)
            m["treasure_lots"] += 1
            m["overpays"] += price > value
        elif kind == "loan":
            value = 0  # the loan's coins are received, then repaid at the end
            m["loans"] += 1
            m["loan_invest_net"] += -price
        else:
            value = amount + price  # the locked bid comes back with the investment's amount
            m["investments"] += 1
            m["loan_invest_net"] += amount
        m["lots"] += 1
        m["profit"] += value - price
    return m


def gem_metrics(game, state, seat: int) -> dict[str, float]:
    """The policy seat's raw counts of one finished GEM game: the engine's final state, and each won
    card's price (the winning bid when the card is taken), seen by replaying the decision log
    through the engine's rules transition (``initial_state`` + ``play`` of every logged decision)."""
    from gemenvs.gem.rules import high_bid

    replay = game.initial_state(state.seed)
    cards_won, paid = 0.0, 0.0
    for p, a, _ in state.log:
        price = (high_bid(replay) or 0) if replay.winner >= 0 else 0
        before = list(replay.owner)
        game.play(replay, p, a)
        taken = sum(1 for o0, o1 in zip(before, replay.owner) if o0 != o1 and o1 == seat)
        cards_won += taken
        paid += price * taken
    if replay.to_dict() != state.to_dict() | {"log": []}:
        raise ValueError("the replay of the decision log does not reach the final state")
    res = game.results(state)
    won = [c for c, o in enumerate(state.owner) if o == seat]
    b = res.breakdown[seat]
    return dict(win=1.0 / len(res.winners) if seat in res.winners else 0.0, score=res.scores[seat],
                cards=cards_won, paid=paid, invested_cards=float(sum(state.invested[c] for c in won)),
                held_cards=float(len(won)), gems=float(b["gems"]), majorities=float(b["majorities"]))


METRICS = {"megagem": megagem_metrics, "gem": gem_metrics}


# ----------------------------------------------------------------------------- playing

_WORKER: dict = {}


def close_worker_agents() -> None:
    """Close the agents this process built for a benchmark (a program's process is ended) and forget them."""
    close_agents(list(_WORKER.get("agents", {}).values()))
    _WORKER.clear()


def _play_cell(bench_name: str, policy: str, cell: int, deals: Sequence[int], greedy: bool = False,
               protocol: dict | None = None) -> list[dict]:
    """Play ``deals`` of ``cell`` with ``policy`` in every seat; one dict of raw counts per game (``forfeit``
    and ``timeout``: 1 when the policy's seat forfeited, for being too slow). ``protocol``: the settings of a
    policy that is a program (:func:`~gemenvs.arena.resolve.resolve_agent`)."""
    bench = BENCHMARKS[bench_name]
    options = dict(bench.cells[cell])
    key = (bench_name, policy, cell, greedy, json.dumps(protocol or {}, sort_keys=True, default=str))
    if _WORKER.get("key") != key:
        env = make_raw_env(bench.game, options)
        close_worker_agents()
        _WORKER.update(key=key, env=env, agents={})
    env = _WORKER["env"]
    game, n = env.game, env.game.num_players
    field = dict(bench.field)[n]
    reader = METRICS[bench.metrics]
    out = []
    for k in deals:
        seed = bench.seed + 1000 * cell + k
        order = field[::-1] if bench.mirror and k % 2 else field  # who sits after the policy is balanced
        for s in range(n):
            specs = {s: policy, **{(s + 1 + j) % n: f for j, f in enumerate(order)}}
            agents = []
            for seat in range(n):
                cache_key = (specs[seat], seat)
                if cache_key not in _WORKER["agents"]:
                    settings = {**(protocol or {}), "log_name": f"{bench.name}-cell{cell}-seat{seat}-{os.getpid()}"}
                    _WORKER["agents"][cache_key] = resolve_agent(bench.game, specs[seat], env, seed=0, greedy=greedy,
                                                                 protocol=settings)
                agents.append(_WORKER["agents"][cache_key])
            gid = (cell * 10_000 + k) * 8 + s
            state = play_engine_game(game, agents, seed, [agent_seed(bench.seed, gid, t) for t in range(n)])
            counts = reader(game, state, s)
            forfeits = [forfeit_of(a) for a in agents]
            if any(forfeits):  # (a seat that forfeited lost the game)
                winners = standing(game, state, forfeits)[0]
                counts["win"] = 1.0 / len(winners) if s in winners else 0.0
            out.append({"cell": cell, "deal": k, "seat": s, **counts, "forfeit": float(forfeits[s] is not None),
                        "timeout": float(forfeits[s] in TIMEOUT_REASONS)})
    return out


def fits(bench: Benchmark, policy: str, cell: int) -> bool:
    """Whether ``policy`` can play ``cell`` (a model fits one observation size, so one player count)."""
    if is_protocol_spec(policy):  # (a program gets the layout of every cell in its start message)
        return True
    env = make_raw_env(bench.game, dict(bench.cells[cell]))
    try:
        resolve_agent(bench.game, policy, env)
    except (TournamentError, AgentSpecError) as e:
        if "was it trained on another game or player count" in str(e):
            return False
        raise
    return True


def run_benchmark(bench: Benchmark, policies: Sequence[str], deals: int | None = None, workers: int = 1,
                  progress: bool | None = None, cells: Sequence[int] | None = None,
                  greedy: bool = False, limits: dict | None = None,
                  log_dir: str | os.PathLike | None = None) -> dict[str, list[dict]]:
    """Play the benchmark (or only ``cells``, for tests) for every policy; policy -> per-game raw counts
    (in a fixed order). Model files sample their actions, or play the most likely one with ``greedy``.
    ``progress``: a bar of the games played on stderr (True, False, or None: when stderr is a terminal).
    ``limits``: the limits of policies that are programs (:class:`~gemenvs.agents.protocol.Limits`' fields; a
    spec's own win); ``log_dir``: the folder of their stderr logs (None: this process's stderr)."""
    protocol = {**(limits or {}), **({"log_dir": str(log_dir)} if log_dir is not None else {})}
    deals = bench.deals if deals is None else deals
    cells = range(len(bench.cells)) if cells is None else cells
    jobs = []  # (policy, cell, deal): one deal played from every seat
    for policy in policies:
        usable = [c for c in cells if fits(bench, policy, c)]
        if not usable:
            raise TournamentError(f"{policy} fits no cell of {bench.name} (wrong game or player count)")
        jobs += [(policy, c, k) for c in usable for k in range(deals)]
    seats = {c: int(dict(bench.cells[c])["num_players"]) for c in cells}
    bar = progress_bar(sum(seats[c] for _, c, _ in jobs), bench.name, progress)
    results: dict[tuple, list[dict]] = {}
    try:
        if workers <= 1:
            for job in jobs:
                results[job] = _play_cell(bench.name, job[0], job[1], [job[2]], greedy, protocol)
                bar.update(len(results[job]))
        else:
            with game_pool(workers, "spawn") as pool:
                futures = {pool.submit(_play_cell, bench.name, p, c, [k], greedy, protocol): (p, c, k)
                           for p, c, k in jobs}
                for fut in as_completed(futures):
                    results[futures[fut]] = fut.result()
                    bar.update(len(results[futures[fut]]))
    finally:
        close_worker_agents()
        bar.close()
    return {p: [g for job in jobs if job[0] == p for g in results[job]] for p in policies}


# ----------------------------------------------------------------------------- tables

#: (column, how it is computed) per metrics reader, in table order
COLUMNS = {
    "megagem": ["games", "win rate [95% CI]", "chance", "mean score [95% CI]", "profit / won lot", "overpay rate",
                "loans / game", "investments / game", "loan+invest net / game", "mission coins / game",
                "coins left"],
    "gem": ["games", "win rate [95% CI]", "chance", "mean points [95% CI]", "cards won / game", "price / card",
            "won cards invested", "gems / game", "majority points / game"],
}


def aggregate(metrics: str, games: Sequence[dict], players: Sequence[int]) -> dict[str, float | str]:
    """One table row from raw per-game counts (``players``: the seat count of each game, for chance)."""
    n = len(games)
    col = {k: np.array([g[k] for g in games], dtype=float) for k in games[0] if k not in ("cell", "deal", "seat")}
    wins = float(col["win"].sum())
    lo, hi = wilson_interval(wins, n)
    score = mean_interval(col["score"])
    row: dict[str, float | str] = {"games": n, "win_rate": wins / n, "win_lo": lo, "win_hi": hi,
                                   "chance": float(np.mean([1.0 / p for p in players])),
                                   "score": score[0], "score_lo": score[1], "score_hi": score[2]}
    if metrics == "megagem":
        row.update(profit_per_lot=col["profit"].sum() / max(col["lots"].sum(), 1),
                   overpay_rate=col["overpays"].sum() / max(col["treasure_lots"].sum(), 1),
                   loans=col["loans"].mean(), investments=col["investments"].mean(),
                   loan_invest_net=col["loan_invest_net"].mean(), missions=col["missions"].mean(),
                   coins_left=col["coins_left"].mean())
    else:
        row.update(cards=col["cards"].mean(), price_per_card=col["paid"].sum() / max(col["cards"].sum(), 1),
                   invested_share=col["invested_cards"].sum() / max(col["held_cards"].sum(), 1),
                   gems=col["gems"].mean(), majorities=col["majorities"].mean())
    zero = np.zeros(n)
    row.update(forfeits=int(col.get("forfeit", zero).sum()), timeouts=int(col.get("timeout", zero).sum()))
    return row


def _cells_row(metrics: str, row: dict) -> list[str]:
    head = [str(row["games"]), f"{row['win_rate']:.1%} [{row['win_lo']:.1%}, {row['win_hi']:.1%}]",
            f"{row['chance']:.0%}", f"{row['score']:.1f} [{row['score_lo']:.1f}, {row['score_hi']:.1f}]"]
    if metrics == "megagem":
        return head + [f"{row['profit_per_lot']:+.1f}", f"{row['overpay_rate']:.0%}", f"{row['loans']:.2f}",
                       f"{row['investments']:.2f}", f"{row['loan_invest_net']:+.1f}", f"{row['missions']:.1f}",
                       f"{row['coins_left']:.1f}"]
    return head + [f"{row['cards']:.2f}", f"{row['price_per_card']:.2f}", f"{row['invested_share']:.0%}",
                   f"{row['gems']:.1f}", f"{row['majorities']:.1f}"]


def summarize(bench: Benchmark, results: dict[str, list[dict]]) -> list[dict]:
    """Rows for every policy: overall, then per scope value (chart, players): dicts with ``policy``,
    ``scope`` and ``value`` plus the metrics."""
    rows = []
    keys = [k for k, _ in bench.cells[0]]
    for policy, games in results.items():
        cell_opts = [dict(bench.cells[g["cell"]]) for g in games]
        players = [o["num_players"] for o in cell_opts]
        rows.append({"policy": policy, "scope": "overall", "value": "all", **aggregate(bench.metrics, games, players)})
        for key in keys:
            for value in dict.fromkeys(dict(c)[key] for c in bench.cells):
                sub = [(g, o["num_players"]) for g, o in zip(games, cell_opts) if o[key] == value]
                if sub:
                    rows.append({"policy": policy, "scope": key, "value": value,
                                 **aggregate(bench.metrics, [g for g, _ in sub], [p for _, p in sub])})
    return rows


def title(bench: Benchmark, deals: int) -> str:
    """The heading line of a table: name, fingerprint, deals per cell, quick or not."""
    size = (f"{deals} deals per cell" if deals == bench.deals
            else f"quick: {deals} deals per cell, not the benchmark's {bench.deals}")
    return f"{bench.name} [{fingerprint(bench)}], {size}, every policy in every seat of every deal"


def markdown(bench: Benchmark, rows: Sequence[dict], deals: int) -> str:
    """Every table (overall, then per option of the cells) as Markdown (with forfeits and timeouts columns when
    a policy forfeited a game)."""
    forfeits = any(r.get("forfeits") for r in rows)
    cols = COLUMNS[bench.metrics] + (["forfeits", "timeouts"] if forfeits else [])
    out = [f"### {title(bench, deals)}", ""]
    scopes = list(dict.fromkeys(r["scope"] for r in rows))
    for scope in scopes:
        sub = [r for r in rows if r["scope"] == scope]
        label = "overall" if scope == "overall" else {"value_chart": "per value chart",
                                                      "num_players": "per player count"}.get(scope, scope)
        out += [f"**{label}**", ""]
        first = ["policy"] if scope == "overall" else ["policy", scope]
        out.append("| " + " | ".join(first + cols) + " |")
        out.append("|" + "---|" * (len(first) + len(cols)))
        for r in sub:
            lead = [r["policy"]] if scope == "overall" else [r["policy"], str(r["value"])]
            extra = [str(r.get("forfeits", 0)), str(r.get("timeouts", 0))] if forfeits else []
            out.append("| " + " | ".join(lead + _cells_row(bench.metrics, r) + extra) + " |")
        out.append("")
    return "\n".join(out)


def write_csv(path: Path, rows: Sequence[dict]) -> None:
    """All rows (long format: policy, scope, value, metrics), written all or nothing and never through a
    symbolic link (:func:`gemenvs.files.write_file`)."""
    import io

    from gemenvs.files import write_file

    keys = list(dict.fromkeys(k for r in rows for k in r))
    f = io.StringIO(newline="")
    w = csv.DictWriter(f, fieldnames=keys)
    w.writeheader()
    for r in rows:
        w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    path = Path(path)
    write_file(path.parent, path.name, f.getvalue())


#: the file that marks a folder as one gemenvs-benchmark writes its tables into
BENCHMARK_MARKER = ".gemenvs-benchmark"
_BENCHMARK_MARKER_TEXT = "gemenvs-benchmark writes its tables into this folder (and replaces them when run again).\n"


def prepare_out(out: Path, overwrite: bool = False, check_only: bool = False) -> Path:
    """``out`` ready for a benchmark's tables: a new or empty folder, or one a benchmark wrote before (it holds
    :data:`BENCHMARK_MARKER`); another folder only with ``overwrite``. A symbolic link there, or at a table's
    name, is refused (:class:`gemenvs.files.WriteRefused`). ``check_only``: refuse now, make nothing (the
    benchmark checks ``--out`` before it plays, and makes it after)."""
    from gemenvs.files import owned_folder

    owned_folder(out, BENCHMARK_MARKER, _BENCHMARK_MARKER_TEXT, overwrite,
                 hint=f"give another --out, or --overwrite to write the tables into it (a folder of an older "
                      f"version can be marked with: touch {out / BENCHMARK_MARKER})", check_only=check_only)
    return out


def write_tables(out: Path, overwrite: bool, name: str, text: str, rows: Sequence[dict]) -> None:
    """``out/NAME.md`` and ``out/NAME.csv``, into ``out`` made ready by :func:`prepare_out`."""
    from gemenvs.files import write_file

    prepare_out(out, overwrite)
    write_file(out, f"{name}.md", text + "\n")
    write_csv(out / f"{name}.csv", rows)


class CountGames:
    """An AEC environment that advances ``bar`` by one each time a game's ``agent_iter`` runs out (a game
    played to its end), for the bar of a :func:`gemenvs.arena.match.run_match`; all else is the env's."""

    def __init__(self, env, bar):
        self._env, self._bar = env, bar

    def agent_iter(self, *args, **kwargs):
        """The env's ``agent_iter``; the bar moves on when it ends."""
        yield from self._env.agent_iter(*args, **kwargs)
        self._bar.update(1)

    def __getattr__(self, name: str):
        return getattr(self._env, name)


# ----------------------------------------------------------------------------- command line

def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see ``gemenvs-benchmark --help``)."""
    from gemenvs.console import add_version_argument

    p = argparse.ArgumentParser(
        prog="gemenvs-benchmark", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Fixed, versioned bidding benchmarks: each POLICY (baseline name or model file) plays seeded "
                    "deals from every seat against a field of reference bidders.",
        epilog="benchmarks: bidding = megagem-bidding-v1, gem = gem-bidding-v1, exploit = approximate exploitability "
               "(configs/benchmark/exploitability-v1.yaml; --deals sets its evaluation games)\nexamples:\n"
               "  gemenvs-benchmark bidding random truthful heuristic --workers 2\n"
               "  gemenvs-benchmark bidding runs/megagem_selfplay/best_model.npz --deals 5\n"
               "  gemenvs-benchmark gem random greedy\n"
               "  gemenvs-benchmark bidding \"cmd:python examples/random_agent.py\" --deals 2 --decision-timeout 2\n"
               "  gemenvs-benchmark exploit heuristic\n")
    p.add_argument("suite", metavar="BENCHMARK", help="bidding (megagem-bidding-v1), gem (gem-bidding-v1) or exploit "
                                                      "(approximate exploitability)")
    p.add_argument("policies", nargs="+", metavar="POLICY", help="baseline names, search agents (ismcts, or ismcts:N "
                                                                  "for N simulations per decision), model files "
                                                                  "(.zip, .npz) and/or programs playing over the "
                                                                  "JSON-lines protocol (\"cmd:python my_agent.py\", "
                                                                  "tcp:HOST:PORT, unix:PATH)")
    p.add_argument("--deals", type=int, default=None, help="deals per cell for a quick look (default: the benchmark's)")
    p.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    p.add_argument("--greedy", action="store_true", help="model files play their most likely action (default: sample)")
    from gemenvs.arena.tournament import add_limit_arguments

    add_limit_arguments(p)
    p.add_argument("--out", default=None, help="folder for BENCHMARK.md and BENCHMARK.csv "
                                               "(default runs/benchmarks/NAME)")
    p.add_argument("--config", default=None, help="exploit: the config (default "
                                                  "configs/benchmark/exploitability-v1.yaml)")
    p.add_argument("--timesteps", type=int, default=None, help="exploit: a smaller training budget for a quick look")
    p.add_argument("--overwrite", action="store_true", help="write the tables into an existing --out folder that "
                                                            "gemenvs-benchmark did not make")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_version_argument(p)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``gemenvs-benchmark``; returns the exit status (2 and one line for a user error)."""

    try:
        ns = parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    try:
        if ns.suite == "exploit":
            raise TournamentError("the exploit benchmark trains a best response: run it as gemenvs-benchmark exploit "
                                  "(gemenvs.training.benchmark_cli), with the train extra")
        name = SUITES.get(ns.suite, ns.suite)
        if name not in BENCHMARKS:
            raise TournamentError(f"unknown benchmark {ns.suite!r}; benchmarks: "
                                  f"{', '.join(f'{k} ({v})' for k, v in SUITES.items())}")
        bench = BENCHMARKS[name]
        if ns.deals is not None and not 1 <= ns.deals <= 1000:
            raise TournamentError(f"--deals must be in 1..1000; got {ns.deals}")
        if ns.workers < 1:
            raise TournamentError(f"--workers must be at least 1; got {ns.workers}")
        if len(set(ns.policies)) != len(ns.policies):
            raise TournamentError("a policy is listed twice")
        deals = bench.deals if ns.deals is None else ns.deals
        limits = limits_of(ns)
        programs = any(is_protocol_spec(p) for p in ns.policies)
        out = prepare_out(Path(ns.out) if ns.out else Path("runs") / "benchmarks" / bench.name, ns.overwrite,
                          check_only=not programs)  # (programs log their stderr into it as they play)
        results = run_benchmark(bench, ns.policies, deals, ns.workers, progress=False if ns.no_progress else None,
                                greedy=ns.greedy, limits=limits,
                                log_dir=out / PROTOCOL_LOGS if programs else None)
        rows = summarize(bench, results)
        text = markdown(bench, rows, deals)
        write_tables(out, ns.overwrite, bench.name, text, rows)
    except (TournamentError, AgentSpecError, OSError) as e:
        print(f"gemenvs-benchmark: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    print(text)
    print(f"written to {out / (bench.name + '.md')} and {out / (bench.name + '.csv')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
