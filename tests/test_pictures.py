"""Pictures of the games (gemenvs.pictures, render_mode="rgb_array"): the documented fixed size,
deterministic pixels, pictures that follow the state, nothing hidden shown (the picture of a
seat's view is unchanged when everything that seat cannot see is redrawn), the environments'
rgb_array render, replays written as GIFs ending on the final scores, the writer's account of
its frames, and progress bars on stderr only when asked or on a terminal."""
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
    assert not frames.score_frame, "an unfinished game has no final-score frame"
    path = pictures.write_animation(frames, tmp_path / "game.gif", fps=4)
    assert path.path == tmp_path / "game.gif" and str(path) == str(tmp_path / "game.gif")
    assert "no final-score frame: the game is unfinished" in path.summary()
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
            "for entry in gemenvs.entries():\n"
            "    e = entry.env_functions().env(render_mode='ansi'); e.reset(seed=0); e.render()\n"
            "assert not any(k == 'PIL' or k.startswith('PIL.') for k in sys.modules), 'PIL imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def _finished(cls, n: int, seed: int):
    """A seeded random game played to its end: (game, final state, its log)."""
    game = cls(num_players=n)
    rng = np.random.default_rng(seed)
    s = game.new_state(seed)
    while not game.is_over(s):
        p = game.to_act(s)[0]
        game.apply_legal(s, p, int(rng.choice(game.legal_actions(s, p))))
    return game, s, [list(e) for e in s.log]


@pytest.mark.parametrize("cls, n", [(MegaGem, 3), (Gem, 2), (GemJam, 2)], ids=["megagem", "gem", "gemjam"])
def test_a_finished_replay_ends_on_the_final_score_breakdown(cls, n):
    """The last frame of a finished game is its final scores over the last table: one row per player
    whose parts are game.results' breakdown and add up to the score, the winners lit."""
    game, final, log = _finished(cls, n, 11)
    frames = pictures.replay_frames(game, final.seed, log, viewer=0, progress=False)
    choices = sum(1 for e in log if not e[2])
    assert len(frames) == 1 + choices + 1 and frames.score_frame
    assert (frames.choices, frames.forced, frames.decisions) == (choices, len(log) - choices, len(log))
    assert np.array_equal(frames[-2], pictures.draw(game, final, 0)), "the frame before: the last table"
    assert np.array_equal(frames[-1], pictures.score_frame(game, final, 0))
    assert not np.array_equal(frames[-1], frames[-2]) and frames[-1].shape == frames[-2].shape
    without = pictures.replay_frames(game, final.seed, log, viewer=0, final_scores=False, progress=False)
    assert len(without) == len(frames) - 1 and not without.score_frame
    module = pictures._module(game)
    table = module.scores(game, final)
    res = game.results(final)
    assert table.winners == res.winners and len(table.rows) == n
    for p, row in enumerate(table.rows):
        assert row[0] == f"player_{p}" and float(row[-1]) == res.scores[p]
        b = res.breakdown[p]
        if cls is MegaGem:  # coins, gems, missions, investments, loans: the row adds up to the score
            assert [int(x) for x in row[1:-1]] == [b[k] for k in ("coins", "gems", "missions", "investments",
                                                                    "loans")]
            assert sum(int(x) for x in row[1:-1]) == b["total"]
        elif cls is Gem:  # gems, a majority per type, majorities, points
            types = game.cfg.manifest.gem_types
            assert int(row[1]) == b["gems"] and int(row[-2]) == b["majorities"]
            assert [0 if x == "-" else int(x) for x in row[2:2 + len(types)]] == [b[f"majority_{t}"] for t in types]
            assert b["gems"] + b["majorities"] == b["total"]
        else:  # sets in the Shrine, incomplete, completed = score
            assert int(row[-1]) == b["completed_sets"] and int(row[1]) - int(row[2]) == int(row[-1])
    with pytest.raises(ValueError, match="finished game"):
        pictures.score_frame(game, game.new_state(1))


@pytest.mark.parametrize("cls, n", [(MegaGem, 4), (GemJam, 3)], ids=["megagem", "gemjam"])
def test_the_final_score_frame_shows_nothing_hidden(cls, n):
    game, final, _ = _finished(cls, n, 5)
    rng = np.random.default_rng(0)
    for p in range(n):
        other = game.resample_hidden(final, p, rng)
        assert np.array_equal(pictures.score_frame(game, final, p), pictures.score_frame(game, other, p))


def test_the_writer_says_how_many_frames_it_wrote_and_why(tmp_path):
    game, final, log = _finished(Gem, 2, 3)
    frames = pictures.replay_frames(game, final.seed, log, progress=False)
    choices, forced = frames.choices, frames.forced
    assert forced > 0, "GEM plays forced decisions (a pass with no coin to bid, ...)"
    out = pictures.write_animation(frames, tmp_path / "game.gif", fps=2, progress=False)
    with Image.open(out) as gif:
        assert out.frames == gif.n_frames and out.given == len(frames) == 1 + choices + 1
        gif.seek(gif.n_frames - 1)
        assert gif.info["duration"] == round(1000 * pictures.SCORE_HOLD_SECONDS), "the final scores stay longer"
    assert out.frames == out.given - out.merged
    line = out.summary()
    assert line.startswith(f"wrote {tmp_path / 'game.gif'}: {out.frames} frames (1 start + {choices} decisions "
                           f"with a choice + 1 final-score frame")
    assert f"; {forced} forced decisions drawn with the step before)" in line and "\n" not in line
    # a GIF holds a frame that repeats the one before as that frame held longer: the writer counts it
    a, b = np.zeros((8, 8, 3), np.uint8), np.full((8, 8, 3), 200, np.uint8)
    merged = pictures.write_animation([a, a, b], tmp_path / "merged.gif", progress=False)
    assert (merged.frames, merged.given, merged.merged) == (2, 3, 1)
    assert merged.summary() == (f"wrote {tmp_path / 'merged.gif'}: 2 frames (3 frames given - 1 unchanged frame "
                                f"merged into the one before)")


class _Terminal:
    """A stand-in stderr that says it is a terminal."""

    def __init__(self):
        self.parts = []

    def write(self, text):
        self.parts.append(text)

    def flush(self):
        pass

    def isatty(self):
        return True


def test_progress_bars_go_to_stderr_when_asked_or_on_a_terminal(tmp_path, capsys, monkeypatch):
    game = Gem(num_players=2)
    log, _ = _short_log(game, 2, 6)
    frames = pictures.replay_frames(game, 2, log)  # None: stderr is not a terminal here, so no bar
    pictures.write_animation(frames, tmp_path / "quiet.gif")
    pictures.replay_frames(game, 2, log, progress=False)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""
    pictures.write_animation(pictures.replay_frames(game, 2, log, progress=True), tmp_path / "a.gif", progress=True)
    captured = capsys.readouterr()
    assert "drawing frames" in captured.err and "writing a.gif" in captured.err and f"{len(frames)}/{len(frames)}" \
        in captured.err and captured.out == ""
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    pictures.replay_frames(game, 2, log)
    assert "drawing frames" in "".join(terminal.parts), "None shows the bar on a terminal"
