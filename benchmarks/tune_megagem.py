"""Tune the MegaGem bidder family (ParametricBidder) by CMA-ES; write the weights TunedBidder plays.

CMA-ES (the ``cma`` package, ``pip install -c constraints.txt -e ".[bench]"``) searches the
weights of :class:`gemenvs.agents.megagem_tuned.ParametricBidder` in units of each weight's
``step`` around the start point (HeuristicBidder's :data:`DEFAULT_WEIGHTS`, or ``--start FILE``),
within each weight's bounds.

**Fitness** of a candidate: its mean win share (1 for a win, 1/k for a win shared by k, else 0)
over ``--games`` games per generation, spread evenly over the player counts (``--players``, default
3, 4, 5) and the value charts (``--charts``, default A-E), the candidate in a random seat among a
field drawn per seat from ``--field`` (default ``heuristic:2,truthful:1,hall:2``: HeuristicBidder,
TruthfulAgent, and the best candidates of the latest ``--hall`` earlier generations). **Common
random numbers**: every candidate of a generation plays the same games (seeds, seats, fields);
each generation draws new games. Two extra reference players are scored on the same games every
generation without steering the search: the distribution mean and DEFAULT_WEIGHTS (= the
HeuristicBidder), so ``mean - default`` in the log is a paired, low-noise measure of progress.

**Output.** After every generation: ``STATE`` (``--state``, JSON; the whole run: configuration and
every generation's candidates and fitnesses), ``generations.jsonl`` beside it (one summary line per
generation) and the weights file (``--out``, default the shipped ``agents/data/megagem_tuned.json``)
with the distribution mean (CMA's ``xfavorite``) for every player count of ``--players``, plus its
tuning metadata; entries for other player counts already in the file are kept.

**Resume.** Run the same command again: an existing ``STATE`` with the same configuration is
continued (CMA-ES is rebuilt from its seed by replaying every logged generation's ask/tell; no
pickle); ``--budget-min`` is the wall time of this invocation. A different configuration with an
existing state is an error (choose another ``--state``).

**Budget.** A generation stops the run when starting another would pass ``--budget-min``; at
about 12 ms per game per core, 2 workers play about 150 games a second, so the default (35 minutes,
450 games x (13 candidates + 2 references) = 6,750 games a generation) runs about 45 generations.

    # the real run (about 35 minutes on 2 quiet cores), resumable:
    python benchmarks/tune_megagem.py --budget-min 35 --workers 2
    # per player count instead of one vector for all: three runs, three states
    python benchmarks/tune_megagem.py --players 4 --state runs/tune_megagem_p4/state.json --budget-min 35
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

from gemenvs.agents.match import play_engine_game
from gemenvs.agents.megagem import HeuristicBidder, TruthfulAgent
from gemenvs.agents.megagem_tuned import (
    DEFAULT_WEIGHTS, TUNED_WEIGHTS_FILE, WEIGHT_NAMES, WEIGHTS, ParametricBidder, WeightsError, check_weights,
    load_weights, write_weights_file,
)
from gemenvs.megagem import MegaGem
from gemenvs.megagem.data import CHART_NAMES

STATE_FORMAT = "gemenvs-megagem-tune-state/1"
FIELD_KINDS = ("heuristic", "truthful", "hall")
CHUNK = 40  # games per worker task


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

def game_plan(config: dict, generation: int, hall_size: int) -> list[tuple]:
    """The games of one generation (the same for every candidate): (players, chart, seed, seat, field) each,
    field = one entry per other seat: "heuristic", "truthful" or a hall index."""
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
    return plan


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
    """Play ``games`` with the candidate ``weights`` in its planned seat; (win share, margin) per game."""
    weights, hall, games = task
    out = []
    cands: dict = {}
    halls: dict = {}
    for n, chart, seed, seat, field in games:
        game = _game(n, chart)
        if n not in cands:
            cands[n] = ParametricBidder(spec=game.spec, action_spec=game.action_spec, weights=weights)
        agents, k = [], 0
        for s in range(n):
            if s == seat:
                agents.append(cands[n])
                continue
            kind = field[k]
            k += 1
            if isinstance(kind, int):
                key = (n, kind, s)
                if key not in halls:
                    halls[key] = ParametricBidder(spec=game.spec, action_spec=game.action_spec, weights=hall[kind])
                agents.append(halls[key])
            else:
                agents.append(_baseline(game, kind, s))
        res = game.results(play_engine_game(game, agents, seed))
        share = 1.0 / len(res.winners) if seat in res.winners else 0.0
        out.append((share, float(res.scores[seat] - max(x for i, x in enumerate(res.scores) if i != seat))))
    return out


def evaluate(candidates: list[dict], hall: list[dict], plan: list[tuple], pool) -> list[list[tuple[float, float]]]:
    """Every candidate on every game of ``plan``: per candidate, the (win share, margin) of each game."""
    tasks, owners = [], []
    for c, weights in enumerate(candidates):
        for i in range(0, len(plan), CHUNK):
            tasks.append((weights, hall, plan[i:i + CHUNK]))
            owners.append(c)
    results = pool.map(play_chunk, tasks) if pool is not None else map(play_chunk, tasks)
    out: list[list] = [[] for _ in candidates]
    for c, chunk in zip(owners, results):
        out[c].extend(chunk)
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
    start = dict(DEFAULT_WEIGHTS)
    if ns.start:
        start = load_weights(ns.start, players[len(players) // 2])
    popsize = ns.popsize or 4 + int(3 * math.log(len(names)))
    if popsize < 2:
        raise TuneError("--popsize must be at least 2")
    return {"seed": ns.seed, "games": ns.games, "popsize": popsize, "sigma0": ns.sigma0, "players": players,
            "charts": charts, "field": parse_field(ns.field), "hall": ns.hall, "tune": names,
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
    if state.get("config") != config:
        old = state.get("config", {})
        diff = sorted(k for k in set(old) | set(config) if old.get(k) != config.get(k))
        raise TuneError(f"{path}: this state was made with other settings ({', '.join(diff)}); resume with the "
                        f"same options or give another --state")
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
    log(f"tuning {len(names)} weights, popsize {config['popsize']}, {config['games']} games per candidate, players "
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
            results = evaluate(candidates, hall, plan, pool)
            shares = [float(np.mean([r[0] for r in res])) for res in results]
            fitness = [-s for s in shares[:len(X)]]
            es.tell(X, fitness)
            best = int(np.argmax(shares[:len(X)]))
            mean_res, default_res = results[-2], results[-1]
            diff = [a[0] - b[0] for a, b in zip(mean_res, default_res)]
            d_mean, d_half = _mean_ci(diff)
            by_players = {}
            for p in config["players"]:
                idx = [i for i, g in enumerate(plan) if g[0] == p]
                by_players[str(p)] = [float(np.mean([mean_res[i][0] for i in idx])),
                                      float(np.mean([default_res[i][0] for i in idx]))]
            last_wall = time.perf_counter() - t0
            record = {
                "generation": gen, "games": len(plan), "wall_s": round(last_wall, 2),
                "candidates": [list(map(float, x)) for x in X], "fitness": fitness, "best": best,
                "best_share": shares[best], "best_weights": candidates[best],
                "mean_share": shares[-2], "default_share": shares[-1],
                "mean_minus_default": [d_mean, d_half],
                "mean_margin": float(np.mean([r[1] for r in mean_res])),
                "shares_by_players": by_players,  # players -> [mean, default]
                "mean_weights": mean_before, "sigma": float(es.sigma), "hall": len(hall),
            }
            state["generations"].append(record)
            _write_json(state_path, state)
            summary = {k: record[k] for k in ("generation", "games", "wall_s", "best_share", "mean_share",
                                              "default_share", "mean_minus_default", "mean_margin",
                                              "shares_by_players", "sigma")}
            with jsonl.open("a") as f:
                f.write(json.dumps(summary) + "\n")
            write_output(ns, config, state, to_weights(es.result.xfavorite, names, start))
            done_here += 1
            log(f"gen {gen:3d}  best {shares[best]:.3f}  mean {shares[-2]:.3f}  default {shares[-1]:.3f}  "
                f"mean-default {d_mean:+.3f} +-{d_half:.3f}  sigma {es.sigma:.3f}  {last_wall:.0f}s")
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
        "fitness": "mean win share in the tuning field (players %s, charts %s)" % (
            config["players"], "".join(config["charts"])),
        "last_generation": {"mean_share": last["mean_share"], "default_share": last["default_share"],
                            "mean_minus_default": last["mean_minus_default"]},
        "last_5_generations_mean_minus_default": float(np.mean([g["mean_minus_default"][0] for g in recent])),
    }
    if ns.note:
        tuning["note"] = ns.note
    entries = {p: {"weights": weights, "tuning": tuning} for p in config["players"]}
    note = ("Tuned ParametricBidder weights per player count (gemenvs.agents.megagem_tuned.TunedBidder); "
            "each entry's 'tuning' says how they were made.")
    write_weights_file(ns.out, entries, note=note)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--state", default="runs/tune_megagem/state.json", help="run state (JSON; resumed if present)")
    ap.add_argument("--out", default=str(TUNED_WEIGHTS_FILE), help="weights file to write (default: the shipped one)")
    ap.add_argument("--budget-min", type=float, default=35.0, help="wall-time budget of this invocation, minutes")
    ap.add_argument("--generations", type=int, default=None, help="stop when the state has this many generations")
    ap.add_argument("--games", type=int, default=450, help="games per candidate per generation (default 450)")
    ap.add_argument("--popsize", type=int, default=0, help="CMA-ES population (default 4 + 3 ln(dimension))")
    ap.add_argument("--sigma0", type=float, default=1.0, help="initial step size, in weight steps (default 1)")
    ap.add_argument("--players", default="3,4,5", help="player counts of the fitness games (default 3,4,5)")
    ap.add_argument("--charts", default="ABCDE", help="value charts of the fitness games (default ABCDE)")
    ap.add_argument("--field", default="heuristic:2,truthful:1,hall:2",
                    help="opponent kinds with relative weights, drawn per seat (default heuristic:2,truthful:1,hall:2)")
    ap.add_argument("--hall", type=int, default=8, help="earlier generations' best kept as opponents (default 8)")
    ap.add_argument("--tune", default="all", help="comma-separated weight names to tune (default all)")
    ap.add_argument("--start", default=None,
                    help="weights file to start from: its entry for the middle count of --players "
                         "(default DEFAULT_WEIGHTS)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2, help="worker processes (default 2; 1 plays in-process)")
    ap.add_argument("--provisional", action="store_true", help="mark the written weights as a provisional run")
    ap.add_argument("--note", default=None, help="free text stored in the weights' tuning metadata")
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
