"""The single-learner environments over the batched MegaGem engine (``gemenvs/gemenvs/arena/batched_selfplay.py``).

* Against the scalar engine: every game slot's games are replayed decision by decision with
  ``MegaGem`` (the learner's recorded actions, fresh scalar opponents calling ``act`` in turn, as
  ``SingleAgentEnv`` plays them); the learner's observations and masks at each of its decisions,
  its terminal observation, reward, win share, score and margin must be the scalar ones, and
  with ``record=True`` each game's state (``games.state(b)``) gives the learner's observation.
* The pool: members and weights from ``update_opponents`` (as ``PoolOpponents`` takes them),
  labels in the final infos, games under way keep their opponents, episode counts.
* SB3 (MaskablePPO learns a few rollouts; masks and pool updates through ``env_method``) and
  Gymnasium's ``VectorEnv`` (same-step autoreset with ``final_obs`` / ``final_info``), which
  ``gymnasium.make_vec`` builds for MegaGem (its ``vector_entry_point``) without torch or SB3.
"""
from __future__ import annotations

import numpy as np
import pytest

from gemenvs.agents.megagem import HeuristicBidder, TruthfulAgent
from gemenvs.agents.megagem.tuned import ParametricBidder, random_weights
from gemenvs.agents.policy import PolicyAgent
from gemenvs.core.rewards import terminal_rewards
from gemenvs.megagem.game import MegaGem
from gemenvs.arena.batched_selfplay import BatchedSelfPlay, BatchedVectorEnv
from gemenvs.arena.batched_vec_env import BatchedVecEnv


def _policy(game: MegaGem, seed: int) -> PolicyAgent:
    rng = np.random.default_rng(seed)
    layers = [(rng.normal(0, 0.3, (game.spec.size, 16)), rng.normal(0, 0.1, 16)),
              (rng.normal(0, 1.0, (16, game.num_actions)), rng.normal(0, 1.0, game.num_actions))]
    return PolicyAgent(layers, "tanh", deterministic=True)


def _play(env: BatchedSelfPlay, steps: int, seed: int):
    """Random legal learner actions for ``steps`` steps; per slot, the record of each game."""
    rng = np.random.default_rng(seed)
    games = [[] for _ in range(env.num_games)]
    obs = env.reset(seed=seed)

    def start(b):
        games[b].append({"seed": int(env.games.seeds[b]), "seat": int(env.seat[b]), "decisions": []})
    for b in range(env.num_games):
        start(b)
    for _ in range(steps):
        masks = env.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        for b in range(env.num_games):
            games[b][-1]["decisions"].append((obs[b].copy(), masks[b].copy(), int(actions[b])))
        obs, rewards, dones, finished = env.step(actions)
        if finished is not None:
            for i, b in enumerate(finished.slots.tolist()):
                games[b][-1]["end"] = (finished.terminal_observation[i], rewards[b], finished.info(i, 0.0))
                start(b)
        assert (rewards[~dones] == 0).all()
    return games


def _replay(game: MegaGem, record: dict, opponents: list, reward: str) -> int:
    """Play one recorded game on the scalar engine (the learner's actions, opponents' act in turn),
    checking the learner's observations, masks and results; the number of learner decisions."""
    state = game.new_state(record["seed"])
    seat, n = record["seat"], game.num_players
    for agent in opponents:
        agent.reset()
    decisions = iter(record["decisions"])
    count = 0
    while not game.is_over(state):
        p = game.to_act(state)[0]
        obs, mask = game.observe(state, p), game.legal_mask(state, p)
        if p == seat:
            if count == len(record["decisions"]):
                assert "end" not in record, "the game went on after the learner's last recorded decision"
                break  # a game still under way when the recording stopped
            seen_obs, seen_mask, action = next(decisions)
            assert np.array_equal(seen_obs, obs) and np.array_equal(seen_mask, mask.astype(bool))
            count += 1
        else:
            action = opponents[(p - seat) % n - 1].act(obs, mask)
        game.apply_legal(state, p, action)
    if "end" in record:
        final_obs, rew, info = record["end"]
        results = game.results(state)
        assert np.array_equal(final_obs, game.observe(state, seat))
        assert rew == np.float32(terminal_rewards(reward, results.scores, game.score_scale, results.rank_keys)[seat])
        winners = list(results.winners)
        assert info["win_share"] == (1.0 / len(winners) if seat in winners else 0.0)
        assert info["score"] == results.scores[seat]
        assert info["margin"] == results.scores[seat] - max(s for q, s in enumerate(results.scores) if q != seat)
        assert info["learner_seat"] == seat and info["episode"]["l"] == count == len(record["decisions"])
    return count


@pytest.mark.parametrize("options, reward", [
    (dict(num_players=4), "win"),
    (dict(num_players=3, tie_break="queue", reveal_after="treasure_only"), "rank"),
    (dict(num_players=5, value_chart="random", public_bids=False), "margin"),
])
def test_learner_sees_what_the_scalar_engine_shows(options, reward):
    game = MegaGem(**options)
    n = game.num_players
    policy = _policy(game, 1)

    def opponents():  # fresh agents, one per opponent seat (a HeuristicBidder remembers its game)
        return [TruthfulAgent(spec=game.spec, action_spec=game.action_spec), policy,
                HeuristicBidder(spec=game.spec, action_spec=game.action_spec), _policy(game, 2)][:n - 1]
    env = BatchedSelfPlay(6, opponents(), reward=reward, seed=3, **options)
    records = _play(env, 45, seed=options["num_players"])
    finished = 0
    for slot in records:
        for record in slot:
            _replay(game, record, opponents(), reward)
            finished += "end" in record
    assert finished >= 6 and finished == env.num_episodes
    assert env.engine_steps > 45 * 1.5  # games where the learner had no decision were advanced, others held
    assert {r["seat"] for slot in records for r in slot} == set(range(n))  # seats drawn per game


@pytest.mark.parametrize("options", [dict(num_players=4), dict(num_players=3, public_bids=False)])
def test_bidders_with_memory_play_all_their_games_in_one_table(options):
    """HeuristicBidder and a ParametricBidder in every opponent seat play through their batch_games tables:
    the learner's games must still be the scalar games against one fresh instance per seat."""
    game = MegaGem(**options)
    n = game.num_players
    weights = random_weights(np.random.default_rng(5), spread=1.5)

    def opponents():
        return [HeuristicBidder(spec=game.spec, action_spec=game.action_spec),
                ParametricBidder(spec=game.spec, action_spec=game.action_spec, weights=weights),
                HeuristicBidder(spec=game.spec, action_spec=game.action_spec)][:n - 1]
    env = BatchedSelfPlay(5, opponents(), reward="win", seed=1, batch_memory=True, **options)
    records = _play(env, 50, seed=n)
    assert not env._own and len(env._memory) == n - 1  # no instance per game: tables only
    rows = BatchedSelfPlay(5, opponents(), reward="win", seed=1, batch_memory=False, **options)
    again = _play(rows, 50, seed=n)  # one instance per game slot and seat: the same games
    assert rows._own and not rows._memory
    assert all(np.array_equal(x[0], y[0]) for a, b in zip(records, again) for r, q in zip(a, b)
               for x, y in zip(r["decisions"], q["decisions"]))
    finished = 0
    for slot in records:
        for record in slot:
            _replay(game, record, opponents(), "win")
            finished += "end" in record
    assert finished >= 5 and finished == env.num_episodes


def test_state_of_each_game_gives_the_learner_observation():
    env = BatchedSelfPlay(5, "random", seed=0, record=True, num_players=4)
    obs = env.reset(seed=2)
    rng = np.random.default_rng(0)
    for _ in range(30):
        masks = env.action_masks()
        for b in range(env.num_games):
            state = env.games.state(b)
            assert np.array_equal(obs[b], env.games.game.observe(state, env.seat[b]))
            assert np.array_equal(masks[b], env.games.game.legal_mask(state, env.seat[b]).astype(bool))
            assert env.seat[b] in env.games.game.to_act(state)
        obs, *_ = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))


def test_fixed_seat_seeding_and_errors():
    a = BatchedSelfPlay(4, "truthful", learner_seat=2, seed=0, num_players=4)
    b = BatchedSelfPlay(4, "truthful", learner_seat=2, seed=0, num_players=4)
    assert np.array_equal(a.reset(seed=9), b.reset(seed=9)) and (a.seat == 2).all()
    wide = BatchedSelfPlay(7, "truthful", seed=0, num_players=4)
    wide.reset(seed=9)
    narrow = BatchedSelfPlay(3, "truthful", seed=0, num_players=4)
    narrow.reset(seed=9)
    assert np.array_equal(wide.seat[:3], narrow.seat) and np.array_equal(wide.games.seeds[:3], narrow.games.seeds)
    with pytest.raises(ValueError, match="game 1: the learner's action 90"):
        masks = a.action_masks()
        actions = np.array([np.flatnonzero(m)[0] for m in masks])
        actions[1] = 90
        a.step(actions)
    with pytest.raises(ValueError, match="2 opponents given for 3 opponent seats"):
        BatchedSelfPlay(2, ["random", "random"], num_players=4)
    with pytest.raises(ValueError, match="plays MegaGem"):
        BatchedSelfPlay(2, "random", env_id="gemenvs/GEM-v0")
    with pytest.raises(RuntimeError, match="pool is empty"):
        BatchedSelfPlay(2, None, num_players=4).reset(seed=0)


def test_pool_members_weights_labels_and_episodes():
    env = BatchedSelfPlay(16, None, seed=0, num_players=4)
    env.update_opponents([("random", "random"), ("truthful", "truthful")], [1.0, 0.0])
    env.reset(seed=1)
    assert env._labels == ["random"] * 16
    rng = np.random.default_rng(0)
    labels, shares, count = [], [], 0

    def run(steps):
        nonlocal count
        for _ in range(steps):
            masks = env.action_masks()
            _, rewards, dones, finished = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
            if finished is not None:
                count += len(finished.slots)
                labels.extend(finished.opponent)
                shares.extend(finished.win_share.tolist())
                assert np.array_equal(finished.rewards > 0, finished.win_share > 0)  # "win": +1 for any winner
                assert np.array_equal(np.flatnonzero(dones), finished.slots)
    run(12)
    assert set(labels) <= {"random"}
    env.update_opponents([("truthful", "truthful"), ("heuristic", "heuristic")], [0.5, 0.5])
    labels.clear()
    run(60)
    assert labels[0] == "random" or labels.count("random") < 16  # games under way kept their opponents
    assert {"truthful", "heuristic"} <= set(labels)
    assert count == env.num_episodes == int(env.episodes.sum())
    assert all(s in (0.0, 1.0, 0.5, 1 / 3, 0.25) for s in shares)

    per_seat = BatchedSelfPlay(32, None, seed=0, num_players=4, seat_mix="per_seat")
    per_seat.update_opponents([("random", "random"), ("truthful", "truthful")])
    per_seat.reset(seed=0)
    assert "random + truthful" in per_seat._labels or "truthful + random" in per_seat._labels


def test_sb3_vec_env_learns_with_masks_and_pool_updates(tmp_path):
    from sb3_contrib import MaskablePPO

    venv = BatchedVecEnv(4, None, seed=0, num_players=4)
    members = [("random", "random"), ("truthful", "truthful")]
    venv.env_method("update_opponents", members, [0.5, 0.5])
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [16]})
    model.learn(total_timesteps=256)
    assert model.num_timesteps == 256 and len(model.ep_info_buffer) > 0
    masks = np.stack(venv.env_method("action_masks"))
    assert masks.shape == (4, 91) and masks.any(axis=1).all()
    PolicyAgent.from_sb3(model).save(tmp_path / "snap.npz")  # a snapshot joins the pool, as in training
    venv.env_method("update_opponents", members + [("snap", str(tmp_path / "snap.npz"))], [0, 0, 1])
    obs = venv.reset()
    seen = set()
    for _ in range(40):
        obs, rewards, dones, infos = venv.step(np.array([np.flatnonzero(m)[0] for m in venv.action_masks()]))
        for info, done in zip(infos, dones):
            if done:
                seen.add(info["opponent"])
                assert info["terminal_observation"].shape == obs.shape[1:] and "win_share" in info
    assert seen == {"snap"}
    venv.close()


def test_gymnasium_vector_env_same_step_autoreset():
    envs = BatchedVectorEnv(3, "truthful", seed=0, num_players=3)
    obs, info = envs.reset(seed=4)
    assert obs.shape == (3, envs.single_observation_space.shape[0])
    assert info["action_mask"].shape == (3, envs.single_action_space.n)
    assert envs.observation_space.shape == obs.shape and envs.action_space.shape == (3,)
    ended = 0
    for _ in range(80):
        actions = np.array([np.flatnonzero(m)[-1] for m in info["action_mask"]])
        obs, rewards, terminations, truncations, info = envs.step(actions)
        assert not truncations.any()
        if terminations.any():
            ended += terminations.sum()
            assert np.array_equal(info["_final_obs"], terminations)
            for b in np.flatnonzero(terminations):
                assert info["final_obs"][b].shape == obs.shape[1:]
                assert info["final_info"]["opponent"][b] == "truthful+truthful"
                assert rewards[b] in (1.0, -1.0)
    assert ended >= 3
    envs.close()


def _masked_actions(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])


def test_make_vec_builds_the_batched_vector_env():
    """gymnasium.make_vec of MegaGem is the batched engine (its vector_entry_point), with the same games as
    BatchedVectorEnv built directly from the same arguments."""
    import gymnasium

    made = gymnasium.make_vec("gemenvs/MegaGem-v0", num_envs=3, opponents="truthful", num_players=3, reward="score")
    direct = BatchedVectorEnv(3, "truthful", num_players=3, reward="score")
    assert isinstance(made, BatchedVectorEnv) and made.num_envs == 3
    assert made.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    assert made.single_observation_space == direct.single_observation_space
    assert made.spec.id == "gemenvs/MegaGem-v0" and made.spec.kwargs["vectorization_mode"] == "vector_entry_point"
    (obs_m, info_m), (obs_d, info_d) = made.reset(seed=5), direct.reset(seed=5)
    rng, ended = np.random.default_rng(1), 0
    for _ in range(60):
        assert np.array_equal(obs_m, obs_d) and np.array_equal(info_m["action_mask"], info_d["action_mask"])
        actions = _masked_actions(rng, info_m["action_mask"])
        obs_m, rew_m, term_m, _, info_m = made.step(actions)
        obs_d, rew_d, term_d, _, info_d = direct.step(actions)
        assert np.array_equal(rew_m, rew_d) and np.array_equal(term_m, term_d)
        ended += int(term_m.sum())
    assert ended >= 3  # (games ended, with their "score" rewards compared)
    with pytest.raises(ValueError, match="num_envs must be an integer in 1"):
        gymnasium.make_vec("gemenvs/MegaGem-v0", num_envs=0)
    with pytest.raises(ValueError, match="game 0: the learner's action 90"):
        made.step(np.array([90] + [int(np.flatnonzero(m)[0]) for m in info_m["action_mask"][1:]]))
    made.close()
    direct.close()


def test_the_constructor_seed_deals_the_first_reset():
    """A seed given when the env is made is the one the first reset() without a seed plays (make_vec's
    seed=... included); later resets without a seed draw new games."""
    import gymnasium

    first = BatchedSelfPlay(4, "random", seed=3, num_players=3)
    again = BatchedSelfPlay(4, "random", seed=3, num_players=3)
    explicit = BatchedSelfPlay(4, "random", num_players=3)
    obs = first.reset()
    assert np.array_equal(obs, again.reset()) and np.array_equal(obs, explicit.reset(seed=3))
    assert first.games.seed == 3 and not np.array_equal(first.reset(), obs) and first.games.seed != 3
    envs = gymnasium.make_vec("gemenvs/MegaGem-v0", num_envs=4, num_players=3, seed=3)
    assert np.array_equal(envs.reset()[0], obs)
    with pytest.raises(ValueError, match="takes no options"):
        envs.reset(options={"reset_mask": np.ones(4, np.bool_)})
    envs.close()


def test_make_vec_other_modes_and_games_keep_single_agent_copies():
    import gymnasium

    from gemenvs.arena.single_agent import SingleAgentEnv

    for envs in (gymnasium.make_vec("gemenvs/MegaGem-v0", num_envs=2, vectorization_mode="sync"),
                 gymnasium.make_vec("gemenvs/GEM-v0", num_envs=2)):
        assert isinstance(envs, gymnasium.vector.SyncVectorEnv)
        assert all(isinstance(e.unwrapped, SingleAgentEnv) for e in envs.envs)
        envs.close()


@pytest.mark.parametrize("option, value", [("render_mode", "ansi"), ("shaping", 0.5),
                                           ("illegal_action", "terminate")])
def test_make_vec_refuses_single_agent_only_options(option, value):
    import gymnasium

    with pytest.raises(ValueError, match=f"does not take {option}.*vectorization_mode='sync'"):
        gymnasium.make_vec("gemenvs/MegaGem-v0", num_envs=2, **{option: value})
    envs = gymnasium.make_vec("gemenvs/MegaGem-v0", num_envs=2, illegal_action="raise")
    assert isinstance(envs, BatchedVectorEnv)
    envs.close()


def test_the_gymnasium_view_imports_neither_torch_nor_sb3():
    import subprocess
    import sys

    code = ("import sys, gymnasium, gemenvs\n"
            "envs = gymnasium.make_vec('gemenvs/MegaGem-v0', num_envs=4, opponents='heuristic')\n"
            "envs.reset(seed=0)\n"
            "loaded = sorted({'torch', 'stable_baselines3', 'sb3_contrib'} & set(sys.modules))\n"
            "assert not loaded, loaded\n"
            "from gemenvs.arena import BatchedVecEnv\n"
            "assert BatchedVecEnv.__module__ == 'gemenvs.arena.batched_vec_env'\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_config_switch_picks_the_path():
    from pathlib import Path

    from gemenvs.training.config import ConfigError, load_config
    from gemenvs.training.selfplay import MasksFromInfos, make_vec_env, uses_batched_env

    configs = Path(__file__).resolve().parent.parent / "configs"
    tiny = ["n_envs=2", "ppo.n_steps=32", "ppo.batch_size=32"]
    cfg = load_config(configs / "megagem" / "selfplay_sb3.yaml", tiny)
    assert cfg.vec_env == "auto" and uses_batched_env(cfg)
    env = make_vec_env(cfg)
    assert isinstance(env, BatchedVecEnv) and env.num_envs == 2 and env.core.seat_mix == cfg.pool.seat_mix
    env.close()
    assert not uses_batched_env(load_config(configs / "megagem" / "selfplay_sb3.yaml", tiny + ["vec_env=subproc"]))
    gemjam = load_config(configs / "gemjam" / "selfplay.yaml", ["n_envs=1"])
    assert not uses_batched_env(gemjam)
    env = make_vec_env(gemjam)
    assert isinstance(env, MasksFromInfos)
    env.close()
    with pytest.raises(ConfigError, match="vec_env: 'batched' plays MegaGem only, not gemjam"):
        load_config(configs / "gemjam" / "selfplay.yaml", ["vec_env=batched"])
    with pytest.raises(ConfigError, match="vec_env must be one of 'auto', 'batched', 'subproc'"):
        load_config(configs / "megagem" / "selfplay_sb3.yaml", ["vec_env=threads"])


def test_make_vec_under_gymnasiums_episode_statistics_wrapper():
    """Gymnasium's vector RecordEpisodeStatistics over the make_vec env: every finished game's return
    (its terminal reward: the learner's rewards are 0 until the game ends) and length (the learner's
    steps in it) in info["episode"], flagged by info["_episode"] exactly for the games that ended."""
    import gymnasium
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    envs = RecordEpisodeStatistics(gymnasium.make_vec("gemenvs/MegaGem-v0", num_envs=4, opponents="truthful",
                                                       num_players=3))
    _, info = envs.reset(seed=2)
    rng, lengths, returns, ended = np.random.default_rng(0), np.zeros(4, np.int64), np.zeros(4), 0
    for _ in range(120):
        _, rewards, terminations, truncations, info = envs.step(_masked_actions(rng, info["action_mask"]))
        lengths += 1
        returns += rewards
        done = terminations | truncations
        assert np.array_equal(info.get("_episode", np.zeros(4, np.bool_)), done)
        assert not np.any(rewards[~done])
        for b in np.flatnonzero(done):
            assert info["episode"]["r"][b] == returns[b] == rewards[b] and rewards[b] in (1.0, -1.0)
            assert info["episode"]["l"][b] == lengths[b]
        lengths[done], returns[done] = 0, 0.0
        ended += int(done.sum())
    assert ended >= 4 and len(envs.return_queue) == ended
    envs.close()
