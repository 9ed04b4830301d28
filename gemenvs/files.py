"""Reading and writing the suite's files safely: nothing outside the folder a user named, nothing unbounded.

Readers (saved games, configs, models, checkpoints, results) open a path only if it is a regular
file (a FIFO, a device or a folder is refused at once, never waited on), bound its size, the length
and number of its lines and the nesting of its JSON, and report any problem as one
:class:`FileProblem` line naming the file. Writers create files inside a folder without following a
symlink planted there and without overwriting what they did not create (see the writing section).
Standard library only, so every layer may use it.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import re
import secrets
import shutil
import stat
import sys
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
    and line): not JSON, nested deeper than ``max_depth``, NaN or infinities (``1e999`` included), an integer
    of more digits than Python converts, or a string holding a lone surrogate (which no file can encode)."""
    def constant(name: str):
        raise FileProblem(f"{where}: not JSON ({name} is not a number JSON allows)")

    try:
        value = json.loads(text, parse_constant=constant)
    except FileProblem:
        raise
    except RecursionError:
        raise FileProblem(f"{where}: JSON nested deeper than {max_depth} levels") from None
    except UnicodeDecodeError as e:
        raise FileProblem(f"{where}: not UTF-8 text (byte {e.start:,})") from None
    except json.JSONDecodeError as e:
        raise FileProblem(f"{where}: not JSON ({e.msg} at character {e.pos:,})") from None
    except ValueError:  # int(): more digits than sys.get_int_max_str_digits()
        raise FileProblem(f"{where}: not JSON this reader takes (an integer of more than "
                          f"{_int_digits():,} digits)") from None
    if json_depth(value) > max_depth:
        raise FileProblem(f"{where}: JSON nested deeper than {max_depth} levels")
    _check_strings(value, where)
    return value


def _int_digits() -> int:
    """The most digits ``int()`` converts from a string here (0: no limit)."""
    get = getattr(sys, "get_int_max_str_digits", None)
    return get() if get is not None else 0


def _check_strings(value: Any, where: str) -> None:
    """Refuse a lone surrogate in any string of ``value`` (JSON's ``\\ud800`` escapes decode to one) and a number
    too large for a float (``1e999`` reads as infinity)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise FileProblem(f"{where}: a string holds a lone surrogate ({item[:40]!r})") from None
        elif isinstance(item, float) and not math.isfinite(item):
            raise FileProblem(f"{where}: not JSON this reader takes (a number too large for a float)")
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
#
# A writer names a folder and a plain name in it. The folder itself must be a real folder (a symbolic link
# there is refused, as is one planted at the name); a file is written to a new temporary file in the same
# folder (created with O_EXCL and O_NOFOLLOW, relative to the open folder) and renamed over the name only
# when complete, so a reader never sees half a file and a link or hard link at the name is never written
# through. A folder the suite fills for the user (a run, a tournament, a benchmark) holds a marker file
# saying the suite made it; an existing folder without its marker is written into only when the user says
# so. A folder that must appear complete or not at all (a checkpoint) is filled under a temporary name and
# renamed into place (:func:`atomic_folder`).


class WriteRefused(FileProblem, FileExistsError):
    """What is at a name the suite was to write (a symbolic link, a folder, a device, a file or folder it did
    not make) keeps it from writing there: the message (one line) names the path and the reason. Also a
    ``FileExistsError``, so every command that reports OS errors in one line reports this one too."""


#: whether names can be opened relative to an open folder without following links (POSIX)
_AT = (hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY") and os.open in os.supports_dir_fd
       and os.mkdir in os.supports_dir_fd and os.stat in os.supports_dir_fd)
#: the flags of every open: a link at the name itself is not followed, the descriptor is not inherited
_OPEN_FLAGS = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_TEMP_NAME = re.compile(r"\..+\.(tmp|old)-[0-9a-f]{8}")


def temp_name(name: str, kind: str = "tmp") -> str:
    """A fresh temporary name for ``name`` in the same folder: ``.NAME.tmp-XXXXXXXX``."""
    return f".{name}.{kind}-{secrets.token_hex(4)}"


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is a temporary name of :func:`temp_name` (a write that a kill cut short leaves one)."""
    return _TEMP_NAME.fullmatch(name) is not None


def _check_name(name: str) -> str:
    if not isinstance(name, str) or name in ("", ".", "..") or any(c in name for c in "/\\\0"):
        raise ValueError(f"a file name inside a folder must be one plain name; got {name!r}")
    return name


def _refuse(path: Path, info: os.stat_result, what: str = "file") -> None:
    """A WriteRefused when ``info`` (an lstat) is not a regular file."""
    if stat.S_ISLNK(info.st_mode):
        raise WriteRefused(f"{path} is a symbolic link; refusing to write through it (remove the link, or write "
                           f"somewhere else)")
    if not stat.S_ISREG(info.st_mode):
        raise WriteRefused(f"{path} is a {_kind(info.st_mode)}, not a {what}; refusing to replace it")


class _Folder:
    """An open real folder; the names in it are looked up, made, replaced and removed relative to it (``dir_fd``
    where the platform has it), so a symbolic link at the folder's own path is never followed."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.fd = None
        if _AT:
            try:
                self.fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | _OPEN_FLAGS)
                return
            except FileNotFoundError:
                raise
            except OSError:
                pass  # say below why: a link, or not a folder
        try:
            info = os.lstat(self.path)
        except FileNotFoundError:
            raise FileNotFoundError(f"no folder {self.path}") from None
        if stat.S_ISLNK(info.st_mode):
            raise WriteRefused(f"{self.path} is a symbolic link, not a folder; refusing to write through it")
        if not stat.S_ISDIR(info.st_mode):
            kind = "file" if stat.S_ISREG(info.st_mode) else _kind(info.st_mode)
            raise WriteRefused(f"{self.path} is a {kind}, not a folder")
        if _AT:  # a folder that could not be opened (permissions): the OS says why
            self.fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | _OPEN_FLAGS)

    def __enter__(self) -> "_Folder":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def _at(self) -> dict:
        return {"dir_fd": self.fd} if self.fd is not None else {}

    def _p(self, name: str) -> str | Path:
        return name if self.fd is not None else self.path / name

    def lstat(self, name: str) -> os.stat_result | None:
        """The entry ``name`` itself (a link is not followed), or None."""
        try:
            return os.stat(self._p(name), follow_symlinks=False, **self._at())
        except FileNotFoundError:
            return None

    def open(self, name: str, flags: int, mode: int = 0o666) -> int:
        """A descriptor of ``name`` (never through a link at ``name``: refused in one line)."""
        try:
            return os.open(self._p(name), flags | _OPEN_FLAGS, mode, **self._at())
        except OSError:
            info = self.lstat(name)
            if info is not None and (stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode)):
                _refuse(self.path / name, info)
            raise

    def mkdir(self, name: str) -> None:
        os.mkdir(self._p(name), 0o777, **self._at())

    def replace(self, src: str, dst: str) -> None:
        if self.fd is not None:
            os.replace(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        else:
            os.replace(self.path / src, self.path / dst)

    def unlink(self, name: str) -> None:
        os.unlink(self._p(name), **self._at())

    def rmtree(self, name: str) -> None:
        """Delete the folder ``name`` and all in it (links inside are removed, never followed)."""
        if self.fd is not None and shutil.rmtree.avoids_symlink_attacks and sys.version_info >= (3, 11):
            shutil.rmtree(name, dir_fd=self.fd)
        else:
            shutil.rmtree(self.path / name)

    def listdir(self) -> list[str]:
        return os.listdir(self.fd if self.fd is not None else self.path)

    def sync(self) -> None:
        """Flush the folder's entries to disk (where the platform can)."""
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.fsync(self.fd)


def _write_new(folder: _Folder, name: str, data: bytes, sync: bool) -> str:
    """``data`` written to a new temporary file beside ``name`` (O_EXCL, no link followed); its name."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    for _ in range(100):
        tmp = temp_name(name)
        try:
            fd = folder.open(tmp, flags)
            break
        except FileExistsError:
            continue
    else:
        raise WriteRefused(f"{folder.path}: no free temporary name for {name}")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if sync:
                f.flush()
                os.fsync(f.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            folder.unlink(tmp)
        raise
    return tmp


def write_file(folder: str | os.PathLike, name: str, data: bytes | str, overwrite: bool = True,
               sync: bool = False) -> Path:
    """Write ``data`` (text as UTF-8) as ``folder/name``, all or nothing: a new temporary file in ``folder``
    renamed over ``name`` when complete (``sync``: flushed to disk first). Refused (:class:`WriteRefused`)
    when ``folder`` is not a real folder, when ``name`` is a symbolic link or not a regular file, or when it
    exists and ``overwrite`` is false. Returns the path."""
    _check_name(name)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path = Path(folder) / name
    with _Folder(folder) as d:
        info = d.lstat(name)
        if info is not None:
            _refuse(path, info)
            if not overwrite:
                raise WriteRefused(f"{path} exists; refusing to overwrite it")
        tmp = _write_new(d, name, bytes(data), sync)
        try:
            info = d.lstat(name)  # (once more: what may have appeared meanwhile is replaced, never written into)
            if info is not None:
                _refuse(path, info)
            d.replace(tmp, name)
        except BaseException:
            with contextlib.suppress(OSError):
                d.unlink(tmp)
            raise
        if sync:
            d.sync()
    return path


def open_append(folder: str | os.PathLike, name: str, text: bool = True):
    """``folder/name`` opened to append to (made when missing; text: UTF-8 with ``newline=""``, as ``csv``
    wants). Refused when ``name`` is a symbolic link, not a regular file, or a file with other hard links
    (appending would write into a file elsewhere)."""
    _check_name(name)
    path = Path(folder) / name
    with _Folder(folder) as d:
        info = d.lstat(name)
        if info is not None:
            _refuse(path, info)
        fd = d.open(name, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            _refuse(path, info)
        if info.st_nlink > 1:
            raise WriteRefused(f"{path} has {info.st_nlink - 1} other hard link(s); refusing to append to a file "
                               f"that is also elsewhere")
        return os.fdopen(fd, "a", encoding="utf-8", newline="") if text else os.fdopen(fd, "ab")
    except BaseException:
        os.close(fd)
        raise


def existing_head(folder: str | os.PathLike, name: str, size: int = 512) -> bytes | None:
    """The first ``size`` bytes of the regular file ``folder/name``, or None when there is nothing there (a
    writer deciding whether it may replace what is there). A symbolic link or a non-regular file is a
    :class:`WriteRefused`; a missing ``folder`` is None."""
    _check_name(name)
    try:
        d = _Folder(folder)
    except FileNotFoundError:
        return None
    with d:
        info = d.lstat(name)
        if info is None:
            return None
        _refuse(Path(folder) / name, info)
        fd = d.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        return f.read(size)


def remove_file(folder: str | os.PathLike, name: str) -> bool:
    """Remove the regular file ``folder/name``: True if there was one, False if there was nothing; a symbolic
    link or anything else there is a :class:`WriteRefused` (it is left as it is)."""
    _check_name(name)
    with _Folder(folder) as d:
        info = d.lstat(name)
        if info is None:
            return False
        _refuse(Path(folder) / name, info)
        d.unlink(name)
    return True


def make_folder(path: str | os.PathLike, root: str | os.PathLike | None = None) -> Path:
    """``path`` as a real folder, made when missing. Every part of it below ``root`` (default: ``path``'s
    parent) that exists must be a real folder: a symbolic link or a file there is a :class:`WriteRefused`,
    never followed. ``root`` and the folders above it are the user's (made, when missing, as ``os.makedirs``
    makes them)."""
    path = Path(path)
    if root is None:
        if path.name in ("", ".", ".."):
            os.makedirs(path, exist_ok=True)
            return path
        top, parts = path.parent, (path.name,)
    else:
        top = Path(root)
        parts = path.relative_to(top).parts
    if not top.is_dir():
        os.makedirs(top, exist_ok=True)
    current = top
    for part in parts:
        with _Folder(current) as d:
            info = d.lstat(part)
            if info is None:
                with contextlib.suppress(FileExistsError):
                    d.mkdir(part)
                info = d.lstat(part)
        current = current / part
        if info is None or stat.S_ISLNK(info.st_mode):
            raise WriteRefused(f"{current} is a symbolic link where a folder goes; refusing to follow it")
        if not stat.S_ISDIR(info.st_mode):
            raise WriteRefused(f"{current} exists and is not a folder")
    return path


def user_folder(path: str | os.PathLike) -> Path:
    """The folder of a file path a user named (``gemenvs play --save FILE``, ``PolicyAgent.save(FILE)``), made
    when missing, with the links in it resolved: the user chose them. The file itself is then written with
    :func:`write_file`, which never follows a link at the file's own name."""
    folder = Path(path).parent
    os.makedirs(folder, exist_ok=True)
    return folder.resolve()


def owned_folder(path: str | os.PathLike, marker: str, marker_text: str, overwrite: bool = False,
                 hint: str = "give another folder", check_only: bool = False) -> bool:
    """``path`` as a folder the suite owns, marked by the file ``marker``: made and marked when missing or empty;
    taken as it is when it holds the marker; another existing folder is a :class:`WriteRefused` (ending in
    ``hint``) unless ``overwrite``, which marks it. True when the folder was new (missing or empty).
    ``check_only``: the same refusals, but nothing is made or written (a command checks before its work)."""
    path = Path(path)
    if check_only:
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return True
        if stat.S_ISLNK(info.st_mode):
            raise WriteRefused(f"{path} is a symbolic link where a folder goes; refusing to follow it")
    else:
        make_folder(path)
    with _Folder(path) as d:
        info = d.lstat(marker)
        if info is not None:
            if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
                _refuse(path / marker, info, "marker file")
            return False
        names = d.listdir()
    if names and not overwrite:
        raise WriteRefused(f"{path} is not empty and has no {marker} file, so it is not a folder this command made; "
                           f"{hint}")
    if not check_only:
        write_file(path, marker, marker_text)
    return not names


def _exchange(folder: _Folder, a: str, b: str) -> bool:
    """Swap the entries ``a`` and ``b`` of ``folder`` in one step (Linux ``renameat2``); False where it cannot."""
    if folder.fd is None or not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError, ImportError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(folder.fd, os.fsencode(a), folder.fd, os.fsencode(b), 2) == 0:  # RENAME_EXCHANGE
        return True
    err = ctypes.get_errno()
    if err in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: not on this file system
        return False
    raise OSError(err, os.strerror(err), str(folder.path / b))


def _sync_tree(path: Path) -> None:
    """Flush every regular file under ``path`` (links not followed), and the folders, to disk."""
    for top, dirs, names in os.walk(path):
        for name in names:
            with contextlib.suppress(OSError):
                fd = os.open(os.path.join(top, name), os.O_RDONLY | _OPEN_FLAGS)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        with contextlib.suppress(OSError), _Folder(top) as d:
            d.sync()


@contextlib.contextmanager
def atomic_folder(parent: str | os.PathLike, name: str, replace: bool = True) -> Iterator[Path]:
    """A new temporary folder ``parent/.NAME.tmp-XXXXXXXX`` to fill, renamed to ``parent/NAME`` when the block
    ends (its files flushed to disk first; an earlier ``NAME`` folder swapped out in one step and deleted when
    ``replace``, else a :class:`WriteRefused`), deleted when the block raises. A kill leaves ``NAME`` as it was
    and the temporary folder, which :func:`is_temp_name` tells readers to skip."""
    _check_name(name)
    parent = Path(parent)
    with _Folder(parent) as d:
        for _ in range(100):
            tmp = temp_name(name)
            try:
                d.mkdir(tmp)
                break
            except FileExistsError:
                continue
        else:
            raise WriteRefused(f"{parent}: no free temporary name for {name}")
    try:
        yield parent / tmp
        _sync_tree(parent / tmp)
        with _Folder(parent) as d:
            info = d.lstat(name)
            if info is None:
                d.replace(tmp, name)
            elif stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
                raise WriteRefused(f"{parent / name} is a "
                                   f"{'symbolic link' if stat.S_ISLNK(info.st_mode) else _kind(info.st_mode)}, "
                                   f"not a folder this command wrote; refusing to replace it")
            elif not replace:
                raise WriteRefused(f"{parent / name} exists; refusing to replace it")
            elif _exchange(d, tmp, name):
                d.rmtree(tmp)  # (now the earlier folder)
            else:  # two renames: a kill between them leaves the complete new folder under its temporary name
                old = temp_name(name, "old")
                d.replace(name, old)
                d.replace(tmp, name)
                d.rmtree(old)
            d.sync()
    except BaseException:
        with contextlib.suppress(OSError), _Folder(parent) as d:
            if d.lstat(tmp) is not None:
                d.rmtree(tmp)
        raise


__all__ = ["FileProblem", "MAX_FILE_BYTES", "MAX_JSON_DEPTH", "WriteRefused", "atomic_folder", "existing_head",
           "is_temp_name", "iter_lines", "json_depth", "loads_json", "make_folder", "open_append", "open_regular",
           "owned_folder", "read_bytes", "read_json", "read_text", "remove_file", "temp_name", "user_folder",
           "write_file"]
