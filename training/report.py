"""A run's final report: the final evaluation table (results.md, results.json, timing.json) and the learning curve."""
from __future__ import annotations

from pathlib import Path

from gemenvs.agents.base import Agent
from gemenvs.arena.evaluate import evaluate, opponent_folders, results_dict, results_table


#: seed offset of a run's final evaluation, so its games differ from the periodic ones
FINAL_EVAL_SEED = 1_000_003


def curve_title(cfg, players: int) -> str:
    """The learning curve's title: the game, the player count and what the curve measures."""
    game = cfg.env.id.split("/")[-1].rsplit("-v", 1)[0]
    return f"{game}, {players} players: the trained policy against {players - 1} copies of each opponent"


def warm_start_label(cfg) -> str | None:
    """The learning curve's label of step 0 when a warm start made it (None without one)."""
    teacher = getattr(getattr(cfg, "pretrain", None), "teacher", None)
    return None if teacher is None else f"warm start (clone of {teacher})"


def final_evaluation(cfg, run_dir: Path, final: Agent, best_step: int | None, players: int, steps: int,
                     train_seconds: float, backend: str | None = None, steps_name: str = "learner decisions",
                     updates: int | None = None, limit=None) -> None:
    """A run's final table against each of ``cfg.eval.opponents`` (the best model if an evaluation kept one,
    ``run_dir/best_model.npz``, else ``final``), printed and written to results.md and results.json, and
    the learning curve from eval.csv; the same for every backend (``backend`` names it in the files).

    ``results.json`` holds only what the seeded work determines (the model kept, the decisions and
    ``updates`` made, the results), so the same command writes the same file on any machine; the wall
    times go to ``timing.json``. When the time guard ``limit`` (:class:`~gemenvs.training.budget.TimeLimit`)
    cut the run, the header, ``results.json`` and the last line say so; a run without a PPO update too."""
    import json
    import time

    from gemenvs.agents.policy import PolicyAgent
    from gemenvs.files import write_file
    from gemenvs.training.budget import count
    from gemenvs.training.checkpoint import run_folder
    from gemenvs.training.plotting import plot_learning_curve

    best = run_dir / "best_model.npz"
    if best.is_symlink():
        from gemenvs.files import WriteRefused

        raise WriteRefused(f"{best} is a symbolic link; a run's models must be files inside its folder")
    if best.exists():
        focal, which = PolicyAgent.load(best, deterministic=cfg.eval.deterministic), f"best model (step {best_step})"
        kept_step = best_step
    else:
        focal, which, kept_step = final, "final model", steps
        focal.deterministic = cfg.eval.deterministic
    start = time.time()
    if cfg.eval.save_games:  # (games/, a folder per opponent and per chart: real folders of the run, never links)
        for folder in opponent_folders(cfg.eval.opponents).values():
            for chart in cfg.eval.charts or [None]:
                run_folder(run_dir, "games", folder, *([f"chart_{chart}"] if chart is not None else []))
    results = evaluate(focal, cfg.env.id, cfg.env.options, cfg.eval.opponents, cfg.eval.final_games,
                       seed=cfg.seed + FINAL_EVAL_SEED, workers=cfg.eval.workers,
                       save_dir=run_dir / "games" if cfg.eval.save_games else None, charts=cfg.eval.charts,
                       progress=bool(getattr(cfg, "progress_bar", False)), desc="final evaluation")
    table = results_table(results, players)
    eval_seconds = time.time() - start
    notes = []
    cut = limit.message() if limit is not None else None
    if cut:
        notes.append(cut[0].upper() + cut[1:] + f" ({count(steps)} of {count(cfg.total_timesteps)} {steps_name}).")
    if updates == 0:
        notes.append("No PPO update was made: the model is " + (
            "the warm start's clone." if warm_start_label(cfg) else "the initial policy."))
    elif kept_step == 0 and warm_start_label(cfg):
        notes.append("The model kept is the warm start's clone (step 0): no PPO-trained model evaluated better.")
    tag = f" (backend {backend})" if backend else ""
    work = f"{count(steps)} {steps_name}" + (f", {count(updates)} PPO updates" if updates is not None else "")
    header = f"## {cfg.name}{tag}: {which}, after {work}\n" + "".join(f"\n**{note}**\n" for note in notes)
    print("\n" + header + "\n" + table, flush=True)
    write_file(run_dir, "results.md", header + "\n" + table + "\n")
    summary = ({"backend": backend} if backend else {}) | {
        "model": which, "model_step": kept_step, "steps": steps, "total_timesteps": cfg.total_timesteps,
        "ppo_updates": updates, "stopped_by_time_limit": bool(cut), "notes": notes,
        "results": results_dict(results)}
    write_file(run_dir, "results.json", json.dumps(summary, indent=1))
    write_file(run_dir, "timing.json", json.dumps({"train_seconds": train_seconds, "eval_seconds": eval_seconds},
                                                  indent=1))
    if (run_dir / "eval.csv").exists():
        png = plot_learning_curve(run_dir / "eval.csv", run_dir / "learning_curve.png", players,
                                  curve_title(cfg, players), warm_start=warm_start_label(cfg),
                                  kept=kept_step if best.exists() else None)
        print(f"learning curve: {png}")
    print(f"run folder: {run_dir}")
    print(f"done: {work}; {train_seconds / 60:.1f} min of training, {eval_seconds / 60:.1f} min of final evaluation",
          flush=True)
    for note in notes:
        print(note, flush=True)
