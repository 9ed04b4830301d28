"""Saved games: one finished game as JSON lines (header, one line per decision, result).

A saved game holds what it takes to replay a game exactly, and nothing that could run code::

    {"format": "gemenvs-game", "version": 1, "env": "megagem_v0", "options": {...}, "seed": 7, "players": ["you", "heuristic", "heuristic"]}
    [0, 12, 0]
    [1, 9, 0]
    ...
    {"result": {"scores": [41.0, 55.0, 38.0], "winners": [1]}}

Line 1 is the header: the environment name (a registered game's ``GameEntry.env_name``), the
game's options (``game.options()``), the seed of ``game.new_state`` and a name per seat. Then
one line per entry of the core's decision log, ``[seat, action, forced]`` (forced decisions
included, as the engine logged them), and last the final scores and winners.

:func:`load_game` is strict: it reads JSON only, checks every field, builds the game from its
options and replays the log with the engine's legality checks, so a file that is not JSON, of
another format or version, names an unknown environment, holds an illegal or misplaced
decision, stops before the game ends or states another result is a :class:`RecordingError`
whose one-line message names the file and the line. A custom card manifest is saved inline,
never as a path, so that reading a saved game opens no other file.

Reading is bounded (:mod:`gemenvs.files`): only a regular file is opened (a FIFO or a device is
refused at once, never waited on), it is read one line at a time and replayed as it is read, and
it stops at the first line past :data:`MAX_LINE_BYTES`, :data:`MAX_GAME_LINES` or
:data:`MAX_GAME_BYTES`, nested deeper than :data:`MAX_JSON_DEPTH`, or that does not replay.
"""
from __future__ import annotations

import io
import json
import os
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gemenvs.core.engine import Game, StateError, as_action_id, check_json, check_seed
from gemenvs.files import FileProblem, iter_lines, loads_json

#: the ``format`` field of every saved game
FORMAT = "gemenvs-game"
#: the version of the format this module writes and reads
VERSION = 1
HEADER_KEYS = ("format", "version", "env", "options", "seed", "players")

# The caps of a saved game (load_game, parse_game). The longest games of the suite log about 1,000
# decisions (Gem Jam, 4 players; MegaGem and GEM games fewer than 200), each line about 12 bytes;
# the header holds the options, an inline card manifest included (the stock Gem Jam one: 7 KB).
#: the longest line (in UTF-8 bytes, the line break not counted)
MAX_LINE_BYTES = 2**20
#: the most lines of a saved game, blank lines included (20 times the longest games)
MAX_GAME_LINES = 20_000
#: the largest saved game, in bytes
MAX_GAME_BYTES = 16 * 2**20
#: the deepest JSON nesting of a line (a header with an inline manifest nests 6 levels)
MAX_JSON_DEPTH = 16


class RecordingError(ValueError):
    """A saved game that cannot be read or replayed; the one-line message names the file and line."""


def env_names() -> list[str]:
    """The environment name (``"megagem_v0"``) of every registered game."""
    from gemenvs.core.entry import entries

    return [e.env_name for e in entries()]


def game_class(env_name: str) -> type[Game]:
    """The engine class of environment ``env_name``, a registered game's (nothing is imported)."""
    from gemenvs.core.entry import entries

    for e in entries():
        if e.env_name == env_name:
            return e.game_class
    raise ValueError(f"unknown env {env_name!r}; known: {', '.join(sorted(env_names()))}")


def env_name_of(game: Game) -> str:
    """The environment name of a game object (``"gemjam_v0"`` for a :class:`GemJam`)."""
    from gemenvs.core.entry import entry_of

    try:
        return entry_of(game).env_name
    except ValueError:
        raise ValueError(f"{type(game).__name__} is not a registered game") from None


def _plain(value: Any) -> Any:
    """``value`` as plain JSON data: numpy scalars to Python ones, tuples to lists."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def saved_options(game: Game) -> dict:
    """``game.options()`` as JSON data, a manifest read from a path stored inline."""
    options = _plain(dict(game.options()))
    manifest = options.get("manifest")
    if isinstance(manifest, (str, os.PathLike)):
        with open(manifest, encoding="utf-8") as f:
            options["manifest"] = json.load(f)
    try:
        check_json(options, "options")
    except StateError as e:
        raise ValueError(f"the game's options cannot be saved: {e}") from None
    return options


def game_lines(game: Game, state, env_name: str | None = None, players: Sequence[str] | None = None) -> list[str]:
    """The lines of the saved game of a finished ``state`` of ``game`` (see the module docstring)."""
    if not game.is_over(state):
        raise ValueError("only a finished game can be saved (this one is not over)")
    n = game.num_players
    players = ["unknown"] * n if players is None else [str(p) for p in players]
    if len(players) != n:
        raise ValueError(f"{len(players)} player names for {n} seats")
    env_name = env_name_of(game) if env_name is None else env_name
    if not isinstance(game, game_class(env_name)):
        raise ValueError(f"env {env_name!r} does not play {type(game).__name__}")
    header = {"format": FORMAT, "version": VERSION, "env": env_name, "options": saved_options(game),
              "seed": int(state.to_dict()["seed"]), "players": players}
    res = game.results(state)
    result = {"result": {"scores": _plain(list(res.scores)), "winners": [int(w) for w in res.winners]}}
    lines = [json.dumps(header, allow_nan=False)]
    lines += [json.dumps([int(p), int(a), int(f)]) for p, a, f in state.log]
    lines.append(json.dumps(result, allow_nan=False))
    return lines


def save_game(path: str | os.PathLike, game: Game, state, env_name: str | None = None,
              players: Sequence[str] | None = None) -> Path:
    """Write the finished ``state`` of ``game`` to ``path`` as a saved game and return the path.

    ``env_name`` defaults to the game's environment (``"megagem_v0"``...); ``players`` names the
    agent of every seat (default ``"unknown"``). The file is written all or nothing and never through a
    symbolic link; an existing file is replaced only when it is a saved game too (else
    :class:`gemenvs.files.WriteRefused`, one line).
    """
    from gemenvs.files import WriteRefused, existing_head, user_folder, write_file

    text = "\n".join(game_lines(game, state, env_name, players)) + "\n"
    path = Path(path)
    folder = user_folder(path)
    head = existing_head(folder, path.name, 64)
    if head is not None and not head.startswith(_SAVED_GAME_START):
        raise WriteRefused(f"{path} exists and is not a saved game; refusing to overwrite it")
    write_file(folder, path.name, text)
    return path


#: how every saved game's file begins (the header's first key, as :func:`game_lines` writes it)
_SAVED_GAME_START = json.dumps({"format": FORMAT})[:-1].encode()


@dataclass
class SavedGame:
    """A saved game as read by :func:`load_game` (already checked by a full replay)."""

    env: str
    options: dict
    seed: int
    log: list[list[int]]
    players: list[str]
    result: dict

    @property
    def num_players(self) -> int:
        """Number of seats."""
        return len(self.players)

    def game(self) -> Game:
        """A new engine of this game, built with the saved options."""
        return game_class(self.env)(**self.options)

    def replay(self, game: Game | None = None):
        """The final state, replayed by :func:`gemenvs.core.replay.replay_game`."""
        from gemenvs.core.replay import replay_game

        return replay_game(game or self.game(), self.seed, self.log)

    def states(self, game: Game | None = None) -> Iterator:
        """Yield a copy of the state after each entry of the log (forced decisions included), in
        order; the state before the first entry is ``game.initial_state(seed)``."""
        game = game or self.game()
        state = game.initial_state(self.seed)
        for k, (p, a, forced) in enumerate(self.log):
            reason = game.why_illegal(state, p, a)
            if reason is not None or (forced and game.forced_action(state, p) != a):
                raise RecordingError(f"log entry {k} ({p}, {a}, {forced}) does not replay: {reason or 'not forced'}")
            # the engine's order (Game.apply_legal): the entry is logged, then played
            state.log.append([p, a, forced])
            game.play(state, p, a)
            yield state.copy()


def _fail(source: str, line: int | None, message: str) -> RecordingError:
    """A RecordingError naming the file and the line (1-based), on one line."""
    where = f"{source}: line {line}: " if line is not None else f"{source}: "
    return RecordingError(where + " ".join(str(message).split()))


def _parse_header(header: Any, source: str) -> tuple[Game, dict]:
    """Check line 1 and build its game; return the game and the header."""
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise _fail(source, 1, f"not a saved gemenvs game (line 1 must be a header with \"format\": \"{FORMAT}\")")
    version = header.get("version")
    if version != VERSION or isinstance(version, bool):
        raise _fail(source, 1, f"format version {version!r} is not supported (this gemenvs reads version {VERSION})")
    missing = [k for k in HEADER_KEYS if k not in header]
    unknown = sorted(set(header) - set(HEADER_KEYS))
    if missing or unknown:
        raise _fail(source, 1, f"header keys differ: missing {missing}, unknown {unknown}")
    env = header["env"]
    known = env_names()
    if not isinstance(env, str) or env not in known:
        raise _fail(source, 1, f"unknown env {env!r}; known: {', '.join(sorted(known))}")
    options = header["options"]
    if not isinstance(options, dict):
        raise _fail(source, 1, "options must be an object")
    if isinstance(options.get("manifest"), str):
        raise _fail(source, 1, "options.manifest must be inline (an object), not a path")
    try:
        seed = check_seed(header["seed"])
    except ValueError as e:
        raise _fail(source, 1, str(e)) from None
    if seed is None:
        raise _fail(source, 1, "seed must be an integer")
    try:
        game = game_class(env)(**options)
    except (TypeError, ValueError) as e:
        raise _fail(source, 1, f"options: {e}") from None
    players = header["players"]
    if not (isinstance(players, list) and all(isinstance(p, str) for p in players)):
        raise _fail(source, 1, "players must be a list of names")
    for seat, name in enumerate(players):
        bad = next((c for c in name if unicodedata.category(c) in ("Cc", "Cs")), None)
        if bad is not None:
            what = "a lone surrogate" if unicodedata.category(bad) == "Cs" else "a control character"
            raise _fail(source, 1, f"the name of seat {seat} holds {what} ({bad!r}); names are printed, so they "
                                  f"must be printable text")
    if len(players) != game.num_players:
        raise _fail(source, 1, f"{len(players)} player names for a {game.num_players}-player game")
    return game, header


def _parse_entry(entry: Any, source: str, line: int, game: Game) -> list[int]:
    """Check one log line: ``[seat, action, forced]`` of plain integers."""
    if not (isinstance(entry, list) and len(entry) == 3 and all(as_action_id(x) is not None and not isinstance(x, float)
                                                                 for x in entry)):
        raise _fail(source, line, f"expected a decision [seat, action, forced], got {_short(entry)}")
    p, a, forced = entry
    if forced not in (0, 1):
        raise _fail(source, line, f"forced must be 0 or 1, got {_short(forced)}")
    if not 0 <= p < game.num_players:
        raise _fail(source, line, f"no seat {_short(p)} in a {game.num_players}-player game")
    if not 0 <= a < game.num_actions:
        raise _fail(source, line, f"action {_short(a)} is outside 0..{game.num_actions - 1}")
    return [p, a, forced]


def _parse_result(last: Any, source: str, line: int, game: Game) -> dict:
    """Check the last line: ``{"result": {"scores": [...], "winners": [...]}}``."""
    n = game.num_players
    if not (isinstance(last, dict) and set(last) == {"result"} and isinstance(last["result"], dict)
            and set(last["result"]) == {"scores", "winners"}):
        raise _fail(source, line, "the last line must be {\"result\": {\"scores\": [...], \"winners\": [...]}}")
    scores, winners = last["result"]["scores"], last["result"]["winners"]
    if not (isinstance(scores, list) and len(scores) == n
            and all(isinstance(s, (int, float)) and not isinstance(s, bool) for s in scores)):
        raise _fail(source, line, f"result scores must be {n} numbers")
    if not (isinstance(winners, list) and all(as_action_id(w) is not None and 0 <= w < n for w in winners)):
        raise _fail(source, line, f"result winners must be seats in 0..{n - 1}")
    return {"scores": scores, "winners": winners}


def _short(value: Any, limit: int = 40) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _replay_entry(game: Game, state, k: int, entry: list[int], source: str, line: int) -> None:
    """Play log entry ``k`` (on ``line``) on ``state`` with the engine's checks: a forced decision the engine
    already played must match it; a choice must be legal."""
    p, a, forced = entry
    if k < len(state.log):
        if state.log[k] != entry:
            p2, a2, _ = state.log[k]
            raise _fail(source, line, f"the replay has a forced decision here ({game.action_name(a2)} by "
                                      f"player_{p2}), not {entry}")
        return
    if forced:
        raise _fail(source, line, "marked forced, but the replay offers a choice here")
    reason = game.why_illegal(state, p, a)
    if reason is not None:
        raise _fail(source, line, f"illegal decision {game.safe_action_name(a)} by player_{p}: {reason}")
    game.apply_legal(state, p, a)


def _check_end(game: Game, state, log: list[list[int]], result: dict, source: str, line: int) -> None:
    """The replay after the whole log must be over and give the stated ``result`` (the result is on ``line``)."""
    if len(state.log) > len(log):
        raise _fail(source, line, f"the log stops before the forced decisions the engine plays after it "
                                  f"({len(state.log) - len(log)} missing)")
    if not game.is_over(state):
        raise _fail(source, line, "the log ends before the game does")
    res = game.results(state)
    if [float(s) for s in result["scores"]] != [float(s) for s in res.scores]:
        raise _fail(source, line, f"result scores {result['scores']} are not the replay's {_plain(list(res.scores))}")
    if sorted(result["winners"]) != sorted(int(w) for w in res.winners):
        raise _fail(source, line, f"result winners {result['winners']} are not the replay's {list(res.winners)}")


def _read_lines(lines: Iterator[tuple[int, str]], source: str) -> SavedGame:
    """Check and replay a saved game from its ``(line number, text)`` pairs, one line at a time: each decision is
    replayed as it is read, so the first line that does not fit the game stops the reading."""
    game = header = state = result = None
    log: list[list[int]] = []
    blank = last = None
    for number, line in lines:
        if number > MAX_GAME_LINES:
            raise _fail(source, number, f"more than the {MAX_GAME_LINES:,} lines a saved game may have")
        if not line.strip():
            blank = blank or number
            continue
        if blank is not None:
            raise _fail(source, blank, "empty line")
        if result is not None:
            raise _fail(source, number, "a line after the result line (the result is the last line)")
        try:
            data = loads_json(line, f"{source}: line {number}", MAX_JSON_DEPTH)
        except FileProblem as e:
            raise RecordingError(str(e)) from None
        last = number
        if game is None:
            game, header = _parse_header(data, source)
            state = game.new_state(header["seed"])
        elif isinstance(data, dict) and "result" in data:
            result = _parse_result(data, source, number, game)
            _check_end(game, state, log, result, source, number)
        else:
            entry = _parse_entry(data, source, number, game)
            _replay_entry(game, state, len(log), entry, source, number)
            log.append(entry)
    if game is None:
        raise _fail(source, None, "empty file, not a saved gemenvs game")
    if result is None:
        if not log:
            raise _fail(source, 2, "the file ends after the header (no result line)")
        raise _fail(source, last, "the last line must be {\"result\": {\"scores\": [...], \"winners\": [...]}}")
    return SavedGame(env=header["env"], options=header["options"], seed=int(header["seed"]), log=log,
                     players=list(header["players"]), result=result)


def _text_lines(text: str, source: str) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each line of ``text``, with the caps of a saved file (lengths in UTF-8 bytes)."""
    if len(text) > MAX_GAME_BYTES // 4 and len(text.encode("utf-8", "surrogatepass")) > MAX_GAME_BYTES:
        raise _fail(source, None, f"more than the {MAX_GAME_BYTES:,} bytes a saved game may have")
    for number, line in enumerate(io.StringIO(text, newline="\n"), start=1):
        line = line[:-1] if line.endswith("\n") else line
        line = line[:-1] if line.endswith("\r") else line
        if len(line) > MAX_LINE_BYTES // 4 and len(line.encode("utf-8", "surrogatepass")) > MAX_LINE_BYTES:
            raise _fail(source, number, f"longer than the {MAX_LINE_BYTES:,} bytes a line of a saved game may have")
        yield number, line


def parse_game(text: str, source: str = "<saved game>") -> SavedGame:
    """Read a saved game from its text (see :func:`load_game`; the same caps); ``source`` names it in errors."""
    return _read_lines(_text_lines(text, source), source)


def _file_lines(path: str | os.PathLike, source: str) -> Iterator[tuple[int, str]]:
    """The lines of a saved-game file (:func:`gemenvs.files.iter_lines` with this module's caps), each problem of
    reading a :class:`RecordingError` naming the file (and the line, for a line too long or not UTF-8)."""
    try:
        yield from iter_lines(path, MAX_LINE_BYTES, MAX_GAME_LINES + 1, MAX_GAME_BYTES, "saved game")
    except OSError as e:
        raise _fail(source, None, f"cannot read the file ({e.strerror or e})") from None
    except FileProblem as e:
        text = str(e)
        for prefix in (source, str(Path(source))):
            if text.startswith(prefix):
                text = text[len(prefix):]
                break
        line = None
        if text.startswith(", line "):
            number, _, text = text[len(", line "):].partition(": ")
            line = int(number.replace(",", "")) if number.replace(",", "").isdigit() else None
        raise _fail(source, line, "cannot read the file: " + text.lstrip(": ")) from None


def load_game(path: str | os.PathLike) -> SavedGame:
    """Read and check a saved game (a full replay, line by line, within :data:`MAX_LINE_BYTES`,
    :data:`MAX_GAME_LINES` and :data:`MAX_GAME_BYTES`); any problem, a file that is not a regular file
    included, is a one-line :class:`RecordingError`."""
    source = os.fspath(path)
    return _read_lines(_file_lines(path, source), source)
