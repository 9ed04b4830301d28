"""Evaluate a policy against copies of each baseline: win rates and score margins with 95% intervals.

The focal agent takes every seat in turn (``gemenvs.agents.run_match``), every other seat is a
copy of one baseline. Games are split over worker processes in blocks that keep the serial
seeds and seat rotation, so the result does not depend on the number of workers. An opponent may be
a search agent (``ismcts:8``: ISMCTS with 8 simulations per decision): the games run through
:func:`gemenvs.arena.match.play_game`, which hands agents with ``needs_state`` the engine state
(:func:`gemenvs.agents.base.decide`); the focal policy only ever sees its observation and mask.

With ``charts`` (MegaGem's value charts, e.g. ``["A", "B", "C", "D", "E"]``) each opponent's games
are split evenly over the charts, every chart's games played with that ``value_chart`` option;
the result per opponent is a :class:`ChartResults`: the pooled match result with one result per
chart in ``by_chart``, which :func:`results_table` and :func:`results_dict` show as per-chart rows.
"""
from __future__ import annotations

import csv
import os
import re
from concurrent.futures import as_completed
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gemenvs.agents.base import Agent
from gemenvs.arena.lockstep import run_match_lockstep
from gemenvs.arena.match import MatchResult
from gemenvs.arena.resolve import agent_label, resolve_agent
from gemenvs.arena.single_agent import make_aec_env
from gemenvs.core.entry import game_pool

#: seat rotations per block of evaluation games at most (a block is the unit of the progress bar and of the workers)
BLOCK_ROTATIONS = 10


def _play_block(env_id: str, options: dict, focal: Agent, opponent: str, games: int, seed: int,
                save_dir: str | None = None) -> MatchResult:
    """``games`` games of ``focal`` against copies of ``opponent``, seeds ``seed..seed+games-1``: ``run_match``'s
    games, played side by side (every agent deciding for all of them at once: gemenvs.arena.lockstep)."""
    env = make_aec_env(env_id, **options)
    game = env.unwrapped.game.name
    n = len(env.possible_agents)
    opponents = [resolve_agent(game, opponent, env, seed=seed + k) for k in range(n - 1)]
    env.close()
    return run_match_lockstep(lambda: make_aec_env(env_id, **options), focal, opponents, games, seed=seed,
                              save_dir=save_dir)


def opponent_folders(opponents: list[str]) -> dict[str, str]:
    """A distinct, safe folder name per opponent (``heuristic``; ``best_model`` for ``runs/x/best_model.zip``)."""
    out: dict[str, str] = {}
    for opp in opponents:
        stem = agent_label(opp)
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("._") or "opponent"
        base, k = name, 2
        while name in out.values():
            name, k = f"{base}-{k}", k + 1
        out[opp] = name
    return out


@dataclass
class ChartResults(MatchResult):
    """A match result pooled over value charts, with the result on each chart in ``by_chart`` (chart order)."""

    by_chart: dict[str, MatchResult] = field(default_factory=dict)


def _merge(parts: list[MatchResult], out: MatchResult | None = None) -> MatchResult:
    out = MatchResult() if out is None else out
    for p in parts:
        out.games += p.games
        out.wins += p.wins
        out.margins.extend(p.margins)
        out.scores.extend(p.scores)
    return out


def chart_games(games: int, charts: int, num_players: int) -> int:
    """Games per chart when ``games`` are split over ``charts`` charts: rounded up to whole seat rotations."""
    per = -(-games // charts)
    return -(-per // num_players) * num_players


def evaluate(focal: Agent, env_id: str, options: dict, opponents: list[str], games: int, seed: int = 0,
             workers: int = 1, save_dir: str | os.PathLike | None = None,
             charts: list[str] | None = None, progress: bool = False,
             desc: str = "evaluation") -> dict[str, MatchResult]:
    """Play ``games`` games against copies of each opponent; ``workers`` processes share the games
    (``progress``: a bar of the games played, named ``desc``).

    With ``save_dir`` every game is saved (:mod:`gemenvs.recording`) as
    ``save_dir/<opponent>/game_<seed>.jsonl``, one folder per opponent (:func:`opponent_folders`).
    With ``charts`` the games are split over those value charts (:func:`chart_games` per chart, seeds
    ``seed + i * that`` onwards for the i-th chart, saved under ``<opponent>/chart_<X>/``) and each
    opponent's result is a :class:`ChartResults`.
    """
    n = len(make_aec_env(env_id, **options).possible_agents)
    folders = opponent_folders(opponents)
    where = {opp: None if save_dir is None else os.path.join(os.fspath(save_dir), folders[opp]) for opp in opponents}
    if charts is not None:
        if not charts:
            raise ValueError("charts must name at least one value chart, or be None")
        per = chart_games(games, len(charts), n)
        # (opponent, chart, options, first seed, games, save folder) of every chart's share of the games
        cells = [(opp, ch, {**options, "value_chart": ch}, seed + i * per, per,
                  None if where[opp] is None else os.path.join(where[opp], f"chart_{ch}"))
                 for opp in opponents for i, ch in enumerate(charts)]
    else:
        cells = [(opp, None, options, seed, games, where[opp]) for opp in opponents]
    # blocks of whole seat rotations, so a block's seats and seeds are those of the serial match (every agent is
    # reseeded per game), whatever the block size
    jobs = []
    for c, (opp, ch, opts, first, count, folder) in enumerate(cells):
        block = max(n, min(-(-count // max(workers, 1)) // n * n, BLOCK_ROTATIONS * n))
        jobs += [(c, opts, opp, min(block, count - start), first + start, folder) for start in range(0, count, block)]
    from tqdm.auto import tqdm

    parts: list = [None] * len(jobs)
    with tqdm(total=sum(job[3] for job in jobs), desc=desc, unit="game", disable=not progress,
              dynamic_ncols=True, leave=False) as bar:
        if workers <= 1 or len(jobs) == 1:
            for j, (_, opts, opp, k, s, f) in enumerate(jobs):
                parts[j] = _play_block(env_id, opts, focal, opp, k, s, f)
                bar.update(k)
        else:
            with game_pool(workers) as pool:
                futures = {pool.submit(_play_block, env_id, opts, focal, opp, k, s, f): j
                           for j, (_, opts, opp, k, s, f) in enumerate(jobs)}
                for future in as_completed(futures):
                    parts[futures[future]] = future.result()
                    bar.update(jobs[futures[future]][3])
    per_cell = [_merge([p for job, p in zip(jobs, parts) if job[0] == c]) for c in range(len(cells))]
    results: dict[str, MatchResult] = {}
    for opp in opponents:
        mine = [(cell[1], r) for cell, r in zip(cells, per_cell) if cell[0] == opp]
        if charts is None:
            results[opp] = mine[0][1]
        else:
            results[opp] = _merge([r for _, r in mine], ChartResults(by_chart=dict(mine)))
    return results


#: the columns of a run's eval.csv (one row per periodic evaluation and opponent; read by plotting)
EVAL_FIELDS = ["step", "opponent", "games", "win_rate", "win_lo", "win_hi", "mean_margin"]


def append_eval_rows(path: str | os.PathLike, step: int, results: dict[str, MatchResult]) -> None:
    """Append one eval.csv row per opponent of a periodic evaluation at ``step`` (header on a new file); never
    through a symbolic link or into a file with other hard links (:func:`gemenvs.files.open_append`)."""
    from gemenvs.files import open_append

    path = Path(path)
    with open_append(path.parent, path.name) as f:
        writer = csv.DictWriter(f, fieldnames=EVAL_FIELDS)
        if f.tell() == 0:
            writer.writeheader()
        for name, r in results.items():
            lo, hi = r.win_ci
            writer.writerow({"step": step, "opponent": name, "games": r.games, "win_rate": r.win_rate,
                             "win_lo": lo, "win_hi": hi, "mean_margin": r.mean_margin})


def _row(label: str, r: MatchResult) -> str:
    lo, hi = r.win_ci
    mlo, mhi = r.margin_ci
    return (f"| {label} | {r.games} | {r.win_rate:.1%} | {lo:.1%} - {hi:.1%} | "
            f"{r.mean_margin:+.1f} | {mlo:+.1f} - {mhi:+.1f} |")


def results_table(results: dict[str, MatchResult], num_players: int) -> str:
    """A Markdown table: games, win rate and mean score margin with their 95% intervals, per opponent
    (and, for :class:`ChartResults`, a row per chart after the row pooled over the charts)."""
    chance = 1.0 / num_players
    charted = any(isinstance(r, ChartResults) for r in results.values())
    head = "| opponents ({} copies) | chart | games | win rate | 95% CI | mean margin | 95% CI |" if charted else \
        "| opponents ({} copies) | games | win rate | 95% CI | mean margin | 95% CI |"
    rows = [head.format(num_players - 1), "|---" * (7 if charted else 6) + "|"]
    for name, r in results.items():
        if not charted:
            rows.append(_row(name, r))
            continue
        charts = getattr(r, "by_chart", {})
        rows.append(_row(f"{name} | {'all (' + ', '.join(charts) + ')' if charts else '-'}", r))
        rows += [_row(f"{name} | {chart}", cr) for chart, cr in charts.items()]
    rows.append(f"\nChance win rate: {chance:.0%}. Margin: own score minus the best other score."
                + (" Intervals are 95% (Wilson for win rates, normal for margins)." if charted else ""))
    return "\n".join(rows)


def _summary(r: MatchResult) -> dict:
    return {"games": r.games, "win_rate": r.win_rate, "win_ci": list(r.win_ci),
            "mean_margin": r.mean_margin, "margin_ci": list(r.margin_ci),
            "mean_score": float(np.mean(r.scores)) if r.scores else 0.0}


def results_dict(results: dict[str, MatchResult]) -> dict:
    """JSON-safe summary of match results (a :class:`ChartResults` adds ``"charts": {chart: summary}``)."""
    out = {}
    for name, r in results.items():
        out[name] = _summary(r)
        if isinstance(r, ChartResults):
            out[name]["charts"] = {chart: _summary(cr) for chart, cr in r.by_chart.items()}
    return out
