"""Play a game yourself in the terminal, and step through saved games (``gemenvs play``, ``gemenvs replay``).

A person takes one seat; baseline agents or trained policies take the others. At each of the
person's decisions the screen shows what that seat may see (the game's own text render for the
seat, and what happened since its last decision: the other seats' decisions as the seat may see
them, or for Gem Jam the sentences of its game log), then the legal choices, numbered, with
their action-spec names. A choice is typed as its number, its name (``bid[12]``, ``bid 12``,
``reveal[pink]``; any case) or an unambiguous beginning of a name (``rev``). Anything else is
answered with a one-line reason (the engine's own explanation for an illegal action) and asked
again. End of input and ``q`` leave the game; the caller maps Ctrl-C to exit status 130.

Everything reads and writes through a :class:`Screen` over text streams, so tests drive a
whole game with scripted input. On a terminal :class:`Screen` colours its output with ``rich``
when it is installed; otherwise (pipes, files, tests) it writes plain text.

``python -m gemenvs.play GAME ...`` is ``gemenvs play GAME ...``.
"""
from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Sequence
from typing import TextIO

from gemenvs.core.engine import Game

#: words that are commands at the prompt, never choices
HELP_WORDS = ("?", "h", "help")
QUIT_WORDS = ("q", "quit", "exit")
LIST_WORDS = ("l", "list")
LOG_WORDS = ("log",)
#: a choice typed by its number (ASCII digits only)
NUMBER = re.compile(r"[+-]?[0-9]+")
#: at most this many lines of "what happened since your last decision"
RECENT_LINES = 30


class QuitGame(Exception):
    """The person asked to leave (``q``); the end of input is EOFError."""


class Screen:
    """Reads a person's answers and writes the game, in plain text or (on a terminal) in colour.

    Args:
        stdin, stdout: the text streams (default ``sys.stdin`` / ``sys.stdout``).
        color: colour the output with ``rich``; ``None`` (default): when ``stdout`` is a terminal,
            ``rich`` is installed and ``NO_COLOR`` is not set.
        interactive: whether a person types the input (default: when ``stdin`` is a terminal);
            scripted input is echoed, and replays do not wait for Enter unless interactive.
    """

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None, color: bool | None = None,
                 interactive: bool | None = None):
        self.stdin = stdin if stdin is not None else sys.stdin
        self.stdout = stdout if stdout is not None else sys.stdout
        self._interactive = interactive
        if color is None:
            color = _isatty(self.stdout) and not os.environ.get("NO_COLOR")
        self.console = None
        if color:
            try:
                from rich.console import Console
            except ImportError:  # plain text without rich
                pass
            else:
                self.console = Console(file=self.stdout, highlight=False, force_terminal=True, soft_wrap=True)

    @property
    def interactive(self) -> bool:
        """Whether a person types the input (default: stdin is a terminal)."""
        return _isatty(self.stdin) if self._interactive is None else self._interactive

    @property
    def width(self) -> int:
        """Columns available for the choice list."""
        if self.console is not None:
            return self.console.width
        return shutil.get_terminal_size((80, 24)).columns if _isatty(self.stdout) else 80

    def say(self, text: str = "", style: str | None = None) -> None:
        """Write ``text`` (taken literally: brackets are not markup), in ``style`` when in colour."""
        if self.console is not None:
            from rich.text import Text

            self.console.print(Text(text, style=style or ""))
        else:
            self.stdout.write(text + "\n")
            self.stdout.flush()

    def heading(self, text: str) -> None:
        """A section title."""
        if self.console is not None:
            self.console.rule(_literal(text), style="cyan")
        else:
            self.say(f"== {text} ==")

    def board(self, text: str) -> None:
        """A game's text render; the line of the seat marked ``>`` stands out in colour."""
        for line in text.splitlines():
            self.say(line, "bold" if line.lstrip().startswith(">") else None)

    def error(self, text: str) -> None:
        """A one-line complaint about the last answer."""
        self.say(text, "bold red")

    def ask(self, prompt: str) -> str:
        """Write ``prompt`` and read one line (without its newline); EOFError at the end of input."""
        if self.console is not None:
            from rich.text import Text

            self.console.print(Text(prompt, style="bold green"), end="")
            self.console.file.flush()
        else:
            self.stdout.write(prompt)
            self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            self.stdout.write("\n")
            raise EOFError
        if not self.interactive:  # echo scripted answers, so a transcript reads like a session
            self.stdout.write(line if line.endswith("\n") else line + "\n")
        return line.rstrip("\r\n")


def _literal(text: str):
    from rich.text import Text

    return Text(text)


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


# ---------------------------------------------------------------------------------- choices


def _norm(text: str) -> str:
    """Lower case, single spaces: how typed names are compared."""
    return " ".join(text.lower().split())


def action_names(game: Game, action: int) -> list[str]:
    """The names a person may type for ``action``: its label (``bid[12]``), the label with a space
    instead of brackets (``bid 12``) and the game's own action name, all in lower case."""
    label = game.action_spec.label(action)
    names = [_norm(label), _norm(label.replace("[", " ").replace("]", " ")), _norm(game.action_name(action))]
    return list(dict.fromkeys(names))


def choice_text(game: Game, action: int) -> str:
    """How a choice is listed: its action-spec label, plus the game's own name when that says more."""
    label = game.action_spec.label(action)
    name = game.action_name(action)
    if _norm(name) in (_norm(label), _norm(label.replace("[", " ").replace("]", " "))):
        return label
    return f"{label}  ({name})"


def parse_choice(game: Game, state, seat: int, legal: Sequence[int], text: str) -> tuple[int | None, str | None]:
    """The action a person's answer ``text`` chooses among ``legal``: ``(action, None)``, or
    ``(None, reason)`` with a one-line reason why the answer chooses nothing."""
    answer = _norm(text)
    n = len(legal)
    quoted = repr(answer if len(answer) <= 30 else answer[:27] + "...")
    if not answer:
        return None, f"type a number 1..{n} or the name of a choice (? for help)"
    if NUMBER.fullmatch(answer):
        small = len(answer.lstrip("+-0")) <= 9
        k = int(answer) if small else n + 1
        if 1 <= k <= n:
            return int(legal[k - 1]), None
        return None, f"there is no choice {answer if small else quoted}: type a number 1..{n}"
    names = {a: action_names(game, a) for a in legal}
    exact = [a for a in legal if answer in names[a]]
    if exact:
        return int(exact[0]), None
    for a in range(game.num_actions):  # a real action that is not legal now: the engine says why
        if answer in action_names(game, a):
            reason = game.why_illegal(state, seat, a) or "not legal now"
            return None, f"{game.action_spec.label(a)} is not allowed now: {reason}"
    prefix = [a for a in legal if any(name.startswith(answer) for name in names[a])]
    if len(prefix) == 1:
        return int(prefix[0]), None
    if prefix:
        shown = ", ".join(game.action_spec.label(a) for a in prefix[:5]) + (", ..." if len(prefix) > 5 else "")
        return None, f"{quoted} could be {len(prefix)} choices ({shown}): type more of the name or its number"
    for a in range(game.num_actions):  # the beginning of real actions, none legal now
        if any(name.startswith(answer) for name in action_names(game, a)):
            reason = game.why_illegal(state, seat, a) or "not legal now"
            return None, f"no {quoted} choice is allowed now ({game.action_spec.label(a)}: {reason})"
    return None, f"no choice is called {quoted}: type a number 1..{n} or a name such as " \
                 f"{game.action_spec.label(int(legal[0]))}"


def choice_lines(game: Game, legal: Sequence[int], width: int = 80) -> list[str]:
    """The numbered legal choices, in columns when they are short."""
    items = [f"{k:>3}) {choice_text(game, a)}" for k, a in enumerate(legal, start=1)]
    cell = max(len(i) for i in items) + 2
    per_row = max(1, min(width // cell, 8)) if cell <= 24 and len(items) > 6 else 1
    rows = -(-len(items) // per_row)
    # column-major, so numbers run down each column
    return ["".join(items[c * rows + r].ljust(cell) for c in range(per_row) if c * rows + r < len(items)).rstrip()
            for r in range(rows)]


# ---------------------------------------------------------------------------------- what happened


def has_narrative(game: Game) -> bool:
    """Whether the game keeps a narrative log (:meth:`Game.game_log_entries`), e.g. Gem Jam."""
    return type(game).game_log_entries is not Game.game_log_entries


def seat_name(p: int, viewer: int | None, you: bool = True) -> str:
    """``player_2``, or ``you`` for the viewer's own seat."""
    return "you" if you and p == viewer else f"player_{p}"


def describe_decision(game: Game, entry, viewer: int | None, you: bool = True) -> str:
    """One decision of :meth:`Game.visible_log` in words, as ``viewer`` may know it."""
    p, a, forced = entry
    who = seat_name(p, viewer, you)
    if a is None:
        return f"{who}: a hidden decision"
    return f"{who}: {game.action_name(a)}" + (" (forced)" if forced else "")


class RecentEvents:
    """What happened since the last call, as ``viewer`` may see it: the game's narrative log for a
    game that keeps one, else the decisions of :meth:`Game.visible_log`."""

    def __init__(self, game: Game, viewer: int | None, you: bool = True):
        self.game, self.viewer, self.you = game, viewer, you
        self.narrative = has_narrative(game)
        self.decisions = 0
        self.events = 0

    def new_lines(self, state, limit: int | None = RECENT_LINES) -> list[str]:
        """Lines for everything new since the last call (at most ``limit``, the latest)."""
        game = self.game
        if self.narrative:
            lines = game.game_log(state, self.viewer, start=self.events)
            self.events = game.game_log_size(state)
        else:
            log = game.visible_log(state, self.viewer)
            lines = [describe_decision(game, e, self.viewer, self.you) for e in log[self.decisions:]]
            self.decisions = len(log)
        if limit is not None and len(lines) > limit:
            lines = [f"({len(lines) - limit} earlier lines not shown; type log for all)"] + lines[-limit:]
        return lines

    def all_lines(self, state) -> list[str]:
        """Everything so far, as ``viewer`` may see it."""
        if self.narrative:
            return self.game.game_log(state, self.viewer)
        return [describe_decision(self.game, e, self.viewer, self.you) for e in self.game.visible_log(state, self.viewer)]


# ---------------------------------------------------------------------------------- playing


def game_title(game: Game) -> str:
    """``MegaGem (3 players)``."""
    titles = {"megagem": "MegaGem", "gem": "GEM", "gemjam": "Gem Jam"}
    return f"{titles.get(game.name, game.name)} ({game.num_players} players)"


def results_lines(game: Game, state, names: Sequence[str], viewer: int | None = None) -> list[str]:
    """Final scores, one line per seat (winners starred), and who won."""
    res = game.results(state)
    lines = []
    for p, score in enumerate(res.scores):
        who = f"player_{p} ({names[p]})"
        lines.append(f"  {who:<28} {score:>7g}" + ("  * winner" if p in res.winners else ""))
    if viewer is not None:
        if viewer in res.winners:
            lines.append("You won!" if len(res.winners) == 1 else "You share the win.")
        else:
            lines.append("You lost: " + ", ".join(f"player_{w}" for w in res.winners) + " won.")
    return lines


def _help(screen: Screen) -> None:
    screen.say("Type the number of a choice, or its name (bid[12], bid 12, reveal[pink]; any case), or a beginning")
    screen.say("of a name that fits only one choice (rev). Commands: ? help, list: the table and choices again,")
    screen.say("log: everything so far, q: leave the game.")


def ask_decision(game: Game, state, seat: int, screen: Screen, recent: RecentEvents) -> int:
    """Show the seat's view and its legal choices; return the action the person chooses.

    Raises :class:`QuitGame` on ``q`` and EOFError at the end of input.
    """
    legal = [int(a) for a in game.legal_actions(state, seat)]

    def show() -> None:
        screen.board(game.render(state, seat))
        screen.say("Your choices:", "bold")
        for line in choice_lines(game, legal, screen.width):
            screen.say(line, "yellow")

    screen.heading(f"{game_title(game)} - you are player_{seat} - your decision")
    for line in recent.new_lines(state):
        screen.say(line, "dim")
    show()
    while True:
        text = screen.ask("your choice (number or name, ? for help)> ")
        word = _norm(text)
        if word in HELP_WORDS:
            _help(screen)
            continue
        if word in QUIT_WORDS:
            raise QuitGame
        if word in LIST_WORDS:
            show()
            continue
        if word in LOG_WORDS:
            for line in recent.all_lines(state) or ["(nothing yet)"]:
                screen.say(line, "dim")
            continue
        action, reason = parse_choice(game, state, seat, legal, text)
        if action is not None:
            return action
        screen.error(reason)


def play_human_game(game: Game, seat: int, agents: Sequence, seed: int, screen: Screen,
                    names: Sequence[str] | None = None):
    """Play one game of ``game`` from ``seed`` with a person in ``seat`` and ``agents[p]`` in every
    other seat; return the final state.

    The loop is :func:`gemenvs.agents.match.play_engine_game`'s (the first seat of ``to_act``
    decides; agents see their own observation and mask, and a search agent such as ``ismcts:16``
    is handed the state too, through :func:`gemenvs.agents.match.decide`; every action goes
    through ``game.apply``; agent ``p`` is reseeded with ``seed * 1009 + p``), with the person's seat
    asked through ``screen``. Raises :class:`QuitGame` when the person leaves, EOFError when the
    input ends.
    """
    from gemenvs.agents.match import decide

    if not 0 <= seat < game.num_players:
        raise ValueError(f"seat must be in 0..{game.num_players - 1}; got {seat}")
    names = list(names) if names is not None else ["bot"] * game.num_players
    state = game.new_state(seed)
    for p, agent in enumerate(agents):
        if p != seat:
            agent.reset(seed=seed * 1009 + p)
    recent = RecentEvents(game, seat)
    others = ", ".join(f"player_{p}: {names[p]}" for p in range(game.num_players) if p != seat)
    screen.say(f"{game_title(game)}, seed {seed}. You are player_{seat}; {others}. Type ? for help.", "bold")
    while not game.is_over(state):
        p = game.to_act(state)[0]
        if p == seat:
            action = ask_decision(game, state, seat, screen, recent)
        else:
            action = decide(agents[p], state, p, game.observe(state, p), game.legal_mask(state, p))
        game.apply(state, p, action)
    screen.heading(f"{game_title(game)} - game over")
    for line in recent.new_lines(state):
        screen.say(line, "dim")
    screen.board(game.render(state, seat))
    for line in results_lines(game, state, names, seat):
        screen.say(line, "bold")
    return state


# ---------------------------------------------------------------------------------- replaying


def replay_saved_game(saved, viewer: int | None, screen: Screen, pause: bool) -> bool:
    """Step through a :class:`~gemenvs.recording.SavedGame` as seat ``viewer`` sees it (None: the
    whole table): the deal, then the table after every decision of the log.

    With ``pause``, the person presses Enter for the next step, types a number to skip ahead that
    many steps, ``e`` to jump to the end, or ``q`` to stop; without, every step is printed.
    Returns False when the person stopped early (``q`` or end of input).
    """
    game = saved.game()
    if viewer is not None and not 0 <= viewer < game.num_players:
        raise ValueError(f"seat must be in 0..{game.num_players - 1}; got {viewer}")
    total = len(saved.log)
    who = "the whole table" if viewer is None else f"player_{viewer}'s view"
    players = ", ".join(f"player_{p}: {name}" for p, name in enumerate(saved.players))
    screen.say(f"{game_title(game)}, seed {saved.seed}, {total} decisions; {players}. Seen from {who}.", "bold")
    recent = RecentEvents(game, viewer, you=False)
    screen.heading("the deal")
    screen.board(game.render(game.initial_state(saved.seed), viewer))
    skip_to = 0
    state = None
    for k, state in enumerate(saved.states(game), start=1):
        if pause and k > skip_to:
            while True:
                try:
                    answer = _norm(screen.ask(f"[Enter] step {k}/{total}, a number: skip ahead, e: the end, q: quit> "))
                except EOFError:
                    return False
                if answer in QUIT_WORDS:
                    return False
                if answer == "":
                    skip_to = k
                    break
                if answer in ("e", "end"):
                    skip_to = total
                    break
                if answer.isdigit() and int(answer) >= 1:
                    skip_to = min(total, k + int(answer) - 1)
                    break
                screen.error("press Enter for the next step, a number to skip ahead, e for the end, q to quit")
        if pause and k < skip_to:
            continue  # skipped: its events are shown with the next step shown
        entry = game.visible_log(state, viewer)[k - 1]
        screen.heading(f"step {k}/{total}: {describe_decision(game, entry, viewer, you=False)}")
        if recent.narrative:
            for line in recent.new_lines(state, limit=None):
                screen.say(line, "dim")
        screen.board(game.render(state, viewer))
    if state is not None and game.is_over(state):
        screen.heading("result")
        for line in results_lines(game, state, saved.players):
            screen.say(line, "bold")
    return True


if __name__ == "__main__":  # python -m gemenvs.play GAME ...
    from gemenvs.cli import main

    sys.exit(main(["play", *sys.argv[1:]]))
