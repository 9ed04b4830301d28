"""Record the GEM golden games in ``tests/data/gem_golden.json``.

The golden games pin GEM's behaviour: for a few seeded games with fixed options they store
every action played through the AEC env, a hash of every observation (the agent to act, then
every agent's observation vector and action mask, at each ``agent_iter`` step), the final
rewards, scores, breakdowns and winners, and the engine's final state (deal and full decision
log, forced decisions included). ``tests/test_gem_env.py`` replays them and fails on any
difference.

Rerun this script ONLY after a deliberate, documented behaviour change of the environment
(rules, observation layout, seeding, rewards), and bump the environment version if the change
affects users. Never rerun it just to make a failing golden test pass: find out why it fails.

    .venv/bin/python tests/data/make_gem_golden.py           # rewrite the JSON file
    .venv/bin/python tests/data/make_gem_golden.py --check   # only compare, exit 1 on a difference
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

import numpy as np

GOLDEN_PATH = Path(__file__).with_name("gem_golden.json")

#: (name, env options, reset seed, policy seed) of each recorded game
GAMES = [
    ("2p_defaults", {"num_players": 2}, 101, 1),
    ("3p_defaults_score", {"num_players": 3, "reward": "score"}, 202, 2),
    ("3p_opener_may_pass_rank", {"num_players": 3, "opener_may_pass": True, "reward": "rank"}, 303, 3),
    ("4p_reinvest_value_margin", {"num_players": 4, "reinvest_cost": "value", "reward": "margin"}, 404, 4),
]


def observation_hash(env) -> str:
    """sha256[:16] of the agent to act, then every agent's observation and mask bytes."""
    h = hashlib.sha256(env.agent_selection.encode())
    for agent in env.possible_agents:
        obs = env.observe(agent)
        h.update(agent.encode())
        h.update(np.ascontiguousarray(obs["observation"], dtype=np.float32).tobytes())
        h.update(np.ascontiguousarray(obs["action_mask"], dtype=np.int8).tobytes())
    return h.hexdigest()[:16]


def play(options: dict, seed: int, policy_seed: int, actions: list[int] | None = None) -> dict:
    """Play one game (with ``actions`` if given, else a seeded random policy favouring passes)."""
    from gemenvs import gem_v0

    env = gem_v0.env(**options)
    env.reset(seed=seed)
    rng = random.Random(policy_seed)
    played, hashes, rewards = [], [], {a: 0.0 for a in env.possible_agents}
    infos = {}
    for agent in env.agent_iter():
        hashes.append(observation_hash(env))
        obs, reward, term, trunc, info = env.last()
        rewards[agent] = float(reward)
        if term or trunc:
            infos[agent] = info
            env.step(None)
            continue
        if actions is not None:
            action = actions[len(played)]
        else:
            legal = [int(a) for a in np.flatnonzero(obs["action_mask"])]
            pass_ = env.unwrapped.game.layout.pass_
            action = pass_ if pass_ in legal and rng.random() < 0.4 else legal[rng.randrange(len(legal))]
        played.append(int(action))
        env.step(action)
    state = env.unwrapped.game_state.to_dict()
    first = infos[env.possible_agents[0]]
    return {
        "actions": played, "observation_hashes": hashes, "rewards": rewards,
        "scores": first["scores"], "winners": first["winners"],
        "breakdowns": {a: infos[a]["score_breakdown"] for a in env.possible_agents},
        "final_state": state,
    }


def record_all() -> dict:
    games = []
    for name, options, seed, policy_seed in GAMES:
        games.append({"name": name, "options": options, "seed": seed, "policy_seed": policy_seed,
                      **play(options, seed, policy_seed)})
    return {
        "about": "GEM golden games; regenerate only on a deliberate behaviour change: "
                 "see tests/data/make_gem_golden.py",
        "env_id": "gemenvs/GEM-v0",
        "hash": "sha256[:16] of agent_selection, then per agent: name, float32 observation bytes, int8 mask bytes; "
                "one entry per agent_iter step of the AEC env (terminal steps included)",
        "games": games,
    }


def dump(data: dict) -> str:
    """One key per line inside each game, so that a difference shows as a readable diff."""
    head = {k: v for k, v in data.items() if k != "games"}
    lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()] + ['  "games": [']
    games = []
    for g in data["games"]:
        body = ",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in g.items())
        games.append("   {\n" + body + "\n   }")
    lines.append(",\n".join(games))
    lines += ["  ]", "}"]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    args = parser.parse_args()
    text = dump(record_all())
    if args.check:
        same = GOLDEN_PATH.read_text() == text
        print("golden games match" if same else "golden games DIFFER")
        return 0 if same else 1
    GOLDEN_PATH.write_text(text)
    print(f"wrote {GOLDEN_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
