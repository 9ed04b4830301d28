"""Learner steps per second: the RLlib backend at 1, 2 and 4 env runners beside the SB3 path, same config.

Every point is one ``gemenvs-train`` run of the same YAML config (default: the MegaGem SB3
config ``configs/megagem/selfplay_sb3.yaml``) for ``--seconds`` of training, periodic evaluation and
checkpoints off, in its own process, one after the other:

* ``sb3``: the config as it is (MaskablePPO; for MegaGem its ``n_envs`` games on the batched engine);
* ``rllib N``: ``backend=rllib rllib.num_env_runners=N`` (PPO with the same ``ppo`` settings, the
  same training batch ``ppo.n_steps * n_envs``, baselines played inside the environment).

A learner step is one decision of the trained policy that the learner collects and trains on (SB3's
``time/total_timesteps``; RLlib: module ``main``'s sampled steps; the frozen versions' decisions are
not counted). The rate is measured from the end of the first update to the end of the last, so
Ray's start and the first rollout are left out; the final evaluation is not timed. The figure goes
to ``docs/img/rllib_scaling.png`` and the table to stdout.

    python benchmarks/rllib_scaling.py                          # 60 s a point
    python benchmarks/rllib_scaling.py --seconds 30 --runners 1 2 4 --config configs/gem/selfplay.yaml
"""
from __future__ import annotations

import argparse
import csv
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: overrides of every point: no periodic evaluation or checkpoint, a tiny final evaluation (not timed)
COMMON = ["eval.every=0", "eval.final_games=4", "eval.workers=1", "eval.opponents=[random]", "checkpoint_every=0",
          "progress_bar=false", "overwrite=true", "total_timesteps=100000000", "pretrain.teacher=null"]


def run_point(config: str, label: str, overrides: list[str], seconds: float, root: Path) -> dict:
    """One ``gemenvs-train`` run; its learner steps per second from its progress.csv."""
    name = label.replace(" ", "_")
    args = [sys.executable, "-m", "gemenvs.training", config, f"run_root={root}", f"name={name}",
            f"max_train_minutes={seconds / 60}", *COMMON, *overrides]
    start = time.time()
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"{label} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    rllib = bool(overrides) and overrides[0] == "backend=rllib"
    rate, updates, last = progress_rate(root / name / "progress.csv", rllib=rllib)
    if updates < 3:
        raise SystemExit(f"{label}: only {updates} updates in {seconds} s; give more --seconds")
    return {"label": label, "steps_per_s": rate, "updates": updates, "learner_steps": last,
            "wall_s": time.time() - start}


def progress_rate(path: Path, rllib: bool) -> tuple[float, int, int]:
    """(learner steps per second from the end of the first update to the end of the last, updates, learner steps)
    read from a run's progress.csv (a row per update: ``step`` and ``seconds``; on RLlib the learner's own
    sampled steps are ``main_steps``)."""
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("step")]
    if not rows:
        return 0.0, 0, 0
    steps = [float(r["main_steps" if rllib else "step"]) for r in rows]
    times = [float(r["seconds"]) for r in rows]
    return (steps[-1] - steps[0]) / max(times[-1] - times[0], 1e-9), len(rows), int(steps[-1])


def plot(points: list[dict], path: Path, title: str) -> None:
    """Bars of learner steps per second, SB3 first."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=120)
    labels = [p["label"] for p in points]
    rates = [p["steps_per_s"] for p in points]
    colours = ["#888888" if p["label"].startswith("sb3") else "#3b75af" for p in points]
    bars = ax.bar(labels, rates, color=colours)
    for bar, rate in zip(bars, rates):
        ax.annotate(f"{rate:.0f}", (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom",
                    fontsize=9)
    ax.set_ylabel("learner steps per second")
    ax.set_title(title, fontsize=9)
    ax.margins(y=0.15)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    """Run the points, print the table, draw the figure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="configs/megagem/selfplay_sb3.yaml")
    parser.add_argument("--seconds", type=float, default=60.0, help="training seconds per point")
    parser.add_argument("--runners", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--out", default=str(ROOT / "docs" / "img" / "rllib_scaling.png"))
    parser.add_argument("--note", default="", help="added to the figure's title (e.g. 'loaded machine')")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="a line on stderr as each point starts (default: only when stderr is a terminal)")
    args = parser.parse_args(argv)
    show = sys.stderr.isatty() if args.progress is None else args.progress
    points = []
    with tempfile.TemporaryDirectory(prefix="rllib_scaling_") as tmp:
        root = Path(tmp)
        specs = [("sb3", [])] + [(f"rllib {n} runner{'s' * (n > 1)}", ["backend=rllib", f"rllib.num_env_runners={n}"])
                                 for n in args.runners]
        for k, (label, overrides) in enumerate(specs, 1):
            if show:
                print(f"point {k}/{len(specs)}: {label}, {args.seconds:g} s of training (plus start and final "
                      f"evaluation)", file=sys.stderr, flush=True)
            point = run_point(args.config, label, overrides, args.seconds, root)
            print(f"{label}: {point['steps_per_s']:.0f} learner steps/s ({point['updates']} updates, "
                  f"{point['wall_s']:.0f} s wall)", flush=True)
            points.append(point)
    cores = os.cpu_count()
    print(f"\n{args.config}, {args.seconds:g} s of training a point, {cores} cores ({platform.processor() or platform.machine()})")
    print("| setup | learner steps/s | updates | relative to sb3 |\n|---|---|---|---|")
    for p in points:
        print(f"| {p['label']} | {p['steps_per_s']:.0f} | {p['updates']} | {p['steps_per_s'] / points[0]['steps_per_s']:.2f} |")
    title = f"{Path(args.config).parent.name}/{Path(args.config).name}, {cores} cores" + (f", {args.note}" if args.note else "")
    plot(points, Path(args.out), title)
    print(f"figure: {args.out}")


if __name__ == "__main__":
    main()
