"""Golden games of every environment of the suite: one recorder, one replayer, readable JSON.

A golden game is one seeded game per (registered game, player count) played through ``env()`` by a
seeded uniform-random policy and stored in ``tests/data/golden/<game>_<n>p.json``: the options
and seed, then one line per decision (agent, action and the acting agent's observation as its
non-zero slots), then the final rewards and scores. ``tests/test_contract.py`` replays each file
and fails on the first difference, naming the decision and the observation slot (by its spec
name) that changed. A deliberate change of behaviour re-records the files in the same commit:

    .venv/bin/python tests/golden.py                 # re-record every golden game
    .venv/bin/python tests/golden.py --game NAME     # re-record one game's (a new game's first)
    .venv/bin/python tests/golden.py --check         # exit 1 when a golden game no longer replays

The games are those registered (the suite's, and the tests' own of ``tests/conftest.py``).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

GOLDEN_DIR = Path(__file__).resolve().parent / "data" / "golden"
#: seeds of the recorded games: the environment's reset seed and the random policy's
ENV_SEED, POLICY_SEED = 2026, 7


def golden_cases() -> list[tuple]:
    """(entry, player count) of every golden game: every registered game, every player count."""
    import gemenvs

    return [(e, n) for e in gemenvs.entries() for n in e.player_counts]


def golden_path(env_id: str, players: int) -> Path:
    """The file of the golden game of ``env_id`` with ``players`` seats."""
    return GOLDEN_DIR / f"{env_id.split('/')[-1].lower()}_{players}p.json"


def _sparse(obs: np.ndarray) -> dict[str, float]:
    """The non-zero slots of an observation, keyed by index (JSON keys are strings), to 6 decimals."""
    return {str(int(i)): round(float(obs[i]), 6) for i in np.flatnonzero(obs)}


def play(entry, players: int, actions: list[int] | None = None) -> dict:
    """Play one game of ``entry`` through ``env()``: the stored ``actions`` if given, else a seeded random policy."""
    env = entry.env_functions().env(num_players=players)
    env.reset(seed=ENV_SEED)
    rng = np.random.default_rng(POLICY_SEED)
    steps, rewards, k = [], {}, 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        if term or trunc:
            rewards[agent] = float(reward)
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        if actions is None:
            action = int(legal[rng.integers(legal.size)])
        else:
            if k >= len(actions):
                raise AssertionError(f"the game goes on past the {len(actions)} recorded decisions")
            action = actions[k]
        steps.append({"agent": agent, "action": action, "observation": _sparse(obs["observation"])})
        env.step(action)
        k += 1
    game = env.unwrapped.game
    return {
        "env_id": None,
        "options": {"num_players": players},
        "seed": ENV_SEED,
        "policy_seed": POLICY_SEED,
        "steps": steps,
        "rewards": rewards,
        "scores": [float(x) for x in game.results(env.unwrapped.game_state).scores],
    }


def record(entry, players: int) -> Path:
    """Play and write the golden game of ``entry`` with ``players`` seats (one decision a line)."""
    game = play(entry, players)
    game["env_id"] = entry.env_id
    path = golden_path(entry.env_id, players)
    path.parent.mkdir(parents=True, exist_ok=True)
    head = {k: v for k, v in game.items() if k != "steps"}
    lines = ["{", *(f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()), '  "steps": [']
    lines += [f"    {json.dumps(s, separators=(',', ':'))}," for s in game["steps"]]
    lines[-1] = lines[-1].rstrip(",")
    lines += ["  ]", "}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def first_difference(golden: dict, entry) -> str | None:
    """Replay a golden game of ``entry``; a sentence naming its first difference, or None when it replays exactly."""
    from gemenvs.core.engine import IllegalActionError

    spec = entry.game_class(**golden["options"]).spec
    actions = [s["action"] for s in golden["steps"]]
    try:
        replay = play(entry, golden["options"]["num_players"], actions)
    except (IllegalActionError, AssertionError) as e:
        return f"the recorded actions no longer replay: {e}"
    for k, (want, got) in enumerate(zip(golden["steps"], replay["steps"])):
        if want["agent"] != got["agent"]:
            return f"decision {k}: {got['agent']} is to act, the record has {want['agent']}"
        if want["observation"].keys() != got["observation"].keys() or any(
                abs(want["observation"][i] - got["observation"][i]) > 1e-6 for i in want["observation"]):
            slots = sorted(int(i) for i in set(want["observation"]) | set(got["observation"])
                           if abs(want["observation"].get(i, 0.0) - got["observation"].get(i, 0.0)) > 1e-6)
            i = slots[0]
            s = next(s for s in spec.slices if s.offset <= i < s.stop)
            index = np.unravel_index(i - s.offset, s.shape) if s.shape else ()
            return (f"decision {k} ({want['agent']}): observation slot {i} = {s.name}{list(map(int, index))} "
                    f"is {got['observation'].get(str(i), 0.0)}, the record has {want['observation'].get(str(i), 0.0)} "
                    f"({len(slots)} slot(s) differ)")
    if len(replay["steps"]) != len(golden["steps"]):
        return f"the game now lasts {len(replay['steps'])} decisions, the record {len(golden['steps'])}"
    for key in ("rewards", "scores"):
        if replay[key] != golden[key]:
            return f"final {key} {replay[key]} differ from the record {golden[key]}"
    return None


def main(argv: list[str] | None = None) -> int:
    """Re-record every golden game, or with ``--check`` report those that no longer replay."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report golden games that no longer replay")
    parser.add_argument("--game", metavar="NAME", help="only this game's golden games (its name, e.g. megagem)")
    args = parser.parse_args(argv)
    import conftest  # noqa: F401 - registers the tests' own games

    bad = 0
    for entry, n in golden_cases():
        if args.game is not None and args.game != entry.name:
            continue
        path = golden_path(entry.env_id, n)
        if args.check:
            why = first_difference(json.loads(path.read_text()), entry) if path.exists() else "no golden file"
            if why:
                bad += 1
                print(f"{path.name}: {why}", file=sys.stderr)
        else:
            print(f"recorded {record(entry, n).relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
