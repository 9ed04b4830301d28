"""Tune the MegaGem bidder family (ParametricBidder) by CMA-ES; write the weights TunedBidder plays.

CMA-ES (the ``cma`` package, ``pip install -c constraints.txt -e ".[bench]"``) searches the
weights of :class:`gemenvs.agents.megagem.tuned.ParametricBidder` in units of each weight's
``step`` around the start point (HeuristicBidder's :data:`DEFAULT_WEIGHTS`, or ``--start FILE``),
within each weight's bounds.

**Fitness** of a candidate, over the games of a generation spread evenly over the player counts
(``--players``, default 4) and value charts (``--charts``, default A-E):

- ``--games`` field games (default 270): the candidate in a random seat, every other seat drawn from
  ``--field`` (default ``heuristic:3,truthful:1,hall:1``: HeuristicBidder, TruthfulAgent, and the
  best candidates of the latest ``--hall`` earlier generations). F = the candidate's mean win share
  (1 for a win, 1/k for a win shared by k, else 0).
- ``--table-games`` candidate-table games (default 180): the candidate in every seat but one, a
  HeuristicBidder in that one (its seat rotated). H = the HeuristicBidder's mean win share there.
  The candidate's score for such a game is the win share of one of its seats, (1 - h) / (n - 1) for
  n players, so T = mean (1 - h) / (n - 1) is in the same unit as F (chance 1/n for both).

  fitness = (1 - W) * F + W * T,   W = ``--exploit-weight`` (default 0.7; 0: F alone)

Its maximum asks for two things: beat fields of HeuristicBidders (F) and hold a HeuristicBidder
to a low share at a table of the candidate (T rises as H falls), i.e. a bidder that does not
overbid copies of itself. At 4 players dT = -dH / 3, so with W = 0.7 one point of F is worth
0.3 / (0.7 / 3) = 1.3 points of H. The table games are there because F alone rewards a bidder
that beats HeuristicBidders while one HeuristicBidder still beats a table of its copies.

**Common random numbers**: every candidate of a generation plays the same games (seeds, seats,
fields, tables); each generation draws new games. Two extra reference players are scored on the
same games every generation without steering the search: the distribution mean and DEFAULT_WEIGHTS
(= the HeuristicBidder: F near 1/n, H near 1/n), so ``mean - default`` of the fitness in the log is a
paired, low-noise measure of progress.

**Output.** After every generation: ``STATE`` (``--state``, JSON; the whole run: configuration and
every generation's candidates and fitnesses), ``generations.jsonl`` beside it (one summary line per
generation) and the weights file (``--out``, default the shipped ``agents/data/megagem_tuned.json``)
with the distribution mean (CMA's ``xfavorite``) for every player count of ``--players``, plus its
tuning metadata; entries for other player counts already in the file are kept.

**Resume.** Run the same command again: an existing ``STATE`` with the same configuration is
continued (CMA-ES is rebuilt from its seed by replaying every logged generation's ask/tell; no
pickle); ``--budget-min`` is the wall time of this invocation. The configuration is ``--games``,
``--table-games``, ``--exploit-weight``, ``--popsize``, ``--sigma0``, ``--players``, ``--charts``,
``--field``, ``--hall``, ``--tune``, ``--start`` and ``--seed``: a different one with an existing state
is an error naming the differing settings (choose another ``--state``). A state that records no
candidate-table settings resumes as ``--table-games 0 --exploit-weight 0``.

**Budget.** A generation stops the run when starting another would pass ``--budget-min``. The
default generation is (14 candidates + 2 references) x (270 + 180) games = 7,200 4-player games;
how many generations fit in the budget depends on the machine and ``--workers`` (the log and
``generations.jsonl`` give each generation's wall time).

    # the default run (35 minutes, 2 workers; players 4 only), resumable with the same command:
    python benchmarks/tune_megagem.py --budget-min 35 --workers 2
    # it writes the 4-player entry of agents/data/megagem_tuned.json (the 3- and 5-player entries are
    # kept); then check it:
    python benchmarks/megagem_tuned_eval.py --games 2000 --workers 2
    # 3 and 5 players: one run and state each
    python benchmarks/tune_megagem.py --players 3 --state runs/tune_megagem_p3/state.json --budget-min 35
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from gemenvs.arena.match import play_engine_game
from gemenvs.agents.megagem import HeuristicBidder, TruthfulAgent
from gemenvs.agents.megagem.tuned import (
    DEFAULT_WEIGHTS, TUNED_WEIGHTS_FILE, WEIGHT_NAMES, WEIGHTS, ParametricBidder, WeightsError, check_weights,
    load_weights, write_weights_file,
)
from gemenvs.megagem import MegaGem
from gemenvs.megagem.data import CHART_NAMES
from gemenvs.arena.tournament import progress_bar

STATE_FORMAT = "gemenvs-megagem-tune-state/1"
FIELD_KINDS = ("heuristic", "truthful", "hall")
CHUNK = 40  # games per worker task
OFF_BEFORE_TABLES = {"table_games": 0, "exploit_weight": 0.0}


class TuneError(ValueError):
    """A bad option or an unusable state file (the message says which)."""


# --------------------------------------------------------------------------- coordinates

def tuned_weights(names: list[str]):
    """The :class:`Weight` records tuned, in vector order."""
    by = {w.name: w for w in WEIGHTS}
    return [by[n] for n in names]


def to_weights(z, names: list[str], start: dict[str, float]) -> dict[str, float]:
    """Weights from CMA coordinates ``z``: ``start + step * z`` for the tuned names, clipped to bounds."""
    out = dict(start)
    for x, w in zip(z, tuned_weights(names)):
        out[w.name] = float(min(w.high, max(w.low, start[w.name] + w.step * float(x))))
    return out


def z_bounds(names: list[str], start: dict[str, float]) -> tuple[list[float], list[float]]:
    """Each tuned weight's bounds in CMA coordinates."""
    ws = tuned_weights(names)
    return ([(w.low - start[w.name]) / w.step for w in ws], [(w.high - start[w.name]) / w.step for w in ws])


# --------------------------------------------------------------------------- games

TABLE = "table"  # the field of a candidate-table game: candidates in every seat but the planned one


def game_plan(config: dict, generation: int, hall_size: int) -> list[tuple]:
    """The games of one generation (the same for every candidate): (players, chart, seed, seat, field) each.

    The first ``games`` are field games: the candidate in ``seat``, field = one entry per other seat:
    "heuristic", "truthful" or a hall index. Then ``table_games`` candidate-table games: field =
    :data:`TABLE`, a HeuristicBidder in ``seat`` (rotated through the seats within each player count and
    chart) and the candidate in every other seat. Table games draw from their own stream, so the field
    games of a run without them are unchanged."""
    rng = np.random.default_rng([int(config["seed"]), int(generation)])
    players, charts = config["players"], config["charts"]
    kinds = [k for k, _ in config["field"] if k != "hall" or hall_size > 0]
    probs = np.array([wt for k, wt in config["field"] if k != "hall" or hall_size > 0], dtype=np.float64)
    probs /= probs.sum()
    plan = []
    for i in range(int(config["games"])):
        n = players[i % len(players)]
        chart = charts[(i // len(players)) % len(charts)]
        seed = int(rng.integers(2**31 - 1))
        seat = int(rng.integers(n))
        field = []
        for _ in range(n - 1):
            kind = kinds[int(rng.choice(len(kinds), p=probs))]
            field.append(int(rng.integers(hall_size)) if kind == "hall" else kind)
        plan.append((n, chart, seed, seat, tuple(field)))
    table_rng = np.random.default_rng([int(config["seed"]), int(generation), 1])
    cells = len(players) * len(charts)
    for i in range(int(config.get("table_games", 0))):
        n = players[i % len(players)]
        chart = charts[(i // len(players)) % len(charts)]
        plan.append((n, chart, int(table_rng.integers(2**31 - 1)), (i // cells) % n, TABLE))
    return plan


def seating(entry: tuple) -> list:
    """Who sits where in a planned game: per seat "candidate", "heuristic", "truthful" or a hall index."""
    n, _, _, seat, field = entry
    if field == TABLE:
        return ["heuristic" if s == seat else "candidate" for s in range(n)]
    others = iter(field)
    return ["candidate" if s == seat else next(others) for s in range(n)]


_GAMES: dict = {}
_BASELINES: dict = {}


def _game(n: int, chart: str) -> MegaGem:
    if (n, chart) not in _GAMES:
        _GAMES[n, chart] = MegaGem(num_players=n, value_chart=chart)
    return _GAMES[n, chart]


def _baseline(game: MegaGem, kind: str, seat: int):
    key = (game.num_players, kind, seat)
    if key not in _BASELINES:
        cls = HeuristicBidder if kind == "heuristic" else TruthfulAgent
        _BASELINES[key] = cls(spec=game.spec, action_spec=game.action_spec)
    return _BASELINES[key]


def play_chunk(task: tuple) -> list[tuple[float, float]]:
    """Play ``games`` with the candidate ``weights`` as planned; (value, margin) per game. Field game: value =
    the candidate's win share, margin = its score minus the best other score. Candidate-table game: value =
    the HeuristicBidder's win share, margin = the best candidate score minus the HeuristicBidder's."""
    weights, hall, games = task
    out = []
    agents_by: dict = {}  # one instance per (players, who, seat): agents remember within a game

    def agent(game: MegaGem, who, s: int):
        key = (game.num_players, who, s)
        if key not in agents_by:
            if who == "candidate" or isinstance(who, int):
                w = weights if who == "candidate" else hall[who]
                agents_by[key] = ParametricBidder(spec=game.spec, action_spec=game.action_spec, weights=w)
            else:
                agents_by[key] = _baseline(game, who, s)
        return agents_by[key]

    for entry in games:
        n, chart, seed, seat, field = entry
        game = _game(n, chart)
        agents = [agent(game, who, s) for s, who in enumerate(seating(entry))]
        res = game.results(play_engine_game(game, agents, seed))
        share = 1.0 / len(res.winners) if seat in res.winners else 0.0
        margin = float(res.scores[seat] - max(x for i, x in enumerate(res.scores) if i != seat))
        out.append((share, -margin if field == TABLE else margin))
    return out


def fitness_terms(plan: list[tuple], results: list[tuple[float, float]], exploit_weight: float) -> dict:
    """One candidate's fitness from its (value, margin) per planned game (see the module docstring).

    ``field_share``: mean win share in the field games; ``table_heuristic_share``: the HeuristicBidder's
    mean win share at the candidate tables (None without table games); ``table_share``: the mean win
    share of a candidate seat there, (1 - heuristic share) / (players - 1) per game, comparable to
    ``field_share`` (both are a candidate seat's win share, chance 1/players); ``fitness`` = (1 - W) x
    field_share + W x table_share (= field_share when W = 0)."""
    field = [r[0] for g, r in zip(plan, results) if g[4] != TABLE]
    table = [(r[0], g[0]) for g, r in zip(plan, results) if g[4] == TABLE]
    field_share = float(np.mean(field)) if field else 0.0
    out = {"field_share": field_share, "table_heuristic_share": None, "table_share": None,
           "fitness": field_share}
    if table:
        out["table_heuristic_share"] = float(np.mean([h for h, _ in table]))
        out["table_share"] = float(np.mean([(1.0 - h) / (n - 1) for h, n in table]))
    if exploit_weight > 0:
        if not table:
            raise TuneError("an exploit weight > 0 needs candidate-table games (--table-games)")
        out["fitness"] = (1.0 - exploit_weight) * field_share + exploit_weight * out["table_share"]
    return out


def fitness_difference(plan: list[tuple], a: list[tuple], b: list[tuple], exploit_weight: float
                       ) -> tuple[float, float]:
    """Paired fitness difference of two players scored on the same ``plan``, with its 95% half-width."""
    parts = []
    for table, weight in ((False, 1.0 - exploit_weight if exploit_weight > 0 else 1.0), (True, exploit_weight)):
        diffs = [(x[0] - y[0]) * (-1.0 / (g[0] - 1) if table else 1.0)
                 for g, x, y in zip(plan, a, b) if (g[4] == TABLE) == table]
        if weight > 0 and diffs:
            parts.append((weight, *_mean_ci(diffs)))
    return (float(sum(w * m for w, m, _ in parts)), float(math.sqrt(sum((w * h) ** 2 for w, _, h in parts))))


def evaluate(candidates: list[dict], hall: list[dict], plan: list[tuple], pool, bar=None
             ) -> list[list[tuple[float, float]]]:
    """Every candidate on every game of ``plan``: per candidate, the (win share, margin) of each game
    (``bar``: moved on by the games of each chunk played)."""
    tasks, owners = [], []
    for c, weights in enumerate(candidates):
        for i in range(0, len(plan), CHUNK):
            tasks.append((weights, hall, plan[i:i + CHUNK]))
            owners.append(c)
    results = pool.map(play_chunk, tasks) if pool is not None else map(play_chunk, tasks)
    out: list[list] = [[] for _ in candidates]
    for c, chunk in zip(owners, results):
        out[c].extend(chunk)
        if bar is not None:
            bar.update(len(chunk))
    return out


# --------------------------------------------------------------------------- the run

def parse_field(text: str) -> list[list]:
    """``"heuristic:2,truthful:1,hall:1"`` -> [["heuristic", 2.0], ...] (checked)."""
    out = []
    for part in text.split(","):
        name, _, wt = part.strip().partition(":")
        if name not in FIELD_KINDS:
            raise TuneError(f"--field: unknown kind {name!r} (known: {', '.join(FIELD_KINDS)})")
        try:
            x = float(wt or 1)
        except ValueError:
            raise TuneError(f"--field: weight of {name!r} is not a number: {wt!r}") from None
        if not (math.isfinite(x) and x >= 0):
            raise TuneError(f"--field: weight of {name!r} must be finite and >= 0")
        out.append([name, x])
    if not any(x > 0 for k, x in out if k != "hall"):
        raise TuneError("--field needs a baseline (heuristic or truthful) with a positive weight")
    return out


def make_config(ns: argparse.Namespace) -> dict:
    """The settings that define a run (a resumed state must have the same)."""
    import cma

    players = sorted({int(p) for p in str(ns.players).split(",")})
    if not players or any(p not in (3, 4, 5) for p in players):
        raise TuneError(f"--players: a comma-separated list of 3, 4, 5, got {ns.players!r}")
    charts = [c.strip().upper() for c in ns.charts.split(",")] if "," in ns.charts else list(ns.charts.upper())
    if not charts or any(c not in CHART_NAMES for c in charts):
        raise TuneError(f"--charts: letters of {''.join(CHART_NAMES)}, got {ns.charts!r}")
    names = list(WEIGHT_NAMES) if ns.tune == "all" else [n.strip() for n in ns.tune.split(",")]
    unknown = [n for n in names if n not in WEIGHT_NAMES]
    if unknown or not names:
        raise TuneError(f"--tune: unknown weight(s) {', '.join(unknown)}; known: {', '.join(WEIGHT_NAMES)}")
    if len(names) < 2:
        raise TuneError("--tune: CMA-ES needs at least two weights")
    if ns.games < 1 or ns.hall < 0 or ns.sigma0 <= 0:
        raise TuneError("--games >= 1, --hall >= 0 and --sigma0 > 0 are needed")
    if ns.table_games < 0:
        raise TuneError("--table-games must be >= 0")
    if not (math.isfinite(ns.exploit_weight) and 0.0 <= ns.exploit_weight <= 1.0):
        raise TuneError(f"--exploit-weight must be in [0, 1], got {ns.exploit_weight!r}")
    if ns.exploit_weight > 0 and ns.table_games == 0:
        raise TuneError("--exploit-weight > 0 needs candidate-table games: give --table-games > 0")
    start = dict(DEFAULT_WEIGHTS)
    if ns.start:
        start = load_weights(ns.start, players[len(players) // 2])
    popsize = ns.popsize or 4 + int(3 * math.log(len(names)))
    if popsize < 2:
        raise TuneError("--popsize must be at least 2")
    return {"seed": ns.seed, "games": ns.games, "popsize": popsize, "sigma0": ns.sigma0, "players": players,
            "charts": charts, "field": parse_field(ns.field), "hall": ns.hall, "table_games": ns.table_games,
            "exploit_weight": float(ns.exploit_weight), "tune": names,
            "start": check_weights(start, "start weights"), "cma": cma.__version__}


def new_es(config: dict):
    """A fresh CMA-ES for ``config`` (deterministic: seeded from the run's seed)."""
    import cma

    lo, hi = z_bounds(config["tune"], config["start"])
    opts = {"seed": 1 + int(config["seed"]) % (2**31 - 2), "popsize": config["popsize"], "bounds": [lo, hi],
            "verbose": -9, "verb_log": 0, "verb_disp": 0}
    return cma.CMAEvolutionStrategy([0.0] * len(config["tune"]), config["sigma0"], opts)


def load_state(path: Path, config: dict) -> dict:
    """The state at ``path`` (checked against ``config``), or a new one if there is none."""
    if not path.exists():
        return {"format": STATE_FORMAT, "config": config, "generations": []}
    try:
        state = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise TuneError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        raise TuneError(f"{path}: not a tuning state (format {STATE_FORMAT})")
    old = state.get("config")
    if isinstance(old, dict):
        old = {**OFF_BEFORE_TABLES, **old}  # states from before candidate tables had none
    if old != config:
        old = old if isinstance(old, dict) else {}
        diff = sorted(k for k in set(old) | set(config) if old.get(k) != config.get(k))
        raise TuneError(f"{path}: this state was made with other settings ({', '.join(diff)}); resume with the "
                        f"same options or give another --state")
    state["config"] = config
    return state


def replay(es, state: dict) -> None:
    """Bring a fresh CMA-ES to the end of the logged generations (ask, then tell the logged candidates)."""
    for g in state["generations"]:
        asked = np.array(es.ask())
        logged = np.array(g["candidates"], dtype=np.float64)
        if asked.shape != logged.shape:
            raise TuneError(f"generation {g['generation']}: the state has {len(logged)} candidates, CMA-ES asked "
                            f"for {len(asked)}")
        es.tell(list(logged), g["fitness"])


def hall_of_fame(state: dict, size: int) -> list[dict]:
    """The best candidates of the latest ``size`` generations, oldest first."""
    return [g["best_weights"] for g in state["generations"][-size:]] if size else []


def _write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data) + "\n")
    os.replace(tmp, path)


def _mean_ci(xs) -> tuple[float, float]:
    xs = np.asarray(xs, dtype=np.float64)
    half = 1.96 * float(xs.std(ddof=1)) / math.sqrt(xs.size) if xs.size > 1 else 0.0
    return float(xs.mean()), half


def run(ns: argparse.Namespace, log=print) -> dict:
    """Run (or resume) a tuning; return its state."""
    config = make_config(ns)
    state_path = Path(ns.state)
    state = load_state(state_path, config)
    es = new_es(config)
    replay(es, state)
    names, start = config["tune"], config["start"]
    jsonl = state_path.with_name("generations.jsonl")
    t_start = time.perf_counter()
    budget = ns.budget_min * 60.0
    done_here = 0
    last_wall = 0.0
    pool = ProcessPoolExecutor(ns.workers) if ns.workers > 1 else None
    log(f"tuning {len(names)} weights, popsize {config['popsize']}, {config['games']} field + "
        f"{config['table_games']} candidate-table games per candidate, exploit weight {config['exploit_weight']:g}, players "
        f"{config['players']}, charts {''.join(config['charts'])}; {len(state['generations'])} generations in "
        f"{state_path}; budget {ns.budget_min:g} min, {ns.workers} worker(s)")
    try:
        while True:
            gen = len(state["generations"])
            if ns.generations is not None and gen >= ns.generations:
                break
            elapsed = time.perf_counter() - t_start
            if done_here and elapsed + last_wall > budget:
                break
            t0 = time.perf_counter()
            X = es.ask()
            mean_before = to_weights(es.result.xfavorite, names, start)
            candidates = [to_weights(x, names, start) for x in X] + [mean_before, dict(DEFAULT_WEIGHTS)]
            hall = hall_of_fame(state, config["hall"])
            plan = game_plan(config, gen, len(hall))
            with progress_bar(len(candidates) * len(plan), f"generation {gen}", getattr(ns, "progress", None),
                              leave=False) as bar:
                results = evaluate(candidates, hall, plan, pool, bar)
            W = config["exploit_weight"]
            terms = [fitness_terms(plan, res, W) for res in results]
            scores = [t["fitness"] for t in terms]
            fitness = [-f for f in scores[:len(X)]]
            es.tell(X, fitness)
            best = int(np.argmax(scores[:len(X)]))
            mean_res, default_res = results[-2], results[-1]
            d_mean, d_half = fitness_difference(plan, mean_res, default_res, W)
            by_players = {}
            for p in config["players"]:
                idx = [i for i, g in enumerate(plan) if g[0] == p and g[4] != TABLE]
                by_players[str(p)] = [float(np.mean([mean_res[i][0] for i in idx])),
                                      float(np.mean([default_res[i][0] for i in idx]))]
            last_wall = time.perf_counter() - t0
            field_games = [i for i, g in enumerate(plan) if g[4] != TABLE]
            record = {
                "generation": gen, "games": len(plan), "table_games": len(plan) - len(field_games),
                "wall_s": round(last_wall, 2),
                "candidates": [list(map(float, x)) for x in X], "fitness": fitness, "best": best,
                "best_fitness": scores[best], "best_share": terms[best]["field_share"],
                "best_weights": candidates[best],
                "mean_fitness": scores[-2], "default_fitness": scores[-1],
                "mean_share": terms[-2]["field_share"], "default_share": terms[-1]["field_share"],
                # HeuristicBidder's win share at a table of the candidate (None without table games)
                "table_heuristic_shares": [t["table_heuristic_share"] for t in terms],  # candidates, mean, default
                "mean_minus_default": [d_mean, d_half],  # fitness, paired, 95% half-width
                "mean_margin": float(np.mean([mean_res[i][1] for i in field_games])),
                "shares_by_players": by_players,  # players -> [mean, default], field games
                "mean_weights": mean_before, "sigma": float(es.sigma), "hall": len(hall),
            }
            state["generations"].append(record)
            _write_json(state_path, state)
            summary = {k: record[k] for k in ("generation", "games", "table_games", "wall_s", "best_fitness",
                                              "best_share", "mean_fitness", "default_fitness", "mean_share",
                                              "default_share", "mean_minus_default", "mean_margin",
                                              "shares_by_players", "sigma")}
            summary["mean_table_heuristic_share"] = record["table_heuristic_shares"][-2]
            summary["default_table_heuristic_share"] = record["table_heuristic_shares"][-1]
            with jsonl.open("a") as f:
                f.write(json.dumps(summary) + "\n")
            write_output(ns, config, state, to_weights(es.result.xfavorite, names, start))
            done_here += 1
            h_mean = terms[-2]["table_heuristic_share"]
            table = "" if h_mean is None else f"  heuristic at mean's table {h_mean:.3f}"
            log(f"gen {gen:3d}  fitness best {scores[best]:.3f} mean {scores[-2]:.3f} default {scores[-1]:.3f} "
                f"(mean-default {d_mean:+.3f} +-{d_half:.3f})  field share mean {terms[-2]['field_share']:.3f}"
                f"{table}  sigma {es.sigma:.3f}  {last_wall:.0f}s")
    finally:
        if pool is not None:
            pool.shutdown()
    return state


def write_output(ns: argparse.Namespace, config: dict, state: dict, weights: dict) -> None:
    """Write the distribution mean to the weights file for every tuned player count, with its metadata."""
    gens = state["generations"]
    last = gens[-1]
    recent = gens[-5:]
    tuning = {
        "method": "CMA-ES (cma %s) over ParametricBidder weights, benchmarks/tune_megagem.py" % config["cma"],
        "provisional": bool(ns.provisional),
        "written": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "generations": len(gens),
        "games_played": int(sum(g["games"] * (len(g["candidates"]) + 2) for g in gens)),
        "wall_s_total": round(sum(g["wall_s"] for g in gens), 1),
        "machine": f"{platform.machine()}, {os.cpu_count()} cpus",
        "config": {k: v for k, v in config.items() if k != "start"},
        "started_from": "DEFAULT_WEIGHTS" if config["start"] == dict(DEFAULT_WEIGHTS) else ns.start,
        "fitness": ("(1 - W) x win share in the tuning field + W x (1 - HeuristicBidder's win share at a table "
                    "of the candidate) / (players - 1), W = %g (players %s, charts %s)" % (
                        config["exploit_weight"], config["players"], "".join(config["charts"]))),
        "last_generation": {"mean_fitness": last.get("mean_fitness"), "default_fitness": last.get("default_fitness"),
                            "mean_share": last["mean_share"], "default_share": last["default_share"],
                            "mean_table_heuristic_share": (last.get("table_heuristic_shares") or [None, None])[-2],
                            "mean_minus_default": last["mean_minus_default"]},
        "last_5_generations_mean_minus_default": float(np.mean([g["mean_minus_default"][0] for g in recent])),
    }
    if ns.note:
        tuning["note"] = ns.note
    entries = {p: {"weights": weights, "tuning": tuning} for p in config["players"]}
    note = ("Tuned ParametricBidder weights per player count (gemenvs.agents.megagem.tuned.TunedBidder); "
            "each entry's 'tuning' says how they were made.")
    write_weights_file(ns.out, entries, note=note)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--state", default="runs/tune_megagem_p4/state.json",
                    help="run state (JSON; resumed if present; default runs/tune_megagem_p4/state.json)")
    ap.add_argument("--out", default=str(TUNED_WEIGHTS_FILE), help="weights file to write (default: the shipped one)")
    ap.add_argument("--budget-min", type=float, default=35.0, help="wall-time budget of this invocation, minutes")
    ap.add_argument("--generations", type=int, default=None, help="stop when the state has this many generations")
    ap.add_argument("--games", type=int, default=270,
                    help="field games per candidate per generation (default 270)")
    ap.add_argument("--table-games", type=int, default=180,
                    help="candidate-table games per candidate per generation: the candidate in every seat but one, "
                         "a HeuristicBidder in that one (default 180; 0: none)")
    ap.add_argument("--exploit-weight", type=float, default=0.7,
                    help="W in fitness = (1-W) x field win share + W x (1 - HeuristicBidder's share at the candidate "
                         "tables) / (players-1) (default 0.7; 0: field win share alone)")
    ap.add_argument("--popsize", type=int, default=0, help="CMA-ES population (default 4 + 3 ln(dimension))")
    ap.add_argument("--sigma0", type=float, default=1.0, help="initial step size, in weight steps (default 1)")
    ap.add_argument("--players", default="4",
                    help="comma-separated player counts of the fitness games; the weights are written for each "
                         "(default 4)")
    ap.add_argument("--charts", default="ABCDE", help="value charts of the fitness games (default ABCDE)")
    ap.add_argument("--field", default="heuristic:3,truthful:1,hall:1",
                    help="field games' opponent kinds with relative weights, drawn per seat "
                         "(default heuristic:3,truthful:1,hall:1)")
    ap.add_argument("--hall", type=int, default=8, help="earlier generations' best kept as opponents (default 8)")
    ap.add_argument("--tune", default="all", help="comma-separated weight names to tune (default all)")
    ap.add_argument("--start", default=None,
                    help="weights file to start from: its entry for the middle count of --players "
                         "(default DEFAULT_WEIGHTS)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2, help="worker processes (default 2; 1 plays in-process)")
    ap.add_argument("--provisional", action="store_true", help="mark the written weights as a provisional run")
    ap.add_argument("--note", default=None, help="free text stored in the weights' tuning metadata")
    ap.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="a progress bar of each generation's games on stderr (default: only when stderr is a "
                         "terminal)")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run or resume a tuning; 2 on a bad option or state."""
    try:
        run(parse_args(argv))
    except (TuneError, WeightsError, FileNotFoundError) as e:
        print(f"tune_megagem: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
