"""The learning curve of a run: evaluation win rates (with 95% intervals) and margins against steps."""
from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path


def read_eval_history(path: str | Path) -> dict[str, list[dict[str, float]]]:
    """Rows of ``eval.csv`` grouped by opponent, in step order."""
    by_opponent: dict[str, list[dict[str, float]]] = defaultdict(list)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            by_opponent[row["opponent"]].append({k: float(v) for k, v in row.items() if k != "opponent"})
    for rows in by_opponent.values():
        rows.sort(key=lambda r: r["step"])
    return dict(by_opponent)


def plot_learning_curve(eval_csv: str | Path, png: str | Path, num_players: int, title: str = "") -> Path:
    """Write a two-panel PNG: win rate with its 95% band, and mean score margin, per baseline."""
    from matplotlib.figure import Figure  # no pyplot: the caller's backend (a notebook's) stays as it is

    history = read_eval_history(eval_csv)
    fig = Figure(figsize=(11, 4.2))
    ax_win, ax_margin = fig.subplots(1, 2)
    for name, rows in history.items():
        steps = [r["step"] for r in rows]
        line, = ax_win.plot(steps, [r["win_rate"] for r in rows], marker="o", ms=3, label=f"vs {name}")
        ax_win.fill_between(steps, [r["win_lo"] for r in rows], [r["win_hi"] for r in rows],
                            color=line.get_color(), alpha=0.15)
        ax_margin.plot(steps, [r["mean_margin"] for r in rows], marker="o", ms=3, color=line.get_color(),
                       label=f"vs {name}")
    ax_win.axhline(1.0 / num_players, color="grey", ls="--", lw=1, label="chance")
    ax_win.set(xlabel="environment steps", ylabel="win rate", ylim=(0, 1), title="win rate (95% CI)")
    ax_margin.axhline(0.0, color="grey", ls="--", lw=1)
    ax_margin.set(xlabel="environment steps", ylabel="own score - best other", title="mean score margin")
    for ax in (ax_win, ax_margin):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    png = Path(png)
    fig.savefig(png, dpi=110)
    return png
