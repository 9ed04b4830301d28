"""Play a game yourself in the terminal, and step through saved games (``gemenvs play``, ``gemenvs replay``).

A person takes one seat; baseline agents or trained policies take the others. At each of the
person's decisions the screen shows what that seat may see (the game's own text render for the
seat, and what happened since its last decision: the other seats' decisions as the seat may see
them, or for Gem Jam the sentences of its game log), then the legal choices with their
action-spec names. In a bidding decision (MegaGem, GEM: the legal actions include the action
spec's ``bid`` range) a number is the amount to bid (``5`` bids 5); in every other decision the
choices are numbered and a number is a position in that list. A choice is also typed as its name:
its label (``bid[12]``, ``reveal[pink]``, ``play[take two]``), its spaced form (``bid 12``,
``play take two``, ``pay coin 1``: words separated by spaces, no brackets or punctuation), the
game's own action name, any case, or an unambiguous beginning of one of these (``rev``). Anything
else is answered with a one-line reason (the engine's own explanation for an illegal action, the
largest bid allowed for an amount above it) and asked again. ``help NAME`` (``? NAME``) says what
a Gem Jam card or an action does. End of input and ``q`` leave the game; the caller maps Ctrl-C
to exit status 130.

Everything reads and writes through a :class:`Screen` over text streams, so tests drive a
whole game with scripted input. On a terminal :class:`Screen` colours its output with ``rich``
when it is installed; otherwise (pipes, files, tests) it writes plain text.

``python -m gemenvs play GAME ...`` is ``gemenvs play GAME ...``.
"""
from __future__ import annotations

import difflib
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
#: a choice typed by its number (ASCII digits only): a position in the list, or in a bidding decision the amount
NUMBER = re.compile(r"[+-]?[0-9]+")
#: the action-spec range of bids (MegaGem, GEM): in its decisions a number is the amount to bid
BID_GROUP = "bid"
#: a bid's label: the amount
_AMOUNT = re.compile(r"[0-9]+")
#: a bid typed by name with any amount: ``bid 99``, ``bid[99]``
TYPED_BID = re.compile(BID_GROUP + r"\[([+-]?[0-9]+)\]|" + BID_GROUP + r" ([+-]?[0-9]+)")
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
        if not self.interactive:  # echo scripted answers, so a transcript reads like a game typed at the keyboard
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


def _words(text: str) -> str:
    """The spaced form of a name: lower case ASCII words and numbers, single spaces; brackets,
    underscores, slashes and parentheses are spaces, apostrophes and ``!`` are dropped
    (``play[King's Ransom]`` -> ``play kings ransom``, ``target_player[+1 (left)]`` -> ``target player +1 left``)."""
    text = _DROPPED.sub("", text.lower())
    text = _LONE_SIGN.sub(" ", text)
    return " ".join(_NOT_WORD.sub(" ", text).split())


_DROPPED = re.compile(r"['\u2019!]")
_LONE_SIGN = re.compile(r"[+-](?![0-9])")
_NOT_WORD = re.compile(r"[^a-z0-9+-]+")


def action_names(game: Game, action: int) -> list[str]:
    """The names a person may type for ``action``: its label (``bid[12]``), the label with a space
    instead of brackets (``bid 12``) and the game's own action name, all in lower case."""
    label = game.action_spec.label(action)
    names = [_norm(label), _norm(label.replace("[", " ").replace("]", " ")), _norm(game.action_name(action))]
    return list(dict.fromkeys(names))


def spaced_names(game: Game, action: int) -> list[str]:
    """The spaced forms of ``action``'s label and of the game's own action name (:func:`_words`):
    ``play take two``, ``pay coin 1``, ``end plays``; what an answer without brackets is compared with."""
    return list(dict.fromkeys([_words(game.action_spec.label(action)), _words(game.action_name(action))]))


def short_form_of(typed: str, name: str) -> bool:
    """Whether the spaced answer ``typed`` is a short form of the spaced name ``name``: the same first and last
    word, and its words in the name in order (``pay 1`` of ``pay coin 1``, ``target +1`` of ``target player +1
    left`` is not one: the last word differs)."""
    words, full = typed.split(), name.split()
    if len(words) < 2 or len(words) >= len(full) or words[0] != full[0] or words[-1] != full[-1]:
        return False
    rest = iter(full[1:-1])
    return all(any(w == f for f in rest) for w in words[1:-1])


def choice_text(game: Game, action: int) -> str:
    """How a choice is listed: its action-spec label, plus the game's own name when that says more."""
    label = game.action_spec.label(action)
    name = game.action_name(action)
    if _norm(name) in (_norm(label), _norm(label.replace("[", " ").replace("]", " "))):
        return label
    return f"{label}  ({name})"


def bid_range(game: Game):
    """The game's action range of bids, the one named :data:`BID_GROUP` whose labels are the amounts
    (``bid[0]``, ``bid[1]``, ...), or None (Gem Jam has none)."""
    try:
        bids = game.action_spec[BID_GROUP]
    except KeyError:
        return None
    return bids if all(_AMOUNT.fullmatch(lab) for lab in bids.labels) else None


def bidding(game: Game, legal: Sequence[int]):
    """The bid range when ``legal`` holds a bid (a bidding decision: a bare number is an amount), else None."""
    bids = bid_range(game)
    if bids is None or not any(int(a) in bids for a in legal):
        return None
    return bids


def bid_action(bids, amount: int) -> int | None:
    """The action id that bids ``amount``, or None when the game has no such bid."""
    label = str(amount)
    return bids.start + bids.labels.index(label) if label in bids.labels else None


def amounts_text(values: Sequence[int]) -> str:
    """``[0, 1, 2, 3, 7, 8]`` -> ``0..3, 7, 8``: sorted amounts, runs of three or more as ``lo..hi``."""
    values = sorted(set(values))
    parts, k = [], 0
    while k < len(values):
        j = k
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        parts += [f"{values[k]}..{values[j]}"] if j >= k + 2 else [str(v) for v in values[k:j + 1]]
        k = j + 1
    return ", ".join(parts)


def _legal_amounts(game: Game, bids, legal: Sequence[int]) -> list[int]:
    return [int(bids.labels[int(a) - bids.start]) for a in legal if int(a) in bids]


def _choose_amount(game: Game, state, seat: int, legal: Sequence[int], bids, digits: str,
                   quoted: str) -> tuple[int | None, str | None]:
    """The bid of the typed amount ``digits`` (``"12"``, ``"+3"``, ``"-2"``), or why there is none: the
    engine's reason for an illegal bid; for an amount that is no bid of the game, the largest
    amount allowed now with the engine's reason for the one above it."""
    small = len(digits.lstrip("+-0")) <= 9
    amount = int(digits) if small else None
    shown = str(amount) if small else quoted
    allowed = _legal_amounts(game, bids, legal)
    a = bid_action(bids, amount) if small else None
    if a is not None:
        if a in legal:
            return a, None
        reason = game.why_illegal(state, seat, a) or "not legal now"
        return None, f"{game.action_spec.label(a)} is not allowed now: {reason}"
    if small and amount < 0:
        now = f": type an amount to bid, {amounts_text(allowed)}" if allowed else ""
        return None, f"there is no bid of {shown}{now}"
    if not allowed:  # not a bidding decision: the engine says why no bid is allowed
        top = bids.stop - 1
        return None, f"bid {shown} is not allowed now: {game.why_illegal(state, seat, top) or 'not legal now'}"
    most = max(allowed)
    above = bid_action(bids, most + 1)
    if above is None:
        return None, f"bid {shown} is not allowed now: you can bid at most {most}, the game's largest bid"
    reason = game.why_illegal(state, seat, above)
    return None, f"bid {shown} is not allowed now: you can bid at most {most}" + (f"; {reason}" if reason else "")


def parse_choice(game: Game, state, seat: int, legal: Sequence[int], text: str) -> tuple[int | None, str | None]:
    """The action a person's answer ``text`` chooses among ``legal``: ``(action, None)``, or
    ``(None, reason)`` with a one-line reason why the answer chooses nothing.

    A number is the amount to bid in a bidding decision (:func:`bidding`) and a position in the
    numbered list otherwise; a name is a label (``bid[12]``, ``play[Take Two]``), its spaced form
    (``bid 12``, ``play take two``), the game's own action name, or a beginning of one of these
    that fits one legal choice."""
    answer = _norm(text)
    n = len(legal)
    quoted = repr(answer if len(answer) <= 30 else answer[:27] + "...")
    bids = bidding(game, legal)
    if not answer:
        if bids is not None:
            return None, "type the amount to bid or the name of a choice (? for help)"
        return None, f"type a number 1..{n} or the name of a choice (? for help)"
    if NUMBER.fullmatch(answer):
        if bids is not None:
            return _choose_amount(game, state, seat, legal, bids, answer, quoted)
        small = len(answer.lstrip("+-0")) <= 9
        k = int(answer) if small else n + 1
        if 1 <= k <= n:
            return int(legal[k - 1]), None
        return None, f"there is no choice {answer if small else quoted}: type a number 1..{n}"
    every_bid = bid_range(game)
    typed_bid = TYPED_BID.fullmatch(answer) if every_bid is not None else None
    if typed_bid is not None:
        return _choose_amount(game, state, seat, legal, every_bid, typed_bid.group(1) or typed_bid.group(2), quoted)
    if "[" in answer or "]" in answer:  # a label with brackets, as listed (an underscore may be a space)
        key = answer.replace("_", " ")
        names_of = lambda a: [name.replace("_", " ") for name in action_names(game, a)]  # noqa: E731
    else:  # words: the spaced forms
        key, names_of = _words(answer), lambda a: spaced_names(game, a)
        if not key:
            return None, f"no choice is called {quoted}: type " + (
                "the amount to bid" if bids is not None else f"a number 1..{n}") + " or the name of a choice"
    names = {a: names_of(a) for a in legal}
    exact = [a for a in legal if key in names[a]]
    if exact:
        return int(exact[0]), None
    for a in range(game.num_actions):  # a real action that is not legal now: the engine says why
        if key in names_of(a):
            reason = game.why_illegal(state, seat, a) or "not legal now"
            return None, f"{game.action_spec.label(a)} is not allowed now: {reason}"
    short = [a for a in legal if any(short_form_of(key, name) for name in names[a])]  # (pay 1: pay coin 1)
    if len(short) == 1:
        return int(short[0]), None
    if short:
        shown = " or ".join(game.action_spec.label(a) for a in short[:5]) + (" or ..." if len(short) > 5 else "")
        return None, f"{quoted} could be {shown}: type the whole name"
    prefix = [a for a in legal if any(name.startswith(key) for name in names[a])]
    if len(prefix) == 1:
        return int(prefix[0]), None
    if prefix:
        shown = ", ".join(game.action_spec.label(a) for a in prefix[:5]) + (", ..." if len(prefix) > 5 else "")
        more = "type more of the name" + ("" if bids is not None else " or its number")
        return None, f"{quoted} could be {len(prefix)} choices ({shown}): {more}"
    for a in range(game.num_actions):  # the beginning of real actions, none legal now
        if any(name.startswith(key) for name in names_of(a)):
            reason = game.why_illegal(state, seat, a) or "not legal now"
            return None, f"no {quoted} choice is allowed now ({game.action_spec.label(a)}: {reason})"
    how = "the amount to bid" if bids is not None else f"a number 1..{n}"
    return None, f"no choice is called {quoted}: type {how} or a name such as " \
                 f"{game.action_spec.label(int(legal[0]))}"


def choice_lines(game: Game, legal: Sequence[int], width: int = 80) -> list[str]:
    """The legal choices: numbered, in columns when they are short; in a bidding decision the
    amounts allowed (typed as the amount) and any other choice by name."""
    bids = bidding(game, legal)
    if bids is not None:
        amounts = _legal_amounts(game, bids, legal)
        example = amounts[len(amounts) // 2]
        lines = [f"  {BID_GROUP} {amounts_text(amounts)}: type the amount to bid ({example} bids {example})"]
        lines += [f"  {choice_text(game, a)}" for a in legal if int(a) not in bids]
        return lines
    items = [f"{k:>3}) {choice_text(game, a)}" for k, a in enumerate(legal, start=1)]
    cell = max(len(i) for i in items) + 2
    per_row = max(1, min(width // cell, 8)) if cell <= 24 and len(items) > 6 else 1
    rows = -(-len(items) // per_row)
    # column-major, so numbers run down each column
    return ["".join(items[c * rows + r].ljust(cell) for c in range(per_row) if c * rows + r < len(items)).rstrip()
            for r in range(rows)]


# ---------------------------------------------------------------------------------- help


def help_lines(game: Game, legal: Sequence[int]) -> list[str]:
    """What ``?`` shows at a decision: how choices are typed (amounts in a bidding decision), the commands."""
    bids = bidding(game, legal)
    if bids is not None:
        amounts = _legal_amounts(game, bids, legal)
        k = amounts[len(amounts) // 2]
        others = [game.action_spec.label(a) for a in legal if int(a) not in bids]
        lines = [f"This is a bidding decision: type the amount to bid, {amounts_text(amounts)} now ({k} bids {k}; "
                 f"also {BID_GROUP} {k} or {BID_GROUP}[{k}])" + (f", or {' or '.join(others)} by name." if others
                                                                else ".")]
    else:
        label = game.action_spec.label(int(legal[0]))
        lines = [f"Type the number of a choice, or its name in any case: the label ({label}), its spaced form "
                 f"({_words(label)}) or a beginning that fits only one choice."]
    topic = "what a card does" if card_manifest(game) is not None else "what an action does"
    lines.append(f"Commands: ? help, help NAME: {topic}, list: the table and choices again, log: everything so far,")
    lines.append("q: leave the game.")
    return lines


def help_topic(answer: str) -> str | None:
    """The NAME of an answer ``help NAME``, ``h NAME``, ``? NAME`` or ``?NAME``; None for any other answer."""
    word = _norm(answer)
    if word.startswith("?") and word[1:].strip():
        return word[1:].strip()
    first, _, rest = word.partition(" ")
    return rest if first in HELP_WORDS and rest else None


def card_manifest(game: Game):
    """The Gem Jam card manifest of ``game`` (:class:`gemenvs.gemjam.data.Manifest`); None for a game without cards."""
    manifest = getattr(game, "manifest", None)
    if manifest is None or type(manifest).__module__ != "gemenvs.gemjam.data":
        return None
    return manifest


#: bracketed cross-references a card text may carry (codes such as ``S-36`` or a section sign and number), left
#: out of what a player reads
_REF = r"(?:§\d+|[A-Z]-[0-9A-Z]+(?:\.\.[A-Z]-[0-9A-Z]+)?|GEMJAM-SETTLED \d+)"
_REF_ONLY = re.compile(rf"\s*\({_REF}(?:,\s*{_REF})*\)")
_REF_IN = re.compile(rf",\s*{_REF}(?=\s*[,)])")
_ROLE = re.compile(r",?\s*:\w+:`[^`]*`")

#: what each wildcard effect lets its gem be (the permitted types of :func:`gemenvs.gemjam.rules.gem_types_for`)
WILDCARD_TYPES = {
    "rainbow_gem": "takes any gem type when it is placed",
    "magic_mushroom": "takes any gem type when it is placed",
    "poison_cup": "takes any gem type when it is placed",
    "mirror_madness": "takes the type of a Basic Gem now in an opponent's Shrine, and keeps it",
}


def _effect_text(doc: str | None, name: str) -> str:
    """An effect function's docstring as a player reads it: its first paragraph without the card's
    ``Name:`` (``Magic Mushroom played from hand: ...`` keeps ``Played from hand: ...``) and without rule references."""
    if not doc:
        return ""
    text = " ".join(doc.strip().split("\n\n")[0].split())
    head, sep, rest = text.partition(": ")
    if sep and len(head) <= 60:
        after = head[len(name):].strip() if head.startswith(name) else ""
        text = f"{after}: {rest}" if after and not after.startswith("(") else rest
    text = _ROLE.sub("", text.replace("``", ""))
    text = _REF_IN.sub("", _REF_ONLY.sub("", text))
    return text[:1].upper() + text[1:]


def card_text(manifest, kind: int) -> str:
    """What a Gem Jam card does, in one line: its kind, types, values and copies from the manifest,
    and a spell's or wildcard's effect from the engine's text of that effect."""
    from gemenvs.gemjam import spells, steps

    m = manifest
    name, cat, gold, count = m.names[kind], m.category[kind], m.gold[kind], m.count[kind]
    types = [m.type_names[t] for t in m.types[kind]]
    copies = f"{count} in the deck" + (" (with the sirens_call option)" if m.optional[kind] else "")
    if cat == "basic":
        t = m.types[kind][0]
        size, pay = m.set_size[t], m.payment[t]
        return (f"{name}: a Basic Gem of {types[0]}. A set of {types[0]} is complete with {size} gems, at least "
                f"one a Basic; a Gem Jam on {types[0]} takes {' / '.join(map(str, pay))} for 1..{size} of the caster's "
                f"{types[0]} gems (a full set: {pay[-1]}). Pays {gold} gold; {copies}.")
    if cat == "dual":
        return (f"{name}: a gem of {' or '.join(types)}, chosen when played or received; it lets you cast a Gem Jam "
                f"on that type. Pays {gold} gold; {copies}.")
    if cat == "wildcard":
        effect = m.effect[kind]
        played = _effect_text(getattr(getattr(spells, effect, None), "__doc__", None), name)  # Mushroom, Poison Cup
        return (f"{name}: a wildcard gem that {WILDCARD_TYPES.get(effect, 'takes a gem type when it is placed')}; "
                f"alone it does not qualify a Gem Jam and it is never paid." + (f" {played}" if played else "")
                + f" {copies.capitalize()}.")
    if cat == "gold":
        return f"{name}: a Gold card: bank it into your Vault; it pays {gold} gold. {copies.capitalize()}."
    effect = m.effect[kind]
    text = _effect_text(getattr(steps.EFFECTS.get(effect), "__doc__", None), name) or "A spell."
    if effect == "paired_gem_jam":
        text += f" Its types: {' or '.join(types)} (with a Basic or Dual Gem of it in the caster's Shrine)."
    how = ("A reaction: cast it only in a response window, on the spell on top; or" if m.reactive[kind]
           else "Cast it from hand as a play, or")
    return f"{name}: {text} {how} bank it for {gold} gold. {copies.capitalize()}."


def topic_help(game: Game, topic: str) -> tuple[list[str], str | None]:
    """``help NAME``: ``(lines, None)`` with what the card (Gem Jam) or the action called ``topic`` does,
    or ``([], reason)`` in one line, naming close matches."""
    key = _words(topic)
    quoted = repr(_norm(topic) if len(topic) <= 30 else _norm(topic)[:27] + "...")
    spec = game.action_spec
    manifest = card_manifest(game)
    cards = {}
    if manifest is not None:
        cards = {_words(name): kind for kind, name in enumerate(manifest.names)}
        card_groups = [r.name for r in spec.ranges if r.labels == tuple(manifest.names)]
        first, _, rest = key.partition(" ")
        if key not in cards and rest and first in {_words(g) for g in card_groups}:
            key = rest  # "play take two": the card Take Two
        if key in cards:
            return [card_text(manifest, cards[key])], None
    groups = {_words(r.name): r for r in spec.ranges}
    if key in groups:
        r = groups[key]
        return [f"{spec.label(r.start) if r.size == 1 else r.name + '[...]'}: {r.meaning}"], None
    for a in range(game.num_actions):
        if key and key in spaced_names(game, a):
            r = spec[spec.decode(a)[0]]
            return [f"{spec.label(a)}: {r.meaning}"], None
    if manifest is not None:
        starts = [name for name in cards if key and name.startswith(key)]
        if len(starts) == 1:
            return [card_text(manifest, cards[starts[0]])], None
        if starts:
            shown = ", ".join(manifest.names[cards[s]] for s in starts[:6]) + (", ..." if len(starts) > 6 else "")
            return [], f"{quoted} could be {len(starts)} cards ({shown}): type more of the name"
        close = difflib.get_close_matches(key, list(cards), n=4, cutoff=0.6)
        close += [name for name in cards if key and key in name and name not in close][:4 - len(close)]
        if close:
            shown = ", ".join(manifest.names[cards[c]] for c in close)
            return [], f"no card is called {quoted}; close matches: {shown}"
        return [], f"no card is called {quoted} (names as in the choices, e.g. help take two)"
    close = difflib.get_close_matches(key, list(groups), n=3, cutoff=0.6)
    hint = f"close matches: {', '.join(close)}" if close else f"actions: {', '.join(spec.names)}"
    title = game_name_shown(game)
    return [], f"there is no card help for {title}, and no action is called {quoted} ({hint})"


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


def game_name_shown(game: Game) -> str:
    """How the game is named on the screen: its entry's title (``Gem Jam``), else its name."""
    from gemenvs.core.entry import entry_of

    try:
        return entry_of(game).title
    except ValueError:
        return game.name


def game_title(game: Game) -> str:
    """``MegaGem (3 players)``."""
    return f"{game_name_shown(game)} ({game.num_players} players)"


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
    prompt = ("your bid (amount or name, ? for help)> " if bidding(game, legal) is not None
              else "your choice (number or name, ? for help)> ")
    while True:
        text = screen.ask(prompt)
        word = _norm(text)
        if word in HELP_WORDS:
            for line in help_lines(game, legal):
                screen.say(line)
            continue
        topic = help_topic(word)
        if topic is not None:
            lines, reason = topic_help(game, topic)
            for line in lines:
                screen.say(line)
            if reason is not None:
                screen.error(reason)
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

    The loop is :func:`gemenvs.arena.match.play_engine_game`'s (the first seat of ``to_act``
    decides; agents see their own observation and mask, and a search agent such as ``ismcts:16``
    is handed the state too, through :func:`gemenvs.agents.base.decide`; every action goes
    through ``game.apply``; agent ``p`` is reseeded with ``seed * 1009 + p``; at the end each agent hears that
    the game is over, a program playing over the protocol gets its ``end``), with the person's seat
    asked through ``screen``. Raises :class:`QuitGame` when the person leaves, EOFError when the
    input ends.
    """
    from gemenvs.agents.base import decide, end_game

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
    end_game([None if p == seat else agent for p, agent in enumerate(agents)], state)
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
