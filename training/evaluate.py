"""Evaluate a policy against copies of each baseline: win rates and score margins with 95% intervals.

The focal agent takes every seat in turn (``gemenvs.agents.run_match``), every other seat is a
copy of one baseline. Games are split over worker processes in blocks that keep the serial
seeds and seat rotation, so the result does not depend on the number of workers.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import re
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from gemenvs.agents.base import Agent
from gemenvs.agents.match import MatchResult, run_match
from gemenvs.wrappers.single_agent import build_opponent, is_policy_path, make_aec_env


def _play_block(env_id: str, options: dict, focal: Agent, opponent: str, games: int, seed: int,
                save_dir: str | None = None) -> MatchResult:
    """``games`` games of ``focal`` against copies of ``opponent``, seeds ``seed..seed+games-1``."""
    env = make_aec_env(env_id, **options)
    game = env.unwrapped.game.name
    n = len(env.possible_agents)
    opponents = [build_opponent(game, opponent, env, seed=seed + k) for k in range(n - 1)]
    env.close()
    return run_match(lambda: make_aec_env(env_id, **options), focal, opponents, games, seed=seed, save_dir=save_dir)


def opponent_folders(opponents: list[str]) -> dict[str, str]:
    """A distinct, safe folder name per opponent (``heuristic``; ``best_model`` for ``runs/x/best_model.zip``)."""
    out: dict[str, str] = {}
    for opp in opponents:
        stem = Path(opp).stem if is_policy_path(opp) else opp
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("._") or "opponent"
        base, k = name, 2
        while name in out.values():
            name, k = f"{base}-{k}", k + 1
        out[opp] = name
    return out


def _merge(parts: list[MatchResult]) -> MatchResult:
    out = MatchResult()
    for p in parts:
        out.games += p.games
        out.wins += p.wins
        out.margins.extend(p.margins)
        out.scores.extend(p.scores)
    return out


def evaluate(focal: Agent, env_id: str, options: dict, opponents: list[str], games: int, seed: int = 0,
             workers: int = 1, save_dir: str | os.PathLike | None = None) -> dict[str, MatchResult]:
    """Play ``games`` games against copies of each opponent; ``workers`` processes share the games.

    With ``save_dir`` every game is saved (:mod:`gemenvs.recording`) as
    ``save_dir/<opponent>/game_<seed>.jsonl``, one folder per opponent (:func:`opponent_folders`).
    """
    n = len(make_aec_env(env_id, **options).possible_agents)
    folders = opponent_folders(opponents)
    where = {opp: None if save_dir is None else os.path.join(os.fspath(save_dir), folders[opp]) for opp in opponents}
    # blocks of whole seat rotations, so a block's seats and seeds are those of the serial match
    block = max(n, -(-games // max(workers, 1)) // n * n)
    jobs = [(opp, start, min(block, games - start)) for opp in opponents for start in range(0, games, block)]
    if workers <= 1 or len(jobs) == 1:
        parts = [_play_block(env_id, options, focal, opp, count, seed + start, where[opp]) for opp, start, count in jobs]
    else:
        with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("forkserver")) as pool:
            futures = [pool.submit(_play_block, env_id, options, focal, opp, count, seed + start, where[opp])
                       for opp, start, count in jobs]
            parts = [f.result() for f in futures]
    results = {}
    for opp in opponents:
        results[opp] = _merge([p for (o, _, _), p in zip(jobs, parts) if o == opp])
    return results


def results_table(results: dict[str, MatchResult], num_players: int) -> str:
    """A Markdown table: games, win rate and mean score margin with their 95% intervals, per opponent."""
    chance = 1.0 / num_players
    rows = [
        f"| opponents ({num_players - 1} copies) | games | win rate | 95% CI | mean margin | 95% CI |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        lo, hi = r.win_ci
        mlo, mhi = r.margin_ci
        rows.append(f"| {name} | {r.games} | {r.win_rate:.1%} | {lo:.1%} - {hi:.1%} | "
                    f"{r.mean_margin:+.1f} | {mlo:+.1f} - {mhi:+.1f} |")
    rows.append(f"\nChance win rate: {chance:.0%}. Margin: own score minus the best other score.")
    return "\n".join(rows)


def results_dict(results: dict[str, MatchResult]) -> dict:
    """JSON-safe summary of match results."""
    return {
        name: {
            "games": r.games, "win_rate": r.win_rate, "win_ci": list(r.win_ci),
            "mean_margin": r.mean_margin, "margin_ci": list(r.margin_ci),
            "mean_score": float(np.mean(r.scores)) if r.scores else 0.0,
        }
        for name, r in results.items()
    }
