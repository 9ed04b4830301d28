"""``gemenvs-benchmark BENCHMARK POLICY...``: the bidding benchmarks (:mod:`gemenvs.arena.benchmark`) and the
approximate exploitability, which trains a best response (:mod:`gemenvs.training.exploitability`)."""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``gemenvs-benchmark``; returns the exit status (2 and one line for a user error)."""
    from gemenvs.arena import benchmark
    from gemenvs.arena.resolve import AgentSpecError
    from gemenvs.arena.tournament import TournamentError
    from gemenvs.console import extra_hint

    try:
        ns = benchmark.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    if ns.suite != "exploit":
        return benchmark.main(argv)
    try:
        from gemenvs.training.exploitability import (
            exploit_main,  # the train extra: PyYAML, torch, SB3
        )

        return exploit_main(ns)
    except (TournamentError, AgentSpecError, OSError) as e:
        print(f"gemenvs-benchmark: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    except ImportError as e:  # the train extra is missing; any other ImportError: raised
        hint = extra_hint(e)
        if hint is None:
            raise
        print(f"gemenvs-benchmark: error: {hint}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
