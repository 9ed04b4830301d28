"""Pictures of the games (gemenvs.pictures, render_mode="rgb_array"): the documented fixed size,
deterministic pixels, pictures that follow the state, nothing hidden shown (the picture of a
seat's view is unchanged when everything that seat cannot see is redrawn), the environments'
rgb_array render, and replays written as GIFs."""
from __future__ import annotations

import re
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from PIL import Image

import gemenvs  # noqa: F401 - registers the Gymnasium views
from gemenvs import gem_v0, gemjam_v0, megagem_v0, pictures
from gemenvs.gem.game import Gem
from gemenvs.gemjam.game import GemJam
from gemenvs.megagem.game import MegaGem

DOCS = Path(__file__).resolve().parent.parent / "docs" / "pictures.md"
GAMES = {"MegaGem": MegaGem, "GEM": Gem, "Gem Jam": GemJam}
MODULES = {MegaGem: megagem_v0, Gem: gem_v0, GemJam: gemjam_v0}


def documented_sizes() -> dict[tuple[type, int], tuple[int, int]]:
    """(game class, players) -> (H, W), read from the size table of docs/pictures.md."""
    rows = re.findall(r"^\| (MegaGem|GEM|Gem Jam) \| (\d) \| (\d+) x (\d+) \|", DOCS.read_text(), re.M)
    return {(GAMES[name], int(n)): (int(h), int(w)) for name, n, h, w in rows}


SIZES = documented_sizes()
CASES = [(cls, n) for cls in GAMES.values() for n in cls.player_counts]
IDS = [f"{cls.name}-{n}p" for cls, n in CASES]


def sample_states(game, seed: int, count: int = 4) -> list:
    """Copies of ``count`` states spread over one seeded random game (its end included), plus,
    in Gem Jam, the first states with a response stack and with cards shown to a seat."""
    rng = np.random.default_rng(seed)
    s = game.new_state(seed)
    states, k, extra = [], 0, {}
    while not game.is_over(s):
        if k % 23 == 0 and len(states) < count - 1:
            states.append(s.copy())
        if game.name == "gemjam":
            for key, seen in (("stack", bool(s.stack)), ("aside", s.aside is not None)):
                if seen and key not in extra:
                    extra[key] = s.copy()
        p = game.to_act(s)[0]
        game.apply_legal(s, p, int(rng.choice(game.legal_actions(s, p))))
        k += 1
    return states + [s] + list(extra.values())


def test_every_game_and_player_count_is_documented():
    assert set(SIZES) == set(CASES), "docs/pictures.md's size table must list every game and player count"


@pytest.mark.parametrize("cls, n", CASES, ids=IDS)
def test_frames_have_the_documented_size_and_are_deterministic(cls, n):
    game = cls(num_players=n)
    assert pictures.frame_size(game) == SIZES[cls, n]
    s = sample_states(game, 1, count=2)[0]
    for viewer in (None, 0, n - 1):
        frame = pictures.draw(game, s, viewer)
        assert frame.shape == (*SIZES[cls, n], 3) and frame.dtype == np.uint8
        assert np.array_equal(frame, pictures.draw(game, s.copy(), viewer)), "same state, same pixels"
    assert not np.array_equal(pictures.draw(game, s, 0), pictures.draw(game, s, n - 1)), "the viewer's side shows"


@pytest.mark.parametrize("cls, n", CASES, ids=IDS)
def test_pictures_show_nothing_hidden(cls, n):
    """A seat's picture is unchanged when everything it cannot see is redrawn (resample_hidden),
    and so is the view without a seat whenever its text render is (MegaGem, GEM)."""
    variants = [{}] if cls is not MegaGem or n != 4 else [{}, {"public_bids": False}]
    for options in variants:
        game = cls(num_players=n, **options)
        rng = np.random.default_rng(7)
        for s in sample_states(game, 2):
            for p in range(n):
                other = game.resample_hidden(s, p, rng)
                assert np.array_equal(pictures.draw(game, s, p), pictures.draw(game, other, p)), \
                    f"player_{p}'s picture shows something hidden from it ({options})"
                if game.render(s, None) == game.render(other, None):
                    assert np.array_equal(pictures.draw(game, s, None), pictures.draw(game, other, None))


@pytest.mark.parametrize("cls, n", [(MegaGem, 4), (Gem, 3), (GemJam, 3)], ids=["megagem", "gem", "gemjam"])
def test_frames_follow_the_state(cls, n):
    """Each decision that changes the text render of the seat that made it changes its picture too."""
    game = cls(num_players=n)
    rng = np.random.default_rng(3)
    s = game.new_state(3)
    start = pictures.draw(game, s, None)
    changed = 0
    for _ in range(30):
        p = game.to_act(s)[0]
        text, frame = game.render(s, p), pictures.draw(game, s, p)
        game.apply_legal(s, p, int(rng.choice(game.legal_actions(s, p))))
        if game.render(s, p) != text:
            assert not np.array_equal(pictures.draw(game, s, p), frame), "the text changed, the picture did not"
            changed += 1
    assert changed >= 5
    assert not np.array_equal(pictures.draw(game, s, None), start)


@pytest.mark.parametrize("cls", [MegaGem, Gem, GemJam], ids=["megagem", "gem", "gemjam"])
def test_env_render_rgb_array_aec_and_parallel(cls):
    module = MODULES[cls]
    n = cls.player_counts[0]
    for env in (module.raw_env(num_players=n, render_mode="rgb_array"),
                module.parallel_env(num_players=n, render_mode="rgb_array")):
        assert "rgb_array" in env.metadata["render_modes"] and env.metadata["render_fps"] > 0
        assert env.render().shape == (*SIZES[cls, n], 3)  # before reset: a placeholder of the same size
        env.reset(seed=5)
        frame = env.render()
        assert frame.shape == (*SIZES[cls, n], 3) and frame.dtype == np.uint8
    aec = module.raw_env(num_players=n, render_mode="rgb_array")
    aec.reset(seed=5)
    seat = aec.agent_name_mapping[aec.agent_selection]
    assert np.array_equal(aec.render(), pictures.draw(aec.game, aec.game_state, seat)), "the seat to act's view"
    assert np.array_equal(aec.render_view("player_0"), pictures.draw(aec.game, aec.game_state, 0))
    with pytest.raises(ValueError, match="no agent"):
        aec.render_view("player_9")


def test_single_learner_view_renders_the_learners_side():
    env = gymnasium.make("gemenvs/MegaGem-v0", num_players=3, opponents="random", learner_seat=1,
                         render_mode="rgb_array")
    assert env.metadata["render_fps"] > 0
    env.reset(seed=0)
    raw = env.unwrapped.raw
    assert np.array_equal(env.render(), pictures.draw(raw.game, raw.game_state, 1))
    mask = env.unwrapped.action_masks()
    env.step(int(np.flatnonzero(mask)[0]))
    assert np.array_equal(env.render(), pictures.draw(raw.game, raw.game_state, 1))
    env.close()


def test_gymnasium_records_an_episode_as_a_gif(tmp_path):
    """Gymnasium's RenderCollection (what RecordVideo builds on, without its moviepy) gathers a
    frame per step of a whole episode; the frames make a GIF."""
    env = gymnasium.wrappers.RenderCollection(gymnasium.make(
        "gemenvs/GEM-v0", num_players=2, opponents="random", render_mode="rgb_array"))
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    done, steps = False, 0
    while not done:
        _, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(env.unwrapped.action_masks()))))
        steps += 1
    frames = env.render()
    assert len(frames) == steps + 1 and all(f.shape == (*SIZES[Gem, 2], 3) for f in frames)
    path = pictures.write_animation(frames, tmp_path / "episode.gif", fps=env.metadata["render_fps"])
    with Image.open(path) as gif:
        assert gif.n_frames >= 2
    env.close()


def _short_log(game, seed: int, decisions: int) -> list[list[int]]:
    """The log of a seeded random game's first ``decisions`` non-forced decisions."""
    rng = np.random.default_rng(seed)
    s = game.new_state(seed)
    for _ in range(decisions):
        p = game.to_act(s)[0]
        game.apply_legal(s, p, int(rng.choice(game.legal_actions(s, p))))
    return [list(e) for e in s.log], s


def test_replay_frames_and_gif_round_trip(tmp_path):
    game = Gem(num_players=2)
    log, final = _short_log(game, 4, 8)
    frames = pictures.replay_frames(game, 4, log, viewer=0)
    assert len(frames) == 1 + sum(1 for e in log if not e[2])
    assert np.array_equal(frames[-1], pictures.draw(game, final, 0))
    path = pictures.write_animation(frames, tmp_path / "game.gif", fps=4)
    with Image.open(path) as gif:
        assert gif.format == "GIF" and gif.size == (SIZES[Gem, 2][1], SIZES[Gem, 2][0])
        assert gif.n_frames >= 2
        assert gif.info["duration"] % 250 == 0  # 4 fps (identical frames are merged)
    bad = [list(e) for e in log]
    bad[-1][1] = 10_000
    with pytest.raises(ValueError):
        pictures.replay_frames(game, 4, bad)


def test_write_animation_errors(tmp_path):
    frame = np.zeros((4, 6, 3), np.uint8)
    with pytest.raises(ValueError, match=".gif or .mp4"):
        pictures.write_animation([frame], tmp_path / "x.avi")
    with pytest.raises(ValueError, match="at least one frame"):
        pictures.write_animation([], tmp_path / "x.gif")
    with pytest.raises(ValueError, match="frame 1"):
        pictures.write_animation([frame, np.zeros((4, 7, 3), np.uint8)], tmp_path / "x.gif")
    try:
        import imageio_ffmpeg  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match="pip install imageio-ffmpeg"):
            pictures.write_animation([frame], tmp_path / "x.mp4")


def test_bad_viewer_and_unknown_game_are_errors():
    game = MegaGem(num_players=3)
    s = game.new_state(0)
    with pytest.raises(ValueError, match="viewer must be None or a seat in 0..2"):
        pictures.draw(game, s, 3)

    class Other:
        name = "chess"
        num_players = 2

    with pytest.raises(ValueError, match="no pictures for game 'chess'"):
        pictures.draw(Other(), None)


def test_engines_and_text_envs_never_import_pillow():
    import subprocess
    import sys

    code = ("import sys, gemenvs\n"
            "from gemenvs import megagem_v0, gem_v0, gemjam_v0\n"
            "for m in (megagem_v0, gem_v0, gemjam_v0):\n"
            "    e = m.env(render_mode='ansi'); e.reset(seed=0); e.render()\n"
            "assert not any(k == 'PIL' or k.startswith('PIL.') for k in sys.modules), 'PIL imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)
