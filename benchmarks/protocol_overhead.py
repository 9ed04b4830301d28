"""Decisions per second of agents in another program (the JSON-lines protocol over stdin/stdout) beside the
in-process random agent, and the overhead the protocol adds to every decision.

Every seat of seeded games is played by the same policy, a uniformly random legal action: by
``RandomAgent`` in this process, then by each example client as a child process
(``cmd:python examples/random_agent.py``, ``cmd:sh examples/random_agent.sh``), one per seat, through
:func:`gemenvs.arena.match.play_engine_game`. A decision is one the engine asks an agent for (forced ones
are not); the rate is decisions over wall-clock seconds, games played until ``--seconds`` have passed
(the first game of each row, which starts the programs, is not timed). The overhead per decision is the
protocol row's time per decision minus the in-process one's: building the seat's messages (its
observation, mask, legal labels, text view and events), JSON both ways, the pipes, and the client's own
parsing.

    python benchmarks/protocol_overhead.py                 # ~5 s per row
    python benchmarks/protocol_overhead.py --seconds 1 --games megagem
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = {
    "python client": f"cmd:{sys.executable} {ROOT / 'examples' / 'random_agent.py'} --seed 1",
    "sh + awk client": f"cmd:sh {ROOT / 'examples' / 'random_agent.sh'} 1",
}


def rate(game_name: str, spec: str, seconds: float) -> tuple[float, int]:
    """Decisions per second of ``spec`` in every seat of seeded ``game_name`` games, and the decisions timed."""
    from gemenvs.agents.base import close_agents
    from gemenvs.arena.match import play_engine_game
    from gemenvs.arena.resolve import resolve_agent
    from gemenvs.arena.tournament import make_raw_env

    env = make_raw_env(game_name, {})
    game = env.game
    logs = tempfile.TemporaryDirectory(prefix="gemenvs-protocol-overhead-")  # (the clients' stderr)
    agents = [resolve_agent(game_name, spec, env, seed=k, protocol={"log_dir": logs.name, "log_name": f"seat{k}"})
              for k in range(game.num_players)]
    try:
        play_engine_game(game, agents, 0)  # (starts the programs; not timed)
        decisions, seed, start = 0, 1, time.perf_counter()
        while True:
            state = play_engine_game(game, agents, seed)
            decisions += sum(1 for _, _, forced in state.log if not forced)
            seed += 1
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                break
        if any(getattr(a, "forfeit", None) for a in agents):
            raise RuntimeError(f"{spec}: a seat forfeited ({[getattr(a, 'problem', None) for a in agents]})")
    finally:
        close_agents(agents)
        logs.cleanup()
    return decisions / elapsed, decisions


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=5.0, help="seconds of play per row (default 5)")
    p.add_argument("--games", nargs="+", default=["megagem", "gem", "gemjam"], help="games to measure")
    args = p.parse_args(argv)
    print("| game | agent (every seat) | decisions / s | us / decision | protocol overhead / decision |")
    print("|---|---|---|---|---|")
    for game_name in args.games:
        base, _ = rate(game_name, "random", args.seconds)
        print(f"| {game_name} | RandomAgent, in process | {base:,.0f} | {1e6 / base:,.0f} | - |", flush=True)
        for label, spec in CLIENTS.items():
            r, _ = rate(game_name, spec, args.seconds)
            print(f"| {game_name} | {label}, stdin/stdout | {r:,.0f} | {1e6 / r:,.0f} | "
                  f"{1e6 / r - 1e6 / base:,.0f} us |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
