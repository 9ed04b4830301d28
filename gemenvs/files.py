"""Reading and writing the suite's files safely: nothing outside the folder a user named, nothing unbounded.

Readers (saved games, configs, models, checkpoints, results) open a path only if it is a regular
file (a FIFO, a device or a folder is refused at once, never waited on), bound its size, the length
and number of its lines and the nesting of its JSON, and report any problem as one
:class:`FileProblem` line naming the file. Writers create files inside a folder without following a
symlink planted there and without overwriting what they did not create (see the writing section).
Standard library only, so every layer may use it.
"""
from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

#: the largest file a reader takes unless told otherwise
MAX_FILE_BYTES = 64 * 1024 * 1024
#: the deepest JSON nesting a reader takes unless told otherwise (saved games, checkpoints and configs need < 10)
MAX_JSON_DEPTH = 64


class FileProblem(ValueError):
    """A file that cannot be used as it is: the message (one line) names the file and the problem."""


# ----------------------------------------------------------------------------- reading

def open_regular(path: str | os.PathLike, max_bytes: int = MAX_FILE_BYTES, what: str = "file") -> BinaryIO:
    """``path`` opened for reading in binary, if it is a regular file of at most ``max_bytes`` bytes (a symlink to
    one is followed). A FIFO, socket, device or folder is refused without blocking; a missing file raises
    FileNotFoundError, as ``open`` does."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise FileProblem(f"{path}: a folder, not a {what}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileProblem(f"{path}: not a regular file (a {_kind(info.st_mode)}), so not a {what}")
        if info.st_size > max_bytes:
            raise FileProblem(f"{path}: {info.st_size:,} bytes, more than the {max_bytes:,} a {what} may have")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "folder"), (stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device")):
        if test(mode):
            return name
    return "special file"


def read_bytes(path: str | os.PathLike, max_bytes: int = MAX_FILE_BYTES, what: str = "file") -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (:func:`open_regular`; a file that grows past the cap
    while it is read is refused too)."""
    with open_regular(path, max_bytes, what) as f:
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise FileProblem(f"{path}: more than the {max_bytes:,} bytes a {what} may have")
    return data


def read_text(path: str | os.PathLike, max_bytes: int = MAX_FILE_BYTES, what: str = "file") -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes`` (:func:`read_bytes`); invalid UTF-8 or a lone
    surrogate is a :class:`FileProblem` naming the byte offset."""
    data = read_bytes(path, max_bytes, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FileProblem(f"{path}: not UTF-8 text (byte {e.start:,}), so not a {what}") from None


def iter_lines(path: str | os.PathLike, max_line_bytes: int, max_lines: int, max_bytes: int = MAX_FILE_BYTES,
               what: str = "file") -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each line of a regular UTF-8 file, read one line at a time, stopping with a
    :class:`FileProblem` at the first line longer than ``max_line_bytes``, past ``max_lines`` lines or past
    ``max_bytes`` in all (the line break is not part of the text)."""
    total = 0
    with open_regular(path, max_bytes, what) as f:
        for number in range(1, max_lines + 2):
            raw = f.readline(max_line_bytes + 2)
            if not raw:
                return
            if number > max_lines:
                raise FileProblem(f"{path}: more than the {max_lines:,} lines a {what} may have")
            total += len(raw)
            if total > max_bytes:
                raise FileProblem(f"{path}: more than the {max_bytes:,} bytes a {what} may have")
            body = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1] if raw.endswith(b"\n") else raw
            if len(body) > max_line_bytes:
                raise FileProblem(f"{path}, line {number}: longer than the {max_line_bytes:,} bytes a line of a "
                                  f"{what} may have")
            try:
                yield number, body.decode("utf-8")
            except UnicodeDecodeError as e:
                raise FileProblem(f"{path}, line {number}: not UTF-8 text (byte {e.start:,} of the line)") from None


def json_depth(value: Any) -> int:
    """How deeply ``value`` nests lists and dicts (a scalar: 0), counted without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        elif not isinstance(item, list):
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in item if isinstance(child, (list, dict)))
    return deepest


def loads_json(text: str | bytes, where: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(text)`` with every problem one :class:`FileProblem` line naming ``where`` (a file, or a file
    and line): not JSON, nested deeper than ``max_depth``, NaN or infinities, or a string holding a lone
    surrogate (which no file can encode)."""
    def constant(name: str):
        raise FileProblem(f"{where}: {name} is not a number JSON allows")

    try:
        value = json.loads(text, parse_constant=constant)
    except RecursionError:
        raise FileProblem(f"{where}: JSON nested deeper than {max_depth} levels") from None
    except UnicodeDecodeError as e:
        raise FileProblem(f"{where}: not UTF-8 text (byte {e.start:,})") from None
    except json.JSONDecodeError as e:
        raise FileProblem(f"{where}: not JSON ({e.msg} at character {e.pos:,})") from None
    if json_depth(value) > max_depth:
        raise FileProblem(f"{where}: JSON nested deeper than {max_depth} levels")
    _check_strings(value, where)
    return value


def _check_strings(value: Any, where: str) -> None:
    """Refuse a lone surrogate in any string of ``value`` (JSON's ``\\ud800`` escapes decode to one)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise FileProblem(f"{where}: a string holds a lone surrogate ({item[:40]!r})") from None
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def read_json(path: str | os.PathLike, max_bytes: int = MAX_FILE_BYTES, what: str = "JSON file",
              max_depth: int = MAX_JSON_DEPTH) -> Any:
    """A regular JSON file of at most ``max_bytes``, parsed by :func:`loads_json`."""
    return loads_json(read_text(path, max_bytes, what), str(path), max_depth)


# ----------------------------------------------------------------------------- writing
# (files created inside a named folder: no symlink followed, nothing overwritten that the suite did not create)


__all__ = ["FileProblem", "MAX_FILE_BYTES", "MAX_JSON_DEPTH", "iter_lines", "json_depth", "loads_json", "open_regular",
           "read_bytes", "read_json", "read_text"]
