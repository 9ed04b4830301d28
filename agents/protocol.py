"""Agents in another program: the JSON-lines protocol (``docs/protocol.md``) and the agent that speaks it.

A :class:`ProtocolAgent` plays a seat by asking another program, one JSON object a line: at a game's
first decision it sends ``start`` (the game, its env id and version, options, seat, player count, the
action labels and the observation layout, the limits), then a ``decide`` message for every decision
(the seat's observation, mask, legal actions with their labels, its text view and the events it may
see since its last decision), each answered by ``{"action": ID}`` or ``{"action": "LABEL"}``, and at
the end ``end`` (scores, winners, ranks, forfeits). Every message is built only from what the seat
may see (:func:`start_message`, :func:`decide_message`, :func:`end_message`; the hidden-information
contract test compares them across states the seat cannot tell apart).

Agent specs (:func:`parse_spec`): ``cmd:COMMAND`` starts COMMAND as a child process (split like a
shell line, run without a shell) and talks over its stdin and stdout; ``tcp:HOST:PORT`` (a loopback
address) and ``unix:PATH`` connect to a program that runs on its own. Limits go between the kind and
the colon: ``cmd,decision_timeout=2,retries=0:python my_agent.py``.

The program is not trusted. An answer that is not JSON, names no action, or names an illegal one is
asked again with an ``error`` field, ``retries`` times (default once); then, or at once when the
program is too slow (``decision_timeout`` for an answer, ``game_timeout`` for all of a game's
answers), exits, floods its output or writes when no answer is due, the seat *forfeits* the game:
:attr:`ProtocolAgent.forfeit` names the reason (:data:`FORFEIT_REASONS`), the seat's remaining
decisions of the game are its first legal action, and the match runners count the game as a loss
for it (:func:`gemenvs.agents.base.standing`). A program that failed is ended (its process group
killed and reaped) and started again, or reconnected, for the next game.
"""
from __future__ import annotations

import json
import math
import os
import re
import shlex
import shutil
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gemenvs.agents.base import standing
from gemenvs.agents.transport import MAX_LINE_BYTES, ChildProcess, LogSink, SocketLink, TransportError
from gemenvs.files import FileProblem, loads_json

#: the protocol's version, sent in every ``start`` message; a change that breaks a client bumps it
PROTOCOL_VERSION = 1
#: the kinds of agent spec: a child process, a local TCP port, a Unix socket
SPEC_KINDS = ("cmd", "tcp", "unix")
#: why a seat forfeits: too slow for one answer, too slow for the game, the program exited (or could not be
#: started, or connected), too much output (a line over the limit, or output when none was due), an answer
#: that is not a JSON object naming an action, an illegal action (the last two after the retries)
FORFEIT_REASONS = ("timeout", "game timeout", "crash", "flood", "malformed", "illegal")
#: the forfeit reasons that count as timeouts in leaderboards
TIMEOUT_REASONS = ("timeout", "game timeout")


@dataclass(frozen=True)
class Limits:
    """What a program may take: ``decision_timeout`` seconds for an answer, ``game_timeout`` seconds for all
    its answers of one game, ``retries`` more tries after a malformed or illegal answer, ``start_timeout``
    seconds for the first answer of a program just started (or connected: its start-up), and
    ``max_line_bytes`` bytes for a line."""

    decision_timeout: float = 10.0
    game_timeout: float = 600.0
    retries: int = 1
    start_timeout: float = 10.0
    max_line_bytes: int = MAX_LINE_BYTES

    def __post_init__(self) -> None:
        for name in ("decision_timeout", "game_timeout", "start_timeout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
                raise ValueError(f"{name} must be a positive number of seconds; got {value!r}")
            object.__setattr__(self, name, float(value))
        for name, lo, hi in (("retries", 0, 10), ("max_line_bytes", 64, 64 * MAX_LINE_BYTES)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise ValueError(f"{name} must be an integer in {lo}..{hi}; got {value!r}")


LIMIT_NAMES = tuple(Limits.__dataclass_fields__)


# ----------------------------------------------------------------------------- specs

def is_protocol_spec(spec) -> bool:
    """Whether ``spec`` names a program that plays over the protocol (``cmd:``, ``tcp:``, ``unix:``, with or
    without limits after the kind)."""
    if not isinstance(spec, str) or ":" not in spec:
        return False
    return spec.partition(":")[0].split(",")[0].strip() in SPEC_KINDS


def _limit_value(name: str, text: str):
    kind = int if name in ("retries", "max_line_bytes") else float
    try:
        return kind(text)
    except ValueError:
        raise ValueError(f"{name} takes {'an integer' if kind is int else 'a number of seconds'}; got {text!r}") \
            from None


@dataclass(frozen=True)
class ProtocolSpec:
    """A parsed agent spec: ``kind`` (``cmd``, ``tcp``, ``unix``), ``argv`` (cmd), ``address`` (tcp: host and
    port; unix: the path) and the limits it sets (only those it names)."""

    text: str
    kind: str
    argv: tuple[str, ...] = ()
    address: tuple | str | None = None
    limits: tuple[tuple[str, object], ...] = ()


def parse_spec(spec: str) -> ProtocolSpec:
    """``KIND[,NAME=VALUE...]:TARGET`` as a :class:`ProtocolSpec`; a ValueError of one line says what is wrong
    (no command, a program not found, an address that is not local, an unknown or bad limit)."""
    head, _, target = spec.partition(":")
    kind, *options = [w.strip() for w in head.split(",")]
    if kind not in SPEC_KINDS:
        raise ValueError(f"agent {spec!r}: a protocol agent is cmd:COMMAND, tcp:HOST:PORT or unix:PATH")
    limits = {}
    for item in options:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in LIMIT_NAMES:
            raise ValueError(f"agent {spec!r}: {item!r} is not a limit (NAME=VALUE with NAME one of "
                             f"{', '.join(LIMIT_NAMES)})")
        limits[name] = _limit_value(name, value.strip())
    try:
        Limits(**limits)
    except ValueError as e:
        raise ValueError(f"agent {spec!r}: {e}") from None
    target = target.strip()
    if kind == "cmd":
        try:
            argv = tuple(shlex.split(target))
        except ValueError as e:
            raise ValueError(f"agent {spec!r}: the command does not split into words ({e})") from None
        if not argv:
            raise ValueError(f"agent {spec!r}: cmd: needs a command, e.g. cmd:python my_agent.py")
        program = argv[0]
        if os.sep in program or (os.altsep and os.altsep in program):
            if not (os.path.isfile(program) and os.access(program, os.X_OK)):
                raise ValueError(f"agent {spec!r}: {program} is not an executable file")
        elif shutil.which(program) is None:
            raise ValueError(f"agent {spec!r}: program {program!r} not found on PATH")
        return ProtocolSpec(spec, kind, argv=argv, limits=tuple(limits.items()))
    if kind == "tcp":
        host, sep, port = target.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"agent {spec!r}: tcp: takes HOST:PORT, e.g. tcp:127.0.0.1:7000")
        from gemenvs.agents.transport import loopback_address

        try:
            loopback_address(host, int(port))
        except ValueError as e:
            raise ValueError(f"agent {spec!r}: {e}") from None
        return ProtocolSpec(spec, kind, address=(host, int(port)), limits=tuple(limits.items()))
    if not target:
        raise ValueError(f"agent {spec!r}: unix: takes the path of a socket, e.g. unix:/tmp/agent.sock")
    return ProtocolSpec(spec, kind, address=target, limits=tuple(limits.items()))


# ----------------------------------------------------------------------------- messages

def _entry(game):
    from gemenvs.core.entry import entry_of

    try:
        return entry_of(game)
    except ValueError:
        return None


def _jsonable(value) -> bool:
    try:
        json.dumps(value)
        return True
    except (TypeError, ValueError):
        return False


_LABELS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def labels_of(game) -> tuple[list[str], list[str]]:
    """Every action id's action-spec label (``bid[3]``) and the game's own name of it (``bid 3``), made once per
    game object."""
    found = _LABELS.get(game)
    if found is None:
        ids = range(game.num_actions)
        found = _LABELS[game] = ([game.action_spec.label(a) for a in ids], [game.action_name(a) for a in ids])
    return found


def view_text(game, state, seat: int) -> str:
    """The seat's text view: the text render its game's entry gives that seat (what ``render_view`` shows)."""
    entry = _entry(game)
    return entry.render_text(game, state, seat) if entry is not None else game.render(state, seat)


def start_message(game, seat: int, limits: Limits) -> dict:
    """The ``start`` message of a game for ``seat``: the game, its options and layout, the limits."""
    entry = _entry(game)
    spec = game.spec
    return {
        "type": "start", "protocol": PROTOCOL_VERSION, "game": game.name,
        "title": entry.title if entry is not None else game.name,
        "env_id": entry.env_id if entry is not None else None, "env_version": int(game.version),
        "options": {k: v for k, v in game.options().items() if _jsonable(v)},
        "seat": int(seat), "num_players": int(game.num_players), "num_actions": int(game.num_actions),
        "action_labels": list(labels_of(game)[0]),
        "observation_size": int(spec.size),
        "observation_slices": [{"name": s.name, "offset": s.offset, "shape": list(s.shape), "scale": s.scale,
                                "meaning": s.meaning} for s in spec.slices],
        "limits": {"decision_timeout": limits.decision_timeout, "game_timeout": limits.game_timeout,
                   "retries": limits.retries},
    }


@dataclass
class Seen:
    """How much of a game's logs a seat has been sent: decisions of the log, events of the narrative log, and
    the decisions it was sent with their action hidden (``hidden``: log indices)."""

    decisions: int = 0
    narrative: int = 0
    hidden: list[int] = field(default_factory=list)


def events_since(game, state, seat: int, seen: Seen) -> tuple[list[dict], list[dict], list[str]]:
    """What ``seat`` may see happened since ``seen``: the decisions of the log (as it may know them:
    :meth:`Game.visible_entry`), the earlier decisions it was sent hidden whose action it may see now (a
    sealed bid once its round resolves), and the narrative sentences (:meth:`Game.game_log`); ``seen`` moves
    on to now."""
    labels = labels_of(game)[0]

    def event(k: int) -> dict:
        p, a, f = game.visible_entry(state, seat, k)
        return {"index": k, "seat": int(p), "action": None if a is None else int(a),
                "label": None if a is None else labels[a], "forced": f}

    revealed = [e for e in map(event, seen.hidden) if e["action"] is not None]
    events = [event(k) for k in range(seen.decisions, len(state.log))]
    narrative = game.game_log(state, seat, start=seen.narrative)
    shown = {e["index"] for e in revealed}
    seen.hidden = [k for k in seen.hidden if k not in shown] + [e["index"] for e in events if e["action"] is None]
    seen.decisions, seen.narrative = len(state.log), game.game_log_size(state)
    return events, revealed, narrative


def decide_message(game, state, seat: int, seen: Seen, number: int = 1, observation=None, mask=None) -> dict:
    """The ``decide`` message of ``seat``'s ``number``-th decision of the game (``observation`` and ``mask``:
    the seat's, computed when not given); ``seen`` moves on to now."""
    obs = game.observe(state, seat) if observation is None else observation
    mask = game.legal_mask(state, seat) if mask is None else mask
    legal = [int(a) for a in np.flatnonzero(mask)]
    events, revealed, narrative = events_since(game, state, seat, seen)
    labels, names = labels_of(game)
    return {
        "type": "decide", "decision": int(number), "seat": int(seat),
        "observation": np.asarray(obs, dtype=np.float64).tolist(), "mask": np.asarray(mask, dtype=np.int64).tolist(),
        "legal": legal, "legal_labels": [labels[a] for a in legal], "legal_names": [names[a] for a in legal],
        "view": view_text(game, state, seat), "events": events, "revealed": revealed, "narrative": narrative,
    }


def end_message(game, state, seat: int, seen: Seen, forfeits=None) -> dict:
    """The ``end`` message of a finished game for ``seat``: the scores, winners and ranks (a seat that forfeited
    loses: :func:`~gemenvs.agents.base.standing`), every seat's forfeit reason or null, its final view and
    the events since its last decision; ``seen`` moves on to the end."""
    forfeits = list(forfeits) if forfeits is not None else [None] * game.num_players
    winners, ranks = standing(game, state, forfeits)
    events, revealed, narrative = events_since(game, state, seat, seen)
    return {
        "type": "end", "seat": int(seat), "scores": [float(x) for x in game.results(state).scores],
        "winners": winners, "ranks": ranks, "forfeits": forfeits, "forfeit": forfeits[seat],
        "view": view_text(game, state, seat), "events": events, "revealed": revealed, "narrative": narrative,
    }


def encode(message: dict) -> bytes:
    """A message as its line: compact JSON, one object, ending in a newline (no newline inside)."""
    return (json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


def _words(text: str) -> str:
    """Lower case, brackets and punctuation as spaces, single spaces: ``"bid[3]"`` and ``"Bid 3"`` read alike."""
    return " ".join(re.sub(r"[\[\](),:;]", " ", text.lower()).split())


def parse_answer(line: bytes, game, legal: list[int]) -> tuple[int | None, str | None, str | None]:
    """``(action, None, None)`` for an answer naming a legal action (its id, or its label or the game's name of
    it, in any case, brackets or spaces), else ``(None, reason, why)`` with ``reason`` ``"malformed"`` or
    ``"illegal"`` and ``why`` one line for the program."""
    try:
        answer = loads_json(line, "the answer", max_depth=8)
    except FileProblem as e:
        return None, "malformed", str(e)
    if not isinstance(answer, dict) or "action" not in answer:
        return None, "malformed", 'an answer is one JSON object with an "action": {"action": 3} or {"action": "bid[3]"}'
    action = answer["action"]
    if isinstance(action, bool) or not isinstance(action, (int, str)):
        return None, "malformed", f'"action" must be an action id or a label; got {json.dumps(action)[:60]}'
    if isinstance(action, int):
        if action in legal:
            return action, None, None
        return None, "illegal", f"action {action} is not legal now (legal: {_short_list(legal)})"
    names: dict[str, set] = {}
    labels, own = labels_of(game)
    for a in legal:
        for name in (labels[a], own[a]):
            names.setdefault(_words(name), set()).add(a)
    found = names.get(_words(action), set())
    if len(found) == 1:
        return next(iter(found)), None, None
    if len(found) > 1:
        return None, "illegal", f"{action[:60]!r} names more than one legal action; answer with an id"
    return None, "illegal", f"{action[:60]!r} is not the label of a legal action now"


def _short_list(ids: list[int], limit: int = 12) -> str:
    text = ", ".join(map(str, ids[:limit]))
    return text + (f", ... ({len(ids)} in all)" if len(ids) > limit else "")


# ----------------------------------------------------------------------------- the agent

def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("._")[:80] or "agent"


class _Link:
    """The current connection of an agent (a child process or a socket), closed by whoever gets there first:
    the agent, its garbage collection, or the exit of its process (a worker's among them)."""

    def __init__(self):
        self.channel = None
        self.log: LogSink | None = None

    def close(self, grace: float | None = None) -> None:
        channel, self.channel = self.channel, None
        if channel is not None:
            code = channel.close() if grace is None else channel.close(grace)
            if self.log is not None and getattr(channel, "pid", None) is not None:
                self.log.note(f"program {channel.pid} ended (exit status {code})")

    def shut(self) -> None:
        """Close the connection and the log."""
        self.close()
        if self.log is not None:
            self.log.close()
            self.log = None


class ProtocolAgent:
    """A seat played by another program over the JSON-lines protocol (the module docstring; ``docs/protocol.md``).

    Built for one game (``game``: an engine; its options fix the messages) from a parsed spec; keyword limits
    (:class:`Limits`) are the defaults the spec's own override. ``log_dir``: the folder for the program's
    stderr and the agent's notes (``log_dir/LOG_NAME.log``, appended; None: the program's stderr is the
    suite's own). It reads the engine state (``needs_state``: the match runner hands it over, see
    :func:`gemenvs.agents.base.decide`) only to build the seat's messages; one seat per game.
    """

    needs_state = True
    per_game_memory = True
    deterministic = False

    def __init__(self, game, spec: ProtocolSpec | str, log_dir: str | os.PathLike | None = None,
                 log_name: str | None = None, **limits):
        self.game = game
        self.spec = parse_spec(spec) if isinstance(spec, str) else spec
        self.limits = Limits(**{**limits, **dict(self.spec.limits)})
        self.name = self.spec.text
        self.log_dir = None if log_dir is None else Path(log_dir)
        self.log_name = _safe_name(log_name or self.spec.text)
        self._link = _Link()
        self._fresh = False
        from multiprocessing.util import Finalize

        # (the program is ended when this agent is collected, or when its process exits: a pool worker's too)
        self._finalizer = Finalize(self, _Link.shut, args=(self._link,), exitpriority=10)
        #: totals over every game played: games, forfeits, timeouts, retries asked, programs started
        self.totals = {"games": 0, "forfeits": 0, "timeouts": 0, "retries": 0, "starts": 0}
        self._new_game()

    @classmethod
    def for_env(cls, env, spec: ProtocolSpec | str, seed: int | None = None, **kwargs) -> ProtocolAgent:
        """The agent for an environment's game (only ``env.unwrapped.game`` is read)."""
        return cls(env.unwrapped.game, spec, **kwargs)

    def __repr__(self) -> str:
        return f"ProtocolAgent({self.spec.text!r})"

    # ------------------------------------------------------------------ the game's bookkeeping

    def _new_game(self) -> None:
        self.seat: int | None = None
        #: why this seat forfeited the current (or last) game, one of FORFEIT_REASONS, or None
        self.forfeit: str | None = None
        #: the words of what went wrong, for logs and reports
        self.problem: str | None = None
        self._seen = Seen()
        self._decisions = 0
        self._waited = 0.0
        self._state = None
        self._started = False  # start sent to the program for this game
        self._ended = False

    def reset(self, seed: int | None = None) -> None:
        """A new game begins (``seed`` is not passed on: it could tell the program the deal). A game left
        without :meth:`game_over` gets its ``end`` now, when it is over."""
        if self._started and not self._ended and self._state is not None and self.game.is_over(self._state):
            self.game_over(self._state, self.seat, None)
        self._new_game()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Not used: the agent needs the game (:meth:`act_with_state`), so it plays through the match runner."""
        raise TypeError("a protocol agent sends its program the seat's view of the game, so it plays only where the "
                        "match runner hands the game over (play_engine_game, play_game, run_match, tournaments, "
                        "the benchmark, gemenvs play)")

    def act_with_state(self, state, seat: int, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Ask the program for ``seat``'s decision (messages hold only what the seat may see); the first legal
        action once the seat has forfeited."""
        if self.seat is None:
            self.seat = int(seat)
        elif seat != self.seat:
            raise ValueError(f"{self!r} plays seat {self.seat} of this game and was asked for seat {seat}: a protocol "
                             f"agent plays one seat per game (build one agent per seat)")
        self._state = state
        legal = [int(a) for a in np.flatnonzero(action_mask)]
        if not legal:
            raise ValueError("the action mask allows no action: this agent is not to act now")
        if self.forfeit is None:
            self._decisions += 1
            message = decide_message(self.game, state, self.seat, self._seen, self._decisions, observation, action_mask)
            action = self._ask(message, legal)
            if action is not None:
                return action
        return legal[0]

    def game_over(self, state, seat: int, forfeits=None) -> None:
        """Send the program the game's ``end`` (``forfeits``: every seat's reason or None; None: this seat's only)."""
        if self._ended:
            return
        self._ended = True
        if self.seat is None:
            self.seat = int(seat)
        if forfeits is None:
            forfeits = [None] * self.game.num_players
            forfeits[self.seat] = self.forfeit
        self.totals["games"] += 1
        if self.forfeit is not None:
            self.totals["forfeits"] += 1
            self.totals["timeouts"] += self.forfeit in TIMEOUT_REASONS
        if self.forfeit in ("timeout", "game timeout", "crash", "flood"):
            return  # (the program was ended when it failed)
        try:
            if not self._started:
                self._begin()
            deadline = time.monotonic() + self.limits.decision_timeout
            self._check_quiet()
            self._link.channel.send(encode(end_message(self.game, state, self.seat, self._seen, forfeits)), deadline)
        except (TransportError, OSError) as e:  # (after the game: noted, not a forfeit; started again next game)
            self._note(f"seat {self.seat}: the end message was not delivered ({e})")
            self._link.close(0.0)

    def close(self) -> None:
        """End the program (or the connection) now, and close the log."""
        self._link.shut()

    @property
    def pid(self) -> int | None:
        """The process id of the program running now (a child process), else None."""
        channel = self._link.channel
        return getattr(channel, "pid", None) if channel is not None else None

    # ------------------------------------------------------------------ talking

    def _note(self, text: str) -> None:
        if self._link.log is not None:
            self._link.log.note(text)

    def _open_log(self) -> LogSink | None:
        if self.log_dir is None:
            return None
        if self._link.log is None:
            from gemenvs.files import make_folder, open_append

            make_folder(self.log_dir)
            self._link.log = LogSink(open_append(self.log_dir, f"{self.log_name}.log", text=False))
        return self._link.log

    def _connect(self) -> None:
        """Start the program (or connect to it) when none is running."""
        if self._link.channel is not None:
            return
        log = self._open_log()
        self.totals["starts"] += 1
        if self.spec.kind == "cmd":
            self._link.channel = ChildProcess(list(self.spec.argv), log, self.limits.max_line_bytes)
            self._note(f"program {self._link.channel.pid} started: {' '.join(self.spec.argv)}")
        else:
            self._link.channel = SocketLink(self.spec.kind, self.spec.address, self.limits.start_timeout,
                                            self.limits.max_line_bytes)
            self._note(f"connected to {self.spec.kind}:{self.spec.address}")
        self._fresh = True

    def _begin(self) -> None:
        """Send ``start`` for this game (starting the program first when needed)."""
        self._connect()
        self._started = True
        deadline = time.monotonic() + self.limits.start_timeout
        self._link.channel.send(encode(start_message(self.game, self.seat, self.limits)), deadline)

    def _check_quiet(self) -> None:
        if self._link.channel.pending():
            raise TransportError("flood", "the program wrote output when no answer was due")

    def _fail(self, reason: str, why: str, end_program: bool) -> None:
        self.forfeit, self.problem = reason, why
        self._note(f"seat {self.seat} forfeits the game at decision {self._decisions}: {reason}: {why}")
        if end_program:
            self._link.close(0.0)

    def _ask(self, message: dict, legal: list[int]) -> int | None:
        """The program's legal answer to ``message`` (asked again after a bad answer, ``retries`` times), or
        None once the seat forfeits."""
        limits = self.limits
        tries = 0
        while True:
            start = time.monotonic()
            budget = limits.game_timeout - self._waited
            kind = "timeout"
            try:
                if not self._started:
                    self._begin()
                patience = limits.decision_timeout
                if self._fresh:  # (the first answer of a program just started: its start-up too)
                    patience = max(patience, limits.start_timeout)
                kind = "timeout" if patience <= budget else "game timeout"
                deadline = start + min(patience, budget)
                self._check_quiet()
                self._link.channel.send(encode(message), deadline)
                line = self._link.channel.read_line(deadline)
                self._fresh = False
            except TransportError as e:
                self._waited += time.monotonic() - start
                reason = kind if e.kind == "timeout" else e.kind
                if reason == "timeout" and self._waited >= limits.game_timeout:
                    reason = "game timeout"
                self._fail(reason, str(e), end_program=True)
                return None
            except OSError as e:  # (the log folder could not be written: the program was not started)
                self._fail("crash", f"cannot start the program: {e}", end_program=True)
                return None
            self._waited += time.monotonic() - start
            action, reason, why = parse_answer(line, self.game, legal)
            if action is not None:
                return action
            if tries >= limits.retries:
                self._fail(reason, why, end_program=False)
                return None
            tries += 1
            self.totals["retries"] += 1
            self._note(f"seat {self.seat}, decision {self._decisions}: {reason} answer ({why}); asked again")
            message = {**message, "retry": tries, "error": why}


__all__ = ["FORFEIT_REASONS", "LIMIT_NAMES", "PROTOCOL_VERSION", "SPEC_KINDS", "TIMEOUT_REASONS", "Limits",
           "ProtocolAgent", "ProtocolSpec", "Seen", "decide_message", "encode", "end_message", "events_since",
           "is_protocol_spec", "parse_answer", "parse_spec", "start_message", "view_text"]
