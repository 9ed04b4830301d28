"""Pictures of the suite's games: a state as an RGB image, a saved game as an animation.

* :func:`draw` (``game, state, viewer=None``) gives an (H, W, 3) uint8 array: the table as the
  seat ``viewer`` sees it (``None``: what the game's text render shows without a viewer). It
  shows exactly the information of the game's text render for that viewer, never more. The
  size is fixed per game and player count (:func:`frame_size`, ``docs/pictures.md``).
* :func:`replay_frames` replays a decision log with the core and draws a frame after each
  decision; :func:`write_animation` writes frames as a GIF (Pillow) or an MP4 (imageio-ffmpeg).
* The environments' ``render_mode="rgb_array"`` draws through :func:`draw`.

Pillow is imported here and by the environments' render path only when a picture is asked
for: the engines never import it.
"""
from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from os import PathLike
from pathlib import Path

import numpy as np

#: game name (``Game.name``) -> module drawing that game's pictures
GAME_MODULES = {
    "megagem": "gemenvs.pictures.megagem",
    "gem": "gemenvs.pictures.gem",
    "gemjam": "gemenvs.pictures.gemjam",
}


def _require_pillow() -> None:
    """Raise an ImportError saying what to install when Pillow is missing."""
    try:
        import PIL  # noqa: F401
    except ImportError:
        raise ImportError("pictures (render_mode='rgb_array', GIF replays) need Pillow: pip install pillow") from None


def _module(game):
    """The picture module of ``game``; a game without one is a ValueError naming those with one."""
    name = getattr(game, "name", None)
    if name not in GAME_MODULES:
        raise ValueError(f"no pictures for game {name!r}; pictures exist for {', '.join(GAME_MODULES)}")
    _require_pillow()
    return importlib.import_module(GAME_MODULES[name])


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


def placeholder(game, message: str) -> np.ndarray:
    """A frame of ``game``'s size holding only ``message`` (e.g. before the first reset)."""
    from gemenvs.pictures.canvas import Canvas

    height, width = frame_size(game)
    c = Canvas(width, height)
    c.header(f"{game.name}: {message}")
    return c.array()


def replay_states(game, seed: int, log: Sequence[Sequence[int]]) -> Iterable:
    """The states of a replayed game: ``game.new_state(seed)`` (its forced decisions played),
    then the state after each non-forced entry of ``log`` (``[seat, action, forced]``) and the
    forced decisions the engine plays after it (the replay of ``gemenvs.agents.match.replay_game``).
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


def replay_frames(game, seed: int, log: Sequence[Sequence[int]], viewer: int | None = None) -> list[np.ndarray]:
    """One frame per decision of a saved game: the start (after setup and its forced decisions),
    then the table after each non-forced decision of ``log`` with the forced ones that follow it
    (so ``1 +`` the number of non-forced entries; the frames an env's ``rgb_array`` render gives
    step by step). ``viewer`` as in :func:`draw`."""
    viewer = _check_viewer(game, viewer)
    module = _module(game)
    return [module.draw(game, state, viewer).array() for state in replay_states(game, seed, log)]


def write_animation(frames: Sequence[np.ndarray], path: str | PathLike, fps: float = 2.0) -> Path:
    """Write ``frames`` ((H, W, 3) uint8 arrays of one size) as an animation at ``path``: ``.gif``
    with Pillow, ``.mp4`` with imageio-ffmpeg (a RuntimeError says what to install when it is
    missing). Returns the path."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".gif", ".mp4"):
        raise ValueError(f"write_animation writes .gif or .mp4 files, not {path.name!r}")
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not 0 < fps <= 60:
        raise ValueError(f"fps must be a number in (0, 60]; got {fps!r}")
    frames = list(frames)
    if not frames:
        raise ValueError("write_animation needs at least one frame")
    shape = frames[0].shape
    for k, f in enumerate(frames):
        if not isinstance(f, np.ndarray) or f.dtype != np.uint8 or f.ndim != 3 or f.shape[2] != 3 or f.shape != shape:
            raise ValueError(f"frame {k} is not an (H, W, 3) uint8 array of the first frame's shape {shape}")
    if suffix == ".gif":
        _require_pillow()
        from PIL import Image

        # one 256-colour palette for every frame, taken from up to 8 frames spread over the game
        # (pictures use few colours): ten times faster and smaller than a palette per frame
        sample = np.concatenate(frames[::max(1, len(frames) // 8)][:8], axis=0)
        palette = Image.fromarray(sample, "RGB").quantize(256, method=Image.Quantize.FASTOCTREE,
                                                          dither=Image.Dither.NONE)
        images = [Image.fromarray(f, "RGB").quantize(palette=palette, dither=Image.Dither.NONE) for f in frames]
        images[0].save(path, save_all=True, append_images=images[1:], duration=round(1000 / fps), loop=0)
        return path
    try:
        import imageio_ffmpeg
    except ImportError:
        raise RuntimeError("writing .mp4 needs imageio-ffmpeg: pip install imageio-ffmpeg (or write a .gif)") from None
    height, width = shape[:2]
    # yuv420p needs even sides: pad by one black row/column when odd
    even_h, even_w = height + height % 2, width + width % 2
    writer = imageio_ffmpeg.write_frames(str(path), (even_w, even_h), fps=fps, macro_block_size=1,
                                         pix_fmt_out="yuv420p")
    writer.send(None)
    for f in frames:
        if (even_h, even_w) != (height, width):
            f = np.pad(f, ((0, even_h - height), (0, even_w - width), (0, 0)))
        writer.send(np.ascontiguousarray(f))
    writer.close()
    return path


__all__ = ["GAME_MODULES", "draw", "frame_size", "placeholder", "replay_frames", "replay_states", "write_animation"]
