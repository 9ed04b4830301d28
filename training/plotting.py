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


def plot_learning_curve(eval_csv: str | Path, png: str | Path, num_players: int, title: str = "",
                        warm_start: str | None = None, kept: int | None = None) -> Path:
    """Write :func:`learning_curve_figure` of ``eval_csv`` to ``png`` (all or nothing, never through a symbolic
    link: :func:`gemenvs.files.write_file`); returns its path."""
    import io

    from gemenvs.files import user_folder, write_file

    png = Path(png)
    buffer = io.BytesIO()
    learning_curve_figure(eval_csv, num_players, title, warm_start, kept).savefig(buffer, dpi=110, format="png")
    write_file(user_folder(png), png.name, buffer.getvalue())
    return png


def learning_curve_figure(eval_csv: str | Path, num_players: int, title: str = "", warm_start: str | None = None,
                          kept: int | None = None):
    """A two-panel figure: win rate with its 95% band, and mean score margin, per opponent, against the
    learner decisions trained on. ``warm_start`` labels the step-0 point (the policy a warm start left), ``kept``
    marks the step of the model the run kept; a run evaluated once is drawn as that one point per opponent and
    says so."""
    from matplotlib.figure import (
        Figure,  # no pyplot: the caller's backend (a notebook's) stays as it is
    )

    history = read_eval_history(eval_csv)
    steps_seen = sorted({r["step"] for rows in history.values() for r in rows})
    fig = Figure(figsize=(11, 4.2))
    ax_win, ax_margin = fig.subplots(1, 2)
    for name, rows in history.items():
        steps = [r["step"] for r in rows]
        line, = ax_win.plot(steps, [r["win_rate"] for r in rows], marker="o", ms=3, label=f"vs {name}")
        ax_win.fill_between(steps, [r["win_lo"] for r in rows], [r["win_hi"] for r in rows],
                            color=line.get_color(), alpha=0.15)
        if len(rows) == 1:  # (a band needs two points: the interval as an error bar)
            r = rows[0]
            yerr = [[max(r["win_rate"] - r["win_lo"], 0.0)], [max(r["win_hi"] - r["win_rate"], 0.0)]]  # (rounding)
            ax_win.errorbar(steps, [r["win_rate"]], yerr=yerr,
                            color=line.get_color(), capsize=3)
        ax_margin.plot(steps, [r["mean_margin"] for r in rows], marker="o", ms=3, color=line.get_color(),
                       label=f"vs {name}")
    ax_win.axhline(1.0 / num_players, color="grey", ls="--", lw=1, label="chance")
    ax_win.set(xlabel="learner decisions trained on", ylabel="win rate", ylim=(0, 1), title="win rate (95% CI)")
    ax_margin.axhline(0.0, color="grey", ls="--", lw=1)
    ax_margin.set(xlabel="learner decisions trained on", ylabel="own score - best other", title="mean score margin")
    for ax in (ax_win, ax_margin):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        if warm_start and steps_seen and steps_seen[0] == 0:
            ax.axvline(0, color="black", lw=0.8, ls=":")
            ax.annotate(warm_start, xy=(0, 0.02), xycoords=("data", "axes fraction"), xytext=(4, 0),
                        textcoords="offset points", fontsize=8, rotation=90, va="bottom")
        if kept is not None and kept in steps_seen and len(steps_seen) > 1:
            ax.axvline(kept, color="black", lw=0.8, ls="--")
            ax.annotate("kept model", xy=(kept, 0.98), xycoords=("data", "axes fraction"), xytext=(4, 0),
                        textcoords="offset points", fontsize=8, rotation=90, va="top")
        if len(steps_seen) == 1:
            ax.set_xticks(steps_seen)
            ax.text(0.5, 0.5, f"one evaluation, at {int(steps_seen[0]):,} decisions: no curve",
                    transform=ax.transAxes, ha="center", va="center", fontsize=10, color="grey")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
