"""Record the MegaGem golden games in ``tests/data/megagem_golden.json``.

The golden games pin MegaGem's behaviour: for a few seeded games with fixed options they store
every action played, a hash of every observation (all agents' observation vectors and action
masks, and the agent to act, at each step of the AEC env) and the final scores, breakdowns and
rewards. ``tests/test_megagem_golden.py`` replays them and fails on any difference.

Rerun this script ONLY after a deliberate, documented behaviour change of the environment
(rules, observation layout, seeding, rewards), and bump the environment version if the change
affects users. Never rerun it just to make a failing golden test pass: find out why it fails.

    .venv/bin/python tests/data/make_golden.py           # rewrite the JSON file
    .venv/bin/python tests/data/make_golden.py --check   # only compare, exit 1 on a difference
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

GOLDEN_PATH = Path(__file__).with_name("megagem_golden.json")

#: (name, env options, reset seed, policy seed) of each recorded game
GAMES = [
    ("4p_defaults", {"num_players": 4}, 2024, 1),
    ("3p_chart_C_queue_treasure_only_distinct_private", {
        "num_players": 3, "value_chart": "C", "tie_break": "queue", "reveal_after": "treasure_only",
        "two_pairs": "distinct", "public_bids": False, "reward": "rank"}, 7, 2),
    ("5p_random_chart_score", {"num_players": 5, "value_chart": "random", "reward": "score"}, 99, 3),
    ("4p_chart_E_margin_private", {"num_players": 4, "value_chart": "E", "reward": "margin",
                                   "public_bids": False}, 12345, 4),
    ("3p_chart_B_win", {"num_players": 3, "value_chart": "B", "reward": "win"}, 31337, 5),
]


def observation_hash(env) -> str:
    """A short hash of what every agent sees now (vector and mask), and whose turn it is."""
    h = hashlib.sha256()
    h.update(str(env.agent_selection).encode())
    for agent in env.possible_agents:
        obs = env.observe(agent)
        h.update(agent.encode())
        h.update(np.ascontiguousarray(obs["observation"], dtype=np.float32).tobytes())
        h.update(np.ascontiguousarray(obs["action_mask"], dtype=np.int8).tobytes())
    return h.hexdigest()[:16]


def choose(rng: np.random.Generator, mask: np.ndarray, round_no: int) -> int:
    """A seeded policy over the legal actions that makes ties (and a first-round tie) common."""
    legal = np.flatnonzero(mask)
    if round_no == 1 or rng.random() < 0.3:
        return int(legal[0])  # the lowest legal action: bid 0, or the first colour in hand
    if rng.random() < 0.5:
        return int(legal[rng.integers(min(legal.size, 6))])
    return int(legal[rng.integers(legal.size)])


def record_game(name: str, options: dict, seed: int, policy_seed: int) -> dict:
    from gemenvs import megagem_v0

    env = megagem_v0.env(**options)
    env.reset(seed=seed)
    rng = np.random.default_rng(policy_seed)
    actions, hashes, rewards, infos = [], [], {}, {}
    for agent in env.agent_iter():
        hashes.append(observation_hash(env))
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            rewards[agent], infos[agent] = reward, info
            env.step(None)
            continue
        action = choose(rng, obs["action_mask"], env.unwrapped.game_state.round)
        actions.append(action)
        env.step(action)
    first = infos[env.possible_agents[0]]
    return {
        "name": name,
        "options": options,
        "seed": seed,
        "actions": actions,
        "observation_hashes": hashes,
        "final_scores": first["scores"],
        "winners": first["winners"],
        "value_chart": first["value_chart"],
        "score_breakdown": {a: infos[a]["score_breakdown"] for a in env.possible_agents},
        "rewards": {a: rewards[a] for a in env.possible_agents},
    }


def build() -> dict:
    return {
        "about": "MegaGem golden games; regenerate only on a deliberate behaviour change: see tests/data/make_golden.py",
        "env_id": "gemenvs/MegaGem-v0",
        "hash": "sha256[:16] of agent_selection, then per agent: name, float32 observation bytes, int8 mask bytes; "
                "one entry per agent_iter step of the AEC env (terminal steps included)",
        "games": [record_game(*g) for g in GAMES],
    }


def to_text(data: dict) -> str:
    """JSON with one line per game field (long lists stay on one line, for readable diffs)."""
    lines = ["{"]
    for key, value in data.items():
        if key != "games":
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)},")
    lines.append('  "games": [')
    for i, game in enumerate(data["games"]):
        fields = [f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in game.items()]
        lines.append("   {\n" + ",\n".join(fields) + "\n   }" + ("," if i + 1 < len(data["games"]) else ""))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the stored file, write nothing")
    args = parser.parse_args(argv)
    data = build()
    text = to_text(data)
    if args.check:
        same = GOLDEN_PATH.exists() and json.loads(GOLDEN_PATH.read_text()) == data
        print("golden games unchanged" if same else "golden games DIFFER from the stored file")
        return 0 if same else 1
    GOLDEN_PATH.write_text(text)
    print(f"wrote {GOLDEN_PATH} ({len(data['games'])} games)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
