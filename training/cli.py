"""``gemenvs-train CONFIG [key=value ...]``: self-play training from a YAML config (see ``--help``).

Every usage, config or checkpoint problem (an unknown key, a value out of range, a file that is
not UTF-8 or not YAML, a corrupt or unsafe model, a run folder that cannot be used) is one line
``gemenvs-train: error: ...`` on stderr and exit status 2, never a traceback; so is a missing
train extra (torch, stable-baselines3, PyYAML: ``pip install "gemenvs[train]"``), which is why the
config and training modules are imported inside :func:`main`.
"""
from __future__ import annotations

import argparse
import sys

DESCRIPTION = """\
Self-play training on a gemenvs game from a YAML config, on the config's backend:
  lean    a single-file masked PPO on torch over the batched MegaGem engine (the default
          config's, configs/megagem/selfplay.yaml); writes .npz models
  sb3     MaskablePPO (sb3-contrib); writes .zip models and the same policies as .npz
  rllib   multi-agent PPO on Ray RLlib (the rllib extra); writes .npz models
A run writes the folder runs/NAME (NAME: the config's name): best_model.npz (and
best_model.zip on sb3), eval.csv, config.yaml and checkpoints."""

USAGE_EXAMPLES = """examples:
  gemenvs-train configs/megagem/selfplay.yaml
      (backend lean: runs/megagem_selfplay/best_model.npz)
  gemenvs-train configs/megagem/selfplay_sb3.yaml total_timesteps=200000 n_envs=2 ppo.learning_rate=1e-4
      (backend sb3: runs/megagem_selfplay_sb3/best_model.zip and best_model.npz)
  gemenvs-train configs/gemjam/selfplay.yaml
      (backend sb3: runs/gemjam_selfplay/best_model.zip and best_model.npz)
  gemenvs-train configs/megagem/selfplay_3p.yaml name=megagem_3p
  gemenvs-train configs/megagem/selfplay_sb3.yaml backend=rllib rllib.num_env_runners=2
  gemenvs-train configs/megagem/selfplay_lean.yaml
  gemenvs-train --resume runs/megagem_selfplay_sb3 total_timesteps=2000000
  gemenvs play megagem --opponents runs/megagem_selfplay/best_model.npz
      (play against the model of the first example)
"""


def user_errors() -> tuple[type[BaseException], ...]:
    """What a user can cause and is told about in one line (exit status 2); imports the config modules."""
    from gemenvs.agents.policy import PolicyLoadError
    from gemenvs.training.checkpoint import CheckpointError
    from gemenvs.training.config import ConfigError

    return ConfigError, CheckpointError, PolicyLoadError, FileNotFoundError, FileExistsError, PermissionError


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """CONFIG (a YAML path) and key=value overrides, in any order, plus --resume."""
    from gemenvs.console import add_version_argument

    parser = argparse.ArgumentParser(
        prog="gemenvs-train", description=DESCRIPTION,
        epilog=USAGE_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version_argument(parser)
    parser.add_argument("args", nargs="*", metavar="CONFIG | key=value",
                        help="a YAML config file, then dotted key=value overrides of its fields")
    parser.add_argument("--resume", metavar="PATH",
                        help="continue from a checkpoint folder, or from the latest checkpoint of a run folder "
                             "(its saved config is used; key=value still overrides it)")
    ns = parser.parse_args(argv)
    ns.overrides = [a for a in ns.args if "=" in a]
    paths = [a for a in ns.args if "=" not in a]
    if len(paths) > 1:
        parser.error(f"one CONFIG file at most; got {paths}")
    ns.config = paths[0] if paths else None
    if ns.config is None and ns.resume is None:
        parser.error("give a CONFIG file (e.g. configs/megagem/selfplay.yaml) or --resume PATH")
    if ns.config is not None and ns.resume is not None:
        parser.error("--resume uses the checkpoint's own config: give key=value overrides, not a CONFIG file")
    return ns


def _error(e: BaseException) -> int:
    """Print one ``gemenvs-train: error:`` line for ``e``; the exit status 2."""
    text = " ".join(str(e).split()) or type(e).__name__
    print(f"gemenvs-train: error: {text}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``gemenvs-train`` and ``python -m gemenvs.training``; returns the exit status."""
    from gemenvs.console import extra_hint

    try:
        ns = parse_args(argv)
    except SystemExit as e:  # argparse has printed the usage and its error (or --help)
        return int(e.code or 0)
    try:
        return _train(ns)
    except ImportError as e:  # the train extra (or rllib's) is missing; any other ImportError is a bug: raised
        hint = extra_hint(e)
        if hint is None:
            raise
        return _error(hint)


def _train(ns: argparse.Namespace) -> int:
    """Load the config (or the checkpoint's), then run its backend; the exit status."""
    from gemenvs.training.checkpoint import load_checkpoint_config
    from gemenvs.training.config import apply_overrides, load_config

    errors = user_errors()
    try:
        if ns.resume is not None:
            cfg, _ = load_checkpoint_config(ns.resume)
            apply_overrides(cfg, ns.overrides)
        else:
            cfg = load_config(ns.config, ns.overrides)
    except errors as e:
        return _error(e)
    try:
        from gemenvs.training.run import (
            train,  # torch, and the learner's SB3 or Ray: only once the config is good
        )

        train(cfg, resume=ns.resume)
    except errors as e:
        return _error(e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
