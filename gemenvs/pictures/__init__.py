"""Pictures of the suite's games: a state as an RGB image, a saved game as an animation.

* :func:`draw` (``game, state, viewer=None``) gives an (H, W, 3) uint8 array: the table as the
  seat ``viewer`` sees it (``None``: what the game's text render shows without a viewer). It
  shows exactly the information of the game's text render for that viewer, never more. The
  size is fixed per game and player count (:func:`frame_size`, ``docs/pictures.md``).
* :func:`score_frame` draws a finished game's final scores and what each is made of over its
  last table.
* :func:`replay_frames` replays a decision log with the core and draws a frame after each
  decision, then the final scores; :func:`write_animation` writes frames as a GIF (Pillow) or an
  MP4 (imageio-ffmpeg) and says how many frames it wrote and why (:class:`Animation`).
* The environments' ``render_mode="rgb_array"`` draws with the same painter.

A game's painter is the module its entry names (``GameEntry.painter``: ``size(game)``,
``draw(game, state, viewer)`` giving a :class:`~gemenvs.pictures.canvas.Canvas`, ``scores(game,
state)`` giving a :class:`~gemenvs.pictures.canvas.ScoreTable`); a game without one is drawn by
:mod:`gemenvs.pictures.text`, its text render in monospace.

Pillow is imported here and by the environments' render path only when a picture is asked
for: the engines never import it. Long replays and writes show a tqdm bar on stderr
(``progress``: True shows it, False hides it, None shows it when stderr is a terminal).
"""
from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

import numpy as np

#: seconds a GIF shows its final-score frame (a GIF loops; an MP4 ends on that frame)
SCORE_HOLD_SECONDS = 3.0


def _require_pillow() -> None:
    """Raise an ImportError saying what to install when Pillow is missing."""
    try:
        import PIL  # noqa: F401
    except ImportError:
        raise ImportError("pictures (render_mode='rgb_array', GIF replays) need Pillow: pip install pillow") from None


def _module(game):
    """The painter of ``game`` (its entry's); a game without a registered entry is a ValueError naming the known games."""
    from gemenvs.core.entry import entries, entry_of

    try:
        found = entry_of(game)
    except ValueError:
        known = ", ".join(e.name for e in entries())
        raise ValueError(f"no pictures for game {getattr(game, 'name', None)!r}: it has no registered entry "
                         f"(known games: {known})") from None
    _require_pillow()
    return found.load_painter()


def _check_viewer(game, viewer) -> int | None:
    """``viewer`` as a seat of ``game`` or None; anything else is a ValueError naming it."""
    if viewer is None:
        return None
    if isinstance(viewer, (bool, np.bool_)) or not isinstance(viewer, (int, np.integer)) \
            or not 0 <= viewer < game.num_players:
        raise ValueError(f"viewer must be None or a seat in 0..{game.num_players - 1}; got {viewer!r}")
    return int(viewer)


def frame_size(game) -> tuple[int, int]:
    """(height, width) of every picture of ``game`` (fixed by the game and its player count)."""
    return _module(game).size(game)


def draw(game, state, viewer: int | None = None) -> np.ndarray:
    """The table of ``state`` as seat ``viewer`` sees it (None: the game's viewer-less text
    render's information), as an (H, W, 3) uint8 array of :func:`frame_size`."""
    viewer = _check_viewer(game, viewer)
    return _module(game).draw(game, state, viewer).array()


def score_frame(game, state, viewer: int | None = None) -> np.ndarray:
    """The final scores of a finished game over its last table (dimmed) as ``viewer`` sees it: a
    row per player with its score and the parts it is made of (``game.results(state)``, the
    environments' ``info["score_breakdown"]``), the winners lit, and how a score is made. An
    unfinished game is a ValueError."""
    viewer = _check_viewer(game, viewer)
    module = _module(game)
    if not game.is_over(state):
        raise ValueError("score_frame needs a finished game")
    return _score_frame(game, module, state, viewer)


def _score_frame(game, module, state, viewer: int | None) -> np.ndarray:
    """:func:`score_frame` with checked arguments."""
    c = module.draw(game, state, viewer)
    c.dim()
    table = module.scores(game, state)
    if viewer is not None:
        table.rows[viewer][0] += " (you)"
    names = ", ".join(f"player_{w}" for w in table.winners) or "nobody"
    c.score_board(f"Final scores - {'winners' if len(table.winners) > 1 else 'winner'}: {names}", table)
    return c.array()


def placeholder(game, message: str) -> np.ndarray:
    """A frame of ``game``'s size holding only ``message`` (e.g. before the first reset)."""
    from gemenvs.pictures.text import notice

    return notice(frame_size(game), game, message)


def replay_states(game, seed: int, log: Sequence[Sequence[int]]) -> Iterable:
    """The states of a replayed game: ``game.new_state(seed)`` (its forced decisions played),
    then the state after each non-forced entry of ``log`` (``[seat, action, forced]``) and the
    forced decisions the engine plays after it (the replay of ``gemenvs.core.replay.replay_game``).
    Each state is yielded before the next decision is applied (copy it to keep it). A log that
    the replay does not reproduce raises ValueError naming the entry; an unfinished game is fine."""
    state = game.new_state(seed)
    yield state
    for k, entry in enumerate(log):
        if not (isinstance(entry, Sequence) and len(entry) == 3):
            raise ValueError(f"log[{k}] is {entry!r}, not [seat, action, forced]")
        p, a, forced = (int(x) for x in entry)
        if k < len(state.log):  # a forced decision the engine has already played
            if list(state.log[k]) != [p, a, forced]:
                raise ValueError(f"log[{k}] is {[p, a, forced]} but the replay has {state.log[k]}")
            continue
        if forced:
            raise ValueError(f"log[{k}] is marked forced, but the replay offers a choice there")
        game.apply(state, p, a)
        yield state
    if len(state.log) != len(log):
        raise ValueError(f"the replay logged {len(state.log)} decisions, the log has {len(log)}")


class ReplayFrames(list):
    """The frames of a replayed game (a list of (H, W, 3) uint8 arrays) and what they show:
    ``choices`` decisions with a choice (a frame each, after the start), ``forced`` decisions the
    engine played (drawn in the frame of the step before them, not frames of their own), and
    whether the last frame is the final scores (``score_frame``)."""

    def __init__(self, frames: Iterable[np.ndarray] = (), choices: int = 0, forced: int = 0,
                 score_frame: bool = False):
        super().__init__(frames)
        self.choices, self.forced, self.score_frame = choices, forced, score_frame

    @property
    def decisions(self) -> int:
        """Every decision of the replayed log, forced ones included."""
        return self.choices + self.forced

    def parts(self) -> str:
        """What the frames are, as a sum: ``1 start + 54 decisions with a choice + 1 final-score frame``."""
        return f"1 start + {_count(self.choices, 'decision')} with a choice" + (
            " + 1 final-score frame" if self.score_frame else "")

    def forced_note(self) -> str:
        """How the forced decisions are drawn ("" when there are none)."""
        return f"{_count(self.forced, 'forced decision')} drawn with the step before" if self.forced else ""


def replay_frames(game, seed: int, log: Sequence[Sequence[int]], viewer: int | None = None,
                  final_scores: bool = True, progress: bool | None = None) -> ReplayFrames:
    """The frames of a saved game: the start (after setup and its forced decisions), the table
    after each non-forced decision of ``log`` with the forced ones that follow it (the frames an
    env's ``rgb_array`` render gives step by step), and, when the game is finished and
    ``final_scores``, :func:`score_frame` last: 1 + the non-forced entries, one more for a finished
    game (:class:`ReplayFrames` counts them). ``viewer`` as in :func:`draw`; ``progress``: a bar
    over the frames (see the module docstring)."""
    viewer = _check_viewer(game, viewer)
    module = _module(game)
    choices = sum(1 for entry in log if isinstance(entry, Sequence) and len(entry) == 3 and not entry[2])
    frames = ReplayFrames(forced=len(log) - choices)
    with _bar(progress, 1 + choices, "drawing frames", "frame") as bar:
        state = None
        for state in replay_states(game, seed, log):
            frames.append(module.draw(game, state, viewer).array())
            bar.update(1)
        frames.choices = len(frames) - 1
        if final_scores and game.is_over(state):
            bar.total += 1
            frames.append(_score_frame(game, module, state, viewer))
            frames.score_frame = True
            bar.update(1)
    return frames


@dataclass(frozen=True)
class Animation:
    """What :func:`write_animation` wrote: the file, the frames in it, the frames it was given, and
    the replay those came from (None for other frames). A GIF holds a frame that repeats the one
    before it as that frame shown longer, so it may have fewer frames than it was given. Usable as
    the path (``os.PathLike``, ``str``)."""

    path: Path
    frames: int
    given: int
    replay: ReplayFrames | None = field(default=None, repr=False, compare=False)

    @property
    def merged(self) -> int:
        """Frames given that repeat the one before and are shown as that frame held longer."""
        return self.given - self.frames

    def __fspath__(self) -> str:
        return str(self.path)

    def __str__(self) -> str:
        return str(self.path)

    def summary(self) -> str:
        """One line: the file, its frames, and how they follow from the decisions of the game, e.g.
        ``wrote game.gif: 57 frames (1 start + 55 decisions with a choice + 1 final-score frame; 3
        forced decisions drawn with the step before)``."""
        if self.replay is None:
            parts, notes = _count(self.given, "frame") + " given", []
        else:
            parts = self.replay.parts()
            notes = [self.replay.forced_note()]
            if not self.replay.score_frame:
                notes.append("no final-score frame: the game is unfinished")
        if self.merged:
            parts += f" - {_count(self.merged, 'unchanged frame')} merged into the one before"
        tail = "".join(f"; {n}" for n in notes if n)
        return f"wrote {self.path}: {_count(self.frames, 'frame')} ({parts}{tail})"


def _count(n: int, thing: str) -> str:
    """``1 frame``, ``3 frames``."""
    return f"{n} {thing}{'s' * (n != 1)}"


def write_animation(frames: Sequence[np.ndarray], path: str | PathLike, fps: float = 2.0,
                    progress: bool | None = None) -> Animation:
    """Write ``frames`` ((H, W, 3) uint8 arrays of one size) as an animation at ``path``: ``.gif``
    with Pillow, ``.mp4`` with imageio-ffmpeg (a RuntimeError says what to install when it is
    missing). A GIF shows a final-score frame of :func:`replay_frames` for
    :data:`SCORE_HOLD_SECONDS`. Returns an :class:`Animation` (its ``summary()`` is one line for
    the user); ``progress``: a bar over the frames (see the module docstring). The file is written all or
    nothing, never through a symbolic link, and over an existing file only when that is an animation of the
    same kind (else :class:`gemenvs.files.WriteRefused`, one line)."""
    import io

    from gemenvs.files import WriteRefused, existing_head, user_folder, write_file

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".gif", ".mp4"):
        raise ValueError(f"write_animation writes .gif or .mp4 files, not {path.name!r}")
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not 0 < fps <= 60:
        raise ValueError(f"fps must be a number in (0, 60]; got {fps!r}")
    replay = frames if isinstance(frames, ReplayFrames) else None
    frames = list(frames)
    if not frames:
        raise ValueError("write_animation needs at least one frame")
    shape = frames[0].shape
    for k, f in enumerate(frames):
        if not isinstance(f, np.ndarray) or f.dtype != np.uint8 or f.ndim != 3 or f.shape[2] != 3 or f.shape != shape:
            raise ValueError(f"frame {k} is not an (H, W, 3) uint8 array of the first frame's shape {shape}")
    folder = user_folder(path)
    head = existing_head(folder, path.name, 12)
    if head is not None and not (head.startswith(b"GIF8") if suffix == ".gif" else head[4:8] == b"ftyp"):
        kind = "a GIF" if suffix == ".gif" else "an MP4"
        raise WriteRefused(f"{path} exists and is not {kind} file; refusing to overwrite it")
    if suffix == ".gif":
        _require_pillow()
        from PIL import Image

        # one 256-colour palette for every frame, taken from up to 8 frames spread over the game
        # (pictures use few colours): faster and smaller than a palette per frame
        sample = np.concatenate(frames[::max(1, len(frames) // 8)][:8], axis=0)
        palette = Image.fromarray(sample, "RGB").quantize(256, method=Image.Quantize.FASTOCTREE,
                                                          dither=Image.Dither.NONE)
        step = round(1000 / fps)
        durations = [step] * len(frames)
        if replay is not None and replay.score_frame:
            durations[-1] = max(step, round(1000 * SCORE_HOLD_SECONDS))
        def image(f: np.ndarray):
            return Image.fromarray(f, "RGB").quantize(palette=palette, dither=Image.Dither.NONE)

        with _bar(progress, len(frames), f"writing {path.name}", "frame") as bar:
            def rest() -> Iterator:
                for f in frames[1:]:  # Pillow takes the frames one by one, then encodes them all
                    bar.update(1)
                    yield image(f)
                bar.update(1)
                bar.set_description(f"encoding {path.name}")

            buffer = io.BytesIO()
            image(frames[0]).save(buffer, format="GIF", save_all=True, append_images=rest(), duration=durations,
                                  loop=0)
        with Image.open(buffer) as gif:
            written = gif.n_frames
        write_file(folder, path.name, buffer.getvalue())
        return Animation(path, written, len(frames), replay)
    try:
        import imageio_ffmpeg
    except ImportError:
        raise RuntimeError("writing .mp4 needs imageio-ffmpeg: pip install imageio-ffmpeg (or write a .gif)") from None
    height, width = shape[:2]
    # yuv420p needs even sides: pad by one black row/column when odd
    even_h, even_w = height + height % 2, width + width % 2
    import shutil
    import tempfile

    scratch = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=folder))  # (ffmpeg writes there; private, 0700)
    try:
        movie = scratch / "movie.mp4"
        writer = imageio_ffmpeg.write_frames(str(movie), (even_w, even_h), fps=fps, macro_block_size=1,
                                             pix_fmt_out="yuv420p")
        writer.send(None)
        with _bar(progress, len(frames), f"writing {path.name}", "frame") as bar:
            for f in frames:
                if (even_h, even_w) != (height, width):
                    f = np.pad(f, ((0, even_h - height), (0, even_w - width), (0, 0)))
                writer.send(np.ascontiguousarray(f))
                bar.update(1)
        writer.close()
        write_file(folder, path.name, movie.read_bytes())
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return Animation(path, len(frames), len(frames), replay)


def _bar(progress: bool | None, total: int, desc: str, unit: str):
    """A tqdm bar on stderr, cleared when done: shown for ``progress`` True, hidden for False, and for
    None shown only when stderr is a terminal (tqdm's ``disable=None``)."""
    if progress is False:
        return _NoBar(total)
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False, dynamic_ncols=True,
                disable=None if progress is None else not progress)


class _NoBar:
    """The bar of ``progress=False``: counts, shows nothing (tqdm need not be installed)."""

    def __init__(self, total: int):
        self.total, self.n = total, 0

    def __enter__(self) -> "_NoBar":
        return self

    def __exit__(self, *exc) -> None:
        return None

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_description(self, desc: str) -> None:
        return None


__all__ = ["SCORE_HOLD_SECONDS", "Animation", "ReplayFrames", "draw", "frame_size", "placeholder",
           "replay_frames", "replay_states", "score_frame", "write_animation"]
