"""Lines to and from another program, bounded and with deadlines: a child process's stdin and stdout, or a
local socket.

The other program is not trusted. Every read and write waits at most until a deadline, a line is at most
``max_line_bytes`` long (a longer one, or output that never ends a line, is refused without holding more
than that in memory), and whatever goes wrong is one :class:`TransportError` whose ``kind`` says what
happened (``"timeout"``, ``"crash"``, ``"flood"``). A child process (:class:`ChildProcess`) is started
without a shell (its arguments as a list) in a process group of its own, its stderr is copied into a log
(at most :data:`MAX_LOG_BYTES`), and :meth:`ChildProcess.close` always ends and reaps it: end of input,
a grace period, SIGTERM to its group, SIGKILL, wait. :class:`SocketLink` talks to a program that runs
on its own and listens on a local TCP port (loopback addresses only) or a Unix socket.
"""
from __future__ import annotations

import ipaddress
import os
import selectors
import signal
import socket
import subprocess
import threading
import time

#: the longest line read from the other program unless told otherwise (an answer is a few bytes)
MAX_LINE_BYTES = 2**20
#: the most bytes of a child's stderr kept in its log (the rest is read and dropped, so the child never blocks)
MAX_LOG_BYTES = 8 * 2**20
#: how long :meth:`ChildProcess.close` waits after each step (end of input, SIGTERM) before the next
CLOSE_GRACE = 2.0
_CHUNK = 65536


class TransportError(Exception):
    """The other program did not keep to the line protocol: ``kind`` is ``"timeout"`` (no complete answer
    or no room to write before the deadline), ``"crash"`` (it exited, closed its end, or could not be
    started) or ``"flood"`` (a line longer than allowed, or output when none was due); the message says
    which in one line."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class LineLink:
    """Bounded, deadline-limited lines over a pair of non-blocking descriptors (one for a socket)."""

    def __init__(self, read_fd: int, write_fd: int, max_line_bytes: int = MAX_LINE_BYTES):
        self.read_fd, self.write_fd, self.max_line_bytes = read_fd, write_fd, int(max_line_bytes)
        os.set_blocking(read_fd, False)
        os.set_blocking(write_fd, False)
        self._buffer = bytearray()
        self._readable = selectors.DefaultSelector()
        self._readable.register(read_fd, selectors.EVENT_READ)
        self._writable = selectors.DefaultSelector()
        self._writable.register(write_fd, selectors.EVENT_WRITE)
        self.closed = False

    # the raw reads and writes (a socket overrides them with recv and send)
    def _read(self, size: int) -> bytes:
        return os.read(self.read_fd, size)

    def _write(self, data: memoryview) -> int:
        return os.write(self.write_fd, data)

    def send(self, data: bytes, deadline: float) -> None:
        """Write all of ``data`` before ``deadline`` (``time.monotonic()``): a program that does not read its
        input is a ``"timeout"``, one that closed it a ``"crash"``."""
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TransportError("timeout", "the program did not read its input in time")
            if not self._writable.select(left):
                continue
            try:
                view = view[self._write(view):]
            except (BlockingIOError, InterruptedError):
                continue
            except OSError as e:  # EPIPE, ECONNRESET: the other end is gone
                raise TransportError("crash", f"the program closed its input ({e.strerror or e})") from None

    def pending(self) -> bool:
        """Whether the program wrote something that no request asked for (buffered, or readable now)."""
        return bool(self._buffer) or bool(self._readable.select(0))

    def read_line(self, deadline: float) -> bytes:
        """The next line (without its newline), complete before ``deadline``; at most ``max_line_bytes``."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                if end > self.max_line_bytes:
                    raise TransportError("flood", f"a line of more than {self.max_line_bytes:,} bytes")
                line = bytes(self._buffer[:end])
                del self._buffer[:end + 1]
                return line
            if len(self._buffer) > self.max_line_bytes:
                raise TransportError("flood", f"more than {self.max_line_bytes:,} bytes without an end of line")
            left = deadline - time.monotonic()
            if left <= 0:
                raise TransportError("timeout", "no complete answer in time")
            if not self._readable.select(left):
                continue
            try:
                chunk = self._read(min(_CHUNK, self.max_line_bytes + 2 - len(self._buffer)))
            except (BlockingIOError, InterruptedError):
                continue
            except OSError as e:
                raise TransportError("crash", f"reading the program's output failed ({e.strerror or e})") from None
            if not chunk:
                raise TransportError("crash", "the program closed its output (it exited, or closed the connection)")
            self._buffer += chunk

    def close(self) -> None:
        """Forget the selectors (the descriptors are closed by their owner)."""
        if not self.closed:
            self.closed = True
            self._readable.close()
            self._writable.close()


class LogSink:
    """A binary log shared by a child's stderr copier and the notes of its owner, capped at ``limit`` bytes."""

    def __init__(self, file=None, limit: int = MAX_LOG_BYTES):
        self.file, self.limit, self.written, self._lock = file, int(limit), 0, threading.Lock()
        self._cut = False

    def write(self, data: bytes) -> None:
        """Append ``data`` while under the cap; once over, one line says the rest was dropped."""
        if self.file is None or not data:
            return
        with self._lock:
            room = self.limit - self.written
            if room <= 0:
                if not self._cut:
                    self._cut = True
                    self.file.write(f"\n[gemenvs: log cut at {self.limit:,} bytes; the rest is dropped]\n".encode())
                    self.file.flush()
                return
            part = data[:room]
            self.file.write(part)
            self.file.flush()
            self.written += len(part)

    def note(self, text: str) -> None:
        """A line of the suite's own in the log (``[gemenvs] ...``), always kept, even past the cap."""
        if self.file is None:
            return
        with self._lock:
            self.file.write(f"[gemenvs] {text}\n".encode("utf-8", "replace"))
            self.file.flush()

    def close(self) -> None:
        """Close the log file."""
        with self._lock:
            if self.file is not None:
                self.file.close()
                self.file = None


def _copy_stderr(fd: int, sink: LogSink) -> None:
    """Copy a child's stderr into ``sink`` until it closes (past the cap, read and drop)."""
    try:
        while True:
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                return
            sink.write(chunk)
    except OSError:
        return
    finally:
        os.close(fd)


class ChildProcess(LineLink):
    """A program started from ``argv`` (a list: no shell) in a process group of its own, spoken to over its
    stdin and stdout. Its stderr goes to ``log`` (a :class:`LogSink`; None: the suite's own stderr).
    A program that cannot be started is a ``"crash"``."""

    def __init__(self, argv: list[str], log: LogSink | None = None, max_line_bytes: int = MAX_LINE_BYTES):
        self.argv, self.log = list(argv), log
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE if log is not None else None, bufsize=0,
                                         start_new_session=True, close_fds=True)
        except OSError as e:
            raise TransportError("crash", f"cannot start {self.argv[0]!r}: {e.strerror or e}") from None
        self.pid = self.proc.pid
        self._stderr = None
        if log is not None:
            fd = os.dup(self.proc.stderr.fileno())
            self.proc.stderr.close()
            self._stderr = threading.Thread(target=_copy_stderr, args=(fd, log), daemon=True,
                                            name=f"gemenvs-stderr-{self.pid}")
            self._stderr.start()
        super().__init__(self.proc.stdout.fileno(), self.proc.stdin.fileno(), max_line_bytes)
        self.returncode: int | None = None

    def _exited_within(self, seconds: float) -> bool:
        """Whether the child has exited within ``seconds`` (checked without reaping it, so its process group
        cannot be reused before :meth:`close` has signalled it)."""
        stop = time.monotonic() + seconds
        while True:
            try:
                if os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                    return True
            except ChildProcessError:  # (reaped already)
                return True
            if time.monotonic() >= stop:
                return False
            time.sleep(0.005)

    def _signal_group(self, sig: int) -> None:
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def close(self, grace: float = CLOSE_GRACE) -> int | None:
        """End the child and reap it: close its input and wait ``grace`` seconds for it to leave, then SIGTERM
        to its process group and a second wait, then SIGKILL to the group (whatever is left of it), then
        wait. ``grace`` 0 signals at once (a child that hung or broke the protocol). Its exit status."""
        if self.closed:
            return self.returncode
        super().close()
        try:
            self.proc.stdin.close()
        except OSError:  # (a full pipe to a child that exited)
            pass
        if not self._exited_within(grace):
            self._signal_group(signal.SIGTERM)
            self._exited_within(min(grace, 1.0) if grace > 0 else 0.2)
        self._signal_group(signal.SIGKILL)  # (the leader is not reaped yet: its group id is still its own)
        try:
            self.returncode = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # (stuck in the kernel: subprocess reaps it later)
            self.returncode = None
        self.proc.stdout.close()
        if self._stderr is not None:
            self._stderr.join(timeout=1.0)
        return self.returncode


def loopback_address(host: str, port: int) -> tuple:
    """The address of ``host:port`` for a connection, when every address ``host`` names is a loopback one
    (``localhost``, ``127.0.0.1``, ``::1``); anything else is a ValueError: agents connect only locally."""
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as e:
        raise ValueError(f"cannot resolve {host!r} ({e})") from None
    for *_, address in infos:
        if not ipaddress.ip_address(address[0].split("%")[0]).is_loopback:
            raise ValueError(f"{host} is not a loopback address: a socket agent must run on this machine "
                             f"(127.0.0.1, ::1 or localhost)")
    return infos[0]


class SocketLink(LineLink):
    """A connection to a program listening on a local socket: ``("tcp", (host, port))`` (loopback only) or
    ``("unix", path)``; connecting takes at most ``timeout`` seconds (a refusal is a ``"crash"``)."""

    def __init__(self, kind: str, address, timeout: float, max_line_bytes: int = MAX_LINE_BYTES):
        try:
            if kind == "tcp":
                family, socktype, proto, _, addr = loopback_address(*address)
                sock = socket.socket(family, socktype, proto)
            else:
                sock, addr = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), address
            sock.settimeout(timeout)
            try:
                sock.connect(addr)
            except BaseException:
                sock.close()
                raise
        except ValueError as e:
            raise TransportError("crash", str(e)) from None
        except TimeoutError:
            raise TransportError("timeout", f"no connection to {address} in {timeout:g} s") from None
        except OSError as e:
            raise TransportError("crash", f"cannot connect to {address}: {e.strerror or e}") from None
        sock.setblocking(False)
        self.sock, self.pid = sock, None
        super().__init__(sock.fileno(), sock.fileno(), max_line_bytes)

    def _read(self, size: int) -> bytes:
        return self.sock.recv(size)

    def _write(self, data: memoryview) -> int:
        return self.sock.send(data)

    def close(self, grace: float = 0.0) -> None:
        """Close the connection (the program goes on running: it is not ours)."""
        if self.closed:
            return
        super().close()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:  # (the other end has gone already)
            pass
        self.sock.close()


__all__ = ["CLOSE_GRACE", "MAX_LINE_BYTES", "MAX_LOG_BYTES", "ChildProcess", "LineLink", "LogSink", "SocketLink",
           "TransportError", "loopback_address"]
