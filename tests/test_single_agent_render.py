"""The single-learner view in render_mode="human" prints the learner's view only, after reset and after
each learner step: never an opponent's view (their hands) while the opponents play."""
import re

import gymnasium
import numpy as np
import pytest

import gemenvs

GAMES = [e.env_id for e in gemenvs.entries()]
LEARNER = 1


def play_episode(env, seed: int) -> int:
    """One whole episode of random legal learner moves; the number of learner steps."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    steps, done = 0, False
    while not done:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, done, truncated, info = env.step(action)
        steps += 1
    return steps


@pytest.mark.parametrize("env_id", GAMES)
def test_human_mode_renders_only_the_learners_view(env_id, monkeypatch, capsys):
    env = gymnasium.make(env_id, opponents="random", learner_seat=LEARNER, render_mode="human",
                         max_episode_steps=None)
    raw = env.unwrapped
    game = raw.raw.game
    viewers, render = [], game.render

    def spy(state, viewer=None):
        viewers.append(viewer)
        return render(state, viewer)

    monkeypatch.setattr(game, "render", spy)
    steps = play_episode(env, seed=3)
    printed = capsys.readouterr().out
    assert viewers == [LEARNER] * (1 + steps), "one learner's view after reset and after each learner step"
    assert printed.count(game.render(raw.raw.game_state, LEARNER)) >= 1  # the last view, of the final table
    assert env.render() is None and capsys.readouterr().out  # render() itself prints too


def test_human_mode_shows_no_other_hand_in_megagem(capsys):
    env = gymnasium.make("gemenvs/MegaGem-v0", num_players=4, opponents="random", learner_seat=LEARNER,
                         render_mode="human")
    steps = play_episode(env, seed=11)
    printed = capsys.readouterr().out
    hands = re.findall(r"(player_\d)'s hand:", printed)
    assert hands and set(hands) == {f"player_{LEARNER}"}
    assert len(hands) == 1 + steps - 1  # every view but the final table (no hand is shown once the game is over)


@pytest.mark.filterwarnings("ignore:.*render_mode='rgb'")
def test_other_render_modes_are_unchanged():
    ansi = gymnasium.make("gemenvs/GEM-v0", opponents="random", learner_seat=0, render_mode="ansi")
    ansi.reset(seed=0)
    assert ansi.unwrapped.raw.render_mode == "ansi" and isinstance(ansi.render(), str)
    picture = gymnasium.make("gemenvs/GEM-v0", opponents="random", learner_seat=0, render_mode="rgb_array")
    picture.reset(seed=0)
    assert picture.render().ndim == 3
    with pytest.raises(ValueError, match="render_mode"):
        gymnasium.make("gemenvs/GEM-v0", opponents="random", render_mode="rgb").reset(seed=0)
