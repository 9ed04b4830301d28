"""Training on Gem Jam: the single-learner view hands the learner every decision of its seat (in
Gem Jam many come outside its own turn: reactions, payments, placing what it receives), the
optional potential-based reward shaping, the shipped config, and a tiny end-to-end run."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("yaml")

from gemenvs.arena import play_game  # noqa: E402
from gemenvs.agents.gemjam import GemJamRuleAgent  # noqa: E402
from gemenvs.agents.policy import PolicyAgent  # noqa: E402
from gemenvs.gemjam.encode import DECISIONS  # noqa: E402
from gemenvs.gemjam_v0 import env as gemjam_env  # noqa: E402
from gemenvs.gemjam.winmodel import player_features, win_chances  # noqa: E402
from gemenvs.training.config import ConfigError, load_config  # noqa: E402
from gemenvs.arena.single_agent import SingleAgentEnv  # noqa: E402

ENV_ID = "gemenvs/GemJam-v0"
CONFIG = Path(__file__).resolve().parents[1] / "configs" / "gemjam" / "selfplay.yaml"


def random_episode(env: SingleAgentEnv, seed: int, on_decision=None) -> list[float]:
    """One episode of uniformly random learner actions (seeded); ``on_decision(env)`` before each."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    rewards = []
    while True:
        if on_decision is not None:
            on_decision(env)
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        rewards.append(reward)
        if terminated or truncated:
            return rewards


def test_learner_gets_every_decision_of_its_seat_in_and_out_of_its_turn():
    env = SingleAgentEnv(ENV_ID, opponents="random", learner_seat=1, num_players=3)
    kinds_off_turn: set[str] = set()
    for seed in range(3):
        seen = []

        def record(e):
            state = e.raw.game_state
            assert state.decision.seat == e.seat
            seen.append((state.turn, state.decision.kind))

        random_episode(env, seed, record)
        state = env.raw.game_state
        own = [entry for entry in state.log if entry[0] == env.seat and not entry[2]]
        assert len(seen) == len(own), "every non-forced decision of the learner's seat went to the learner, in order"
        kinds_off_turn |= {why for turn, why in seen if turn != env.seat}
    assert kinds_off_turn <= set(DECISIONS)
    # reactions, payments and placing received gems are the learner's too, in others' turns
    assert {"react", "pay"} & kinds_off_turn, kinds_off_turn


@pytest.mark.parametrize("gamma, potential", [(1.0, "progress"), (0.9, "progress"), (1.0, "win_chance"),
                                              (0.9, "win_chance")])
def test_potential_based_shaping(gamma, potential):
    plain = SingleAgentEnv(ENV_ID, opponents="random", learner_seat=0, num_players=3)
    w = 0.5
    shaped = SingleAgentEnv(ENV_ID, opponents="random", learner_seat=0, num_players=3, shaping=w, shaping_gamma=gamma,
                            potential=potential)

    def phi(env: SingleAgentEnv) -> float:  # computed here from the game, not read from the wrapper
        state = env.raw.game_state
        if potential == "progress":
            return env.raw.game.progress(state, env.seat)
        return float(win_chances(state, env.raw.game.cfg)[env.seat])

    for seed in (0, 3):
        phis: list[float] = []
        base = random_episode(plain, seed)
        extra = random_episode(shaped, seed, lambda e: phis.append(phi(e)))
        assert len(base) == len(extra) == len(phis), "shaping does not change the game"
        phis.append(0.0)  # the potential is 0 once the game is over
        expected = [r + w * (gamma * phis[t + 1] - phis[t]) for t, r in enumerate(base)]
        assert np.allclose(extra, expected)
        assert max(phis) > 0, "some set was completed"
        if gamma == 1.0:  # the shaping telescopes: the episode's return is unchanged
            assert sum(extra) == pytest.approx(sum(base) - w * phis[0])


def test_the_win_model_is_a_distribution_exact_at_the_end():
    """Gem Jam's win chances (the model the lookahead agent scores positions with, measured by its strength in
    benchmarks/gemjam_lookahead.py) sum to 1 over the players in mid-game and are the result itself once the game
    is over."""
    game = gemjam_env(num_players=3).unwrapped.game
    assert game.has_win_model()
    env = SingleAgentEnv(ENV_ID, opponents="rule", learner_seat=0, num_players=3)
    for seed in range(3):
        random_episode(env, seed, lambda e: None)
        state = env.raw.game_state
        chances = [game.win_chance(state, p) for p in range(3)]
        winners = game.results(state).winners
        assert chances == pytest.approx([1 / len(winners) if p in winners else 0.0 for p in range(3)])
    rule = GemJamRuleAgent.for_env(env.aec)
    state = game.new_state(7)
    sets = lambda s: [player_features(s, game.cfg, q)[0] for q in range(3)]  # noqa: E731 (completed sets)
    while sets(state)[1] == sets(state)[2]:  # rule agents play on until players 1 and 2 differ in completed sets
        p = game.to_act(state)[0]
        game.apply(state, p, rule.act(game.observe(state, p), game.legal_mask(state, p)))
        assert not game.is_over(state)
    chances = win_chances(state, game.cfg)
    assert chances.sum() == pytest.approx(1.0) and (chances > 0).all()
    assert [game.win_chance(state, p) for p in range(3)] == pytest.approx(chances)


def test_progress_defaults_to_zero_and_shaping_is_checked():
    from gemenvs.megagem_v0 import env as megagem_env

    game = megagem_env().unwrapped.game
    assert game.progress(game.new_state(0), 0) == 0.0
    with pytest.raises(ValueError, match="shaping must be a number >= 0; got -1"):
        SingleAgentEnv(ENV_ID, shaping=-1)
    with pytest.raises(ValueError, match=r"shaping_gamma must be a number in \[0, 1\]; got 1.5"):
        SingleAgentEnv(ENV_ID, shaping=1.0, shaping_gamma=1.5)
    with pytest.raises(ConfigError, match="env.shaping must be at least 0; got -0.5"):
        load_config(CONFIG, ["env.shaping=-0.5"])
    assert not game.has_win_model()
    with pytest.raises(ValueError, match="potential 'win_chance': megagem has no win model; use 'progress'"):
        SingleAgentEnv("gemenvs/MegaGem-v0", shaping=1.0, potential="win_chance")
    with pytest.raises(ValueError, match="potential must be one of 'progress', 'win_chance'; got 'sets'"):
        SingleAgentEnv(ENV_ID, shaping=1.0, potential="sets")
    with pytest.raises(ConfigError, match=r"env.potential: megagem has no win model \('win_chance'\)"):
        load_config(CONFIG.parents[1] / "megagem" / "selfplay_sb3.yaml", ["env.potential=win_chance"])


def test_shipped_gemjam_config():
    cfg = load_config(CONFIG)
    assert cfg.env.id == ENV_ID and cfg.env.options == {"num_players": 3} and cfg.name == "gemjam_selfplay"
    assert cfg.pool.baselines == ["random", "rule"] and cfg.eval.opponents == ["random", "rule"]
    assert cfg.eval.final_games == 1000
    # the measured default: the lookahead's advice as features, cloning of what it advises with a DAgger round,
    # then PPO
    assert cfg.env.features == "gemjam_lookahead_advice" and cfg.pretrain.teacher == "advice"
    assert cfg.pretrain.dagger_rounds == 1 and cfg.env.reward == "margin"
    assert cfg.max_train_minutes is None and cfg.total_timesteps == 172_032  # the budget: work, not minutes


def test_tiny_gemjam_run_saves_a_checkpoint_that_plays_a_legal_game(tmp_path):
    from gemenvs.training.checkpoint import find_checkpoint
    from gemenvs.training.run import train

    overrides = [
        f"run_root={tmp_path}", "name=tiny", "seed=2", "total_timesteps=2048", "n_envs=1", "checkpoint_every=0",
        "progress_bar=false", "ppo.n_steps=512", "ppo.batch_size=256", "ppo.n_epochs=1", "ppo.net_arch=[32]",
        "pool.baselines=[random]", "pool.snapshot_every=1024", "eval.every=0", "eval.opponents=[random]",
        "eval.best_by=mean", "eval.final_games=3", "eval.workers=1",
        # the behaviour-cloning warm start with one DAgger round, in miniature
        # (with the shipped features, the lookahead's advice, and their teacher)
        "pretrain.games=3", "pretrain.epochs=1", "pretrain.workers=1", "pretrain.dagger_rounds=1",
        "pretrain.dagger_games=2", "env.features=gemjam_lookahead_advice",
        "eval.save_games=true",  # the final evaluation's games, in the saved-game format
    ]
    run = train(load_config(CONFIG, overrides))
    ckpt = find_checkpoint(run)
    assert ckpt.name.startswith("step_") and (ckpt / "model.zip").exists() and (run / "results.json").exists()
    pre = json.loads((run / "pretrain.json").read_text())
    assert pre["teacher"] == "advice" and [r["games"] for r in pre["rounds"]] == [3, 2]
    from gemenvs.recording import load_game

    saved = sorted((run / "games" / "random").glob("game_*.jsonl"))
    assert len(saved) == 3, "every game of the final evaluation is saved"
    final = json.loads((run / "results.json").read_text())["results"]["random"]
    game = load_game(saved[0])
    assert game.env == "gemjam_v0" and game.replay() is not None and final["games"] == 3
    assert "snapshot_1024" in (ckpt / "pool.json").read_text()
    # model.zip cannot name the observation features the actor reads; the checkpoint's policy.npz does
    agent = PolicyAgent.load(ckpt / "policy.npz", deterministic=False, seed=0)
    assert agent.needs_state and agent.features.name == "gemjam_lookahead_advice"
    assert (run / "final_model.npz").exists()
    env = gemjam_env(num_players=3)  # illegal_action="raise": an illegal move would fail the test
    others = [GemJamRuleAgent.for_env(env, seed=k) for k in range(2)]
    final = play_game(env, [agent] + others, seed=7)
    assert set(final) == set(env.possible_agents) and "winners" in final["player_0"]
