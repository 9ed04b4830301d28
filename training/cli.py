"""``gemenvs-train CONFIG [key=value ...]``: self-play training from a YAML config (see ``--help``)."""
from __future__ import annotations

import argparse
import sys

from gemenvs.training.config import ConfigError, apply_overrides, load_config

USAGE_EXAMPLES = """examples:
  gemenvs-train configs/megagem/selfplay.yaml
  gemenvs-train configs/megagem/selfplay.yaml total_timesteps=200000 n_envs=2 ppo.learning_rate=1e-4
  gemenvs-train configs/megagem/selfplay.yaml env.options.num_players=3 name=megagem_3p
  gemenvs-train --resume runs/megagem_selfplay total_timesteps=2000000
"""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """CONFIG (a YAML path) and key=value overrides, in any order, plus --resume."""
    parser = argparse.ArgumentParser(
        prog="gemenvs-train", description="Self-play MaskablePPO training on a gemenvs game.",
        epilog=USAGE_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
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


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``gemenvs-train`` and ``python -m gemenvs.training``."""
    ns = parse_args(argv)
    try:
        if ns.resume is not None:
            from gemenvs.training.selfplay import load_checkpoint_config

            cfg, _ = load_checkpoint_config(ns.resume)
            apply_overrides(cfg, ns.overrides)
        else:
            cfg = load_config(ns.config, ns.overrides)
    except (ConfigError, FileNotFoundError) as e:
        print(f"gemenvs-train: error: {e}", file=sys.stderr)
        return 2
    from gemenvs.training.selfplay import train

    try:
        train(cfg, resume=ns.resume)
    except FileExistsError as e:
        print(f"gemenvs-train: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
