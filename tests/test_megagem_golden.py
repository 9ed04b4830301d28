"""Replay the recorded MegaGem golden games (``tests/data/megagem_golden.json``).

Each game must replay identically: every stored action legal when played, the same hash of
every observation, and the same final scores, breakdowns, winners and rewards. A failure
means the environment's behaviour changed; if the change is deliberate, regenerate the file
with ``tests/data/make_golden.py`` (see its docstring) in the same commit.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from gemenvs import megagem_v0

DATA = Path(__file__).parent / "data"
GOLDEN = json.loads((DATA / "megagem_golden.json").read_text())
GAMES = GOLDEN["games"]


def load_generator():
    spec = importlib.util.spec_from_file_location("make_golden", DATA / "make_golden.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_golden_file_is_well_formed():
    assert GOLDEN["env_id"] == "gemenvs/MegaGem-v0"
    assert len(GAMES) >= 3
    assert {g["options"].get("num_players", 4) for g in GAMES} == {3, 4, 5}
    for g in GAMES:
        assert len(g["observation_hashes"]) == len(g["actions"]) + len(g["final_scores"])
        assert len(set(g["observation_hashes"])) > len(g["actions"]) // 2


@pytest.mark.parametrize("game", GAMES, ids=[g["name"] for g in GAMES])
def test_golden_game_replays_identically(game):
    observation_hash = load_generator().observation_hash
    env = megagem_v0.env(**game["options"])
    env.reset(seed=game["seed"])
    actions = iter(game["actions"])
    hashes = game["observation_hashes"]
    step = 0
    rewards, infos = {}, {}
    for agent in env.agent_iter():
        assert step < len(hashes), "the game runs longer than recorded"
        assert observation_hash(env) == hashes[step], f"observations differ from the recording at step {step}"
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            rewards[agent], infos[agent] = reward, info
            env.step(None)
        else:
            action = next(actions)
            assert obs["action_mask"][action] == 1, f"recorded action {action} is not legal at step {step}"
            env.step(action)
        step += 1
    assert step == len(hashes), "the game ended earlier than recorded"
    assert next(actions, None) is None
    first = infos["player_0"]
    assert first["scores"] == game["final_scores"]
    assert first["winners"] == game["winners"] and first["value_chart"] == game["value_chart"]
    assert {a: infos[a]["score_breakdown"] for a in infos} == game["score_breakdown"]
    assert rewards == game["rewards"]


@pytest.mark.parametrize("game", GAMES, ids=[g["name"] for g in GAMES])
def test_golden_game_replays_through_the_parallel_api(game):
    """The same seed and actions, grouped into Parallel steps, end with the same scores."""
    env = megagem_v0.parallel_env(**game["options"])
    obs, _ = env.reset(seed=game["seed"])
    actions = list(game["actions"])
    k = 0
    while env.agents:
        acting = [a for a in env.possible_agents if obs[a]["action_mask"].any()]  # seat order, as in AEC
        step = {}
        for a in acting:
            assert obs[a]["action_mask"][actions[k]] == 1
            step[a] = actions[k]
            k += 1
        obs, rew, term, trunc, infos = env.step(step)
    assert k == len(actions)
    assert infos["player_0"]["scores"] == game["final_scores"]
    assert rew == game["rewards"]


def test_generator_reproduces_the_file():
    """make_golden.py still records exactly the stored games (its policy follows the masks)."""
    gen = load_generator()
    assert gen.GOLDEN_PATH == DATA / "megagem_golden.json"
    assert gen.build() == GOLDEN
    assert json.loads(gen.to_text(GOLDEN)) == GOLDEN


def test_observation_hash_is_sensitive():
    """The hash changes when any agent's observation changes (so a replay can fail)."""
    gen = load_generator()
    env = megagem_v0.env(num_players=3)
    env.reset(seed=0)
    before = gen.observation_hash(env)
    env.unwrapped.game_state.coins[2] += 1
    assert gen.observation_hash(env) != before
    env.unwrapped.game_state.coins[2] -= 1
    assert gen.observation_hash(env) == before
    env.unwrapped.game_state.hands[1][int(np.argmax(env.unwrapped.game_state.hands[1]))] -= 1
    assert gen.observation_hash(env) != before
