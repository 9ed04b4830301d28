"""Gem Jam rules: the state as plain data, the decision machinery, the turn, gems, sets and payments.

Nothing here imports PettingZoo. Seat ``i+1`` sits to the left (clockwise) of seat ``i``; seat 0
starts. Rule comments name the section of ``docs/gemjam.md`` (the rules as implemented) they follow.

The game advances by steps: ``state.tasks`` is a stack of pending steps (plain lists such as
``["pay", payer, receiver, amount]``), and a step that needs a seat's choice puts a question to it
with :func:`ask`: a *composite* choice given by every legal complete answer as a list of action
ids, answered one id at a time, each step's mask being the distinct next ids of the answers that
agree with what it chose so far. So every mask is exact and no choice leads to a dead end. The
step handlers here (``<name>_step``), the decisions' finishing handlers (``finish_<kind>``) and the
builders of answers are plain functions; :mod:`gemenvs.gemjam.steps` gathers them into the
engine's tables and runs them. The stack of spells lives in :mod:`gemenvs.gemjam.stack`, spell
targets in :mod:`gemenvs.gemjam.targets`, the cards' effects in :mod:`gemenvs.gemjam.spells`.
"""
from __future__ import annotations

import os
from bisect import insort
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from gemenvs.core.engine import check_bool, check_int
from gemenvs.core.spec import ActionSpec
from gemenvs.gemjam.data import Manifest, load_manifest

PLAYER_COUNTS = (2, 3, 4)
HAND_LIMIT = 7
PLAYS_PER_TURN = 3
SETS_TO_WIN = 4
#: set slots of one Shrine that actions and observations address; a Shrine holding more sets
#: (never seen in random games) is arranged so that these slots hold the sets that matter
#: (:func:`arrange`, docs/gemjam.md "Set slots")
MAX_SETS = 24
#: shown entries of the response stack in the observation
STACK_SHOWN = 6
ADJUST_LABELS = ("none", "move", "swap")


class ShrineSet:
    """One set in a Shrine (docs/gemjam.md, "Sets in the Shrine"); in the state's JSON form the list
    ``[set_id, gem_type, guarded, broken, gems]``."""

    __slots__ = ("set_id", "gem_type", "guarded", "broken", "gems")

    def __init__(self, set_id: int, gem_type: int, guarded: int = 0, broken: int = 0, gems: list | None = None):
        #: unique in the game (``state.next_set`` numbers sets as they are made); spells aim at it
        self.set_id = set_id
        #: the gem type every gem of the set represents
        self.gem_type = gem_type
        #: 1 while a Gem Guardian is attached to it
        self.guarded = guarded
        #: 1 when its owner's adjustment left it incomplete this turn (forfeited at the turn's end
        #: unless complete again)
        self.broken = broken
        #: its gems' kinds, sorted
        self.gems = gems if gems is not None else []

    def copy(self) -> ShrineSet:
        """An independent copy."""
        return ShrineSet(self.set_id, self.gem_type, self.guarded, self.broken, list(self.gems))

    def to_json(self) -> list:
        """The set as the state's JSON form holds it."""
        return [self.set_id, self.gem_type, self.guarded, self.broken, list(self.gems)]

    def __eq__(self, other) -> bool:
        return isinstance(other, ShrineSet) and self.to_json() == other.to_json()

    __hash__ = None

    def __repr__(self) -> str:
        return f"ShrineSet{tuple(self.to_json())}"


class StackEntry:
    """A spell on the response stack with the targets fixed when it was cast (docs/gemjam.md,
    "Spells: casting and the stack"); -1 where a target does not apply. In the state's JSON form a
    dict under the short keys of :data:`STACK_ENTRY_KEYS`."""

    __slots__ = ("kind", "caster", "cancelled", "doublings", "gem_type", "target_player", "target_set",
                 "target_gem", "own_set", "own_gem", "vault", "attached", "double_declined")

    def __init__(self, kind: int, caster: int):
        #: the card's kind
        self.kind = kind
        #: who cast it (the Chaos Cube player after a recast)
        self.caster = caster
        #: 1 once a Counter Spell or Diabolic Denial cancelled it
        self.cancelled = 0
        #: Double Troubles that doubled it (a Gem Jam)
        self.doublings = 0
        #: the Gem Jam's gem type
        self.gem_type = -1
        #: the target player (a seat)
        self.target_player = -1
        #: the target set's ``set_id`` (in the target player's Shrine, else the caster's)
        self.target_set = -1
        #: the target gem's kind (in the target set)
        self.target_gem = -1
        #: Switch: the caster's own set id and gem kind
        self.own_set = -1
        self.own_gem = -1
        #: the Vault searched (Greedy Goblin, Basilisk): a seat, or the number of players for the King's Vault
        self.vault = -1
        #: 1 for a Double Trouble attached to the Gem Jam below it
        self.attached = 0
        #: 1 once the Gem Jam's caster passed on attaching a Double Trouble
        self.double_declined = 0

    def clear_targets(self) -> None:
        """Forget the targets (a Chaos Cube recast chooses them anew)."""
        self.gem_type = self.target_player = self.target_set = self.target_gem = -1
        self.own_set = self.own_gem = self.vault = -1

    def copy(self) -> StackEntry:
        """An independent copy."""
        c = StackEntry.__new__(StackEntry)
        for f in StackEntry.__slots__:
            setattr(c, f, getattr(self, f))
        return c

    def to_json(self) -> dict:
        """The entry as the state's JSON form holds it."""
        return {key: getattr(self, f) for f, key in STACK_ENTRY_KEYS.items()}

    def __eq__(self, other) -> bool:
        return isinstance(other, StackEntry) and self.to_json() == other.to_json()

    __hash__ = None

    def __repr__(self) -> str:
        return f"StackEntry({self.to_json()})"


class Aside:
    """Cards a spell set aside, seen by one seat alone (Eye See!, Lucky Draw, Basilisk; docs/gemjam.md
    "Hidden information"); in the state's JSON form ``{"p": seat, "from": source, "cards": cards}``."""

    __slots__ = ("seat", "source", "cards")

    def __init__(self, seat: int, source: int, cards: list):
        #: the one seat that sees them (the caster)
        self.seat = seat
        #: whose hand or Vault they came from (a seat, or the number of players for the King's Vault)
        self.source = source
        #: their kinds
        self.cards = cards

    def copy(self) -> Aside:
        """An independent copy."""
        return Aside(self.seat, self.source, list(self.cards))

    def to_json(self) -> dict:
        """The cards set aside as the state's JSON form holds them."""
        return {"p": self.seat, "from": self.source, "cards": list(self.cards)}

    def __eq__(self, other) -> bool:
        return isinstance(other, Aside) and self.to_json() == other.to_json()

    __hash__ = None

    def __repr__(self) -> str:
        return f"Aside({self.to_json()})"


class Decision:
    """The question pending for one seat (docs/gemjam.md "Decisions and actions"): a composite choice
    given by every legal complete answer, a list of action ids, answered one id at a time. In the
    state's JSON form a dict ``{"why", "p", "cands", "pre", "ctx", "opts"}``, its context's keys
    spelled as :data:`CONTEXT_KEYS` maps them."""

    __slots__ = ("kind", "seat", "answers", "chosen", "context", "options")

    def __init__(self, kind: str, seat: int, answers: list, context: dict):
        #: what is decided (a key of :data:`gemenvs.gemjam.steps.FINISH`, which applies the answer)
        self.kind = kind
        #: who decides
        self.seat = seat
        #: the legal complete answers that agree with the ids chosen so far
        self.answers = answers
        #: the ids chosen so far
        self.chosen: list[int] = []
        #: what the finishing handler needs besides the answer (keys of :data:`CONTEXT_KEYS`)
        self.context = context
        #: the legal next ids (the mask)
        self.options = sorted({a[0] for a in answers})

    def copy(self) -> Decision:
        """An independent copy."""
        c = Decision.__new__(Decision)
        c.kind, c.seat, c.context = self.kind, self.seat, dict(self.context)
        c.answers = [list(a) for a in self.answers]
        c.chosen, c.options = list(self.chosen), list(self.options)
        return c

    def to_json(self) -> dict:
        """The decision as the state's JSON form holds it."""
        return {"why": self.kind, "p": self.seat, "cands": [list(a) for a in self.answers], "pre": list(self.chosen),
                "ctx": {CONTEXT_KEYS[k]: v for k, v in self.context.items()}, "opts": list(self.options)}

    def __eq__(self, other) -> bool:
        return isinstance(other, Decision) and self.to_json() == other.to_json()

    __hash__ = None

    def __repr__(self) -> str:
        return f"Decision({self.to_json()})"


#: a decision's context keys -> their keys in the state's JSON form (which keeps its short spelling)
CONTEXT_KEYS = {"responder": "i", "receiver": "r", "amount_left": "left", "card": "k", "chaos_cube": "cc",
                "vault": "v", "may_decline": "pass", "reason": "why"}


#: a stack entry's fields -> their keys in the state's JSON form (which keeps its short spelling)
STACK_ENTRY_KEYS = {"kind": "k", "caster": "c", "cancelled": "x", "doublings": "m", "gem_type": "t",
                    "target_player": "tp", "target_set": "s", "target_gem": "g", "own_set": "s2", "own_gem": "g2",
                    "vault": "v", "attached": "dt", "double_declined": "nodt"}


@dataclass(frozen=True)
class Options:
    """Validated Gem Jam options (see ``docs/gemjam.md``)."""

    num_players: int = 3
    turn_decision_limit: int | None = None
    sirens_call: bool = False
    max_rounds: int = 100
    manifest: str | os.PathLike | Mapping | None = None

    def __post_init__(self):
        # stored as checked: a numpy integer or bool becomes a plain int or bool (options() is plain JSON)
        object.__setattr__(self, "num_players",
                           check_int("num_players", self.num_players, min(PLAYER_COUNTS), max(PLAYER_COUNTS)))
        if self.turn_decision_limit is not None:
            object.__setattr__(self, "turn_decision_limit",
                               check_int("turn_decision_limit", self.turn_decision_limit, 1, 1000))
        object.__setattr__(self, "sirens_call", check_bool("sirens_call", self.sirens_call))
        object.__setattr__(self, "max_rounds", check_int("max_rounds", self.max_rounds, 1, 10_000))
        if self.manifest is not None and not isinstance(self.manifest, (str, os.PathLike, Mapping)):
            raise ValueError(f"manifest must be None, a path or a dict; got {type(self.manifest).__name__}")


class Config:
    """Options, manifest tables and the action layout, built once per game."""

    def __init__(self, opts: Options, manifest: Manifest | None = None):
        self.options = opts
        self.manifest = m = manifest if manifest is not None else load_manifest(opts.manifest)
        self.num_players = n = opts.num_players
        self.num_kinds = m.num_kinds
        self.num_types = m.num_types
        self.set_size = m.set_size
        self.basic_of = m.basic_of
        self.gold = m.gold
        self.deck = m.deck(opts.sirens_call)
        self.effect = m.effect
        #: the Nature's Rebirth kinds (docs/gemjam.md "Engine choices": each copy grants its extra play once a turn)
        self.rebirth_kinds = frozenset(m.kind_of_effect.get("natures_rebirth", ()))
        sp = self.actions = ActionSpec()
        names = m.names
        rel = ["self", "+1 (left)", "+2", "+3"][:n]
        if n == 4:
            rel[2] = "+2 (opposite)"
        sp.add("play", meaning="play this card from hand: a gem to the Shrine, or cast a spell (then its choices)",
               labels=names)
        sp.add("bank", meaning="place this gold or spell card from hand face down in the Vault (also: a received "
                               "Guardian or a Basilisk card to the Vault)", labels=names)
        sp.add("end_plays", 1, "end the play stage of one's turn")
        sp.add("adjust", meaning="Stage 1: no adjustment, or start a Move or a Swap", labels=ADJUST_LABELS)
        sp.add("gem_type", meaning="the gem type a gem represents, or a Gem Jam's type", labels=m.type_names)
        sp.add("target_player", meaning="a player, counted clockwise from oneself", labels=rel)
        sp.add("king_vault", 1, "the King's Vault (Greedy Goblin, Basilisk)")
        sp.add("set", MAX_SETS, "set slot s of the Shrine in question (own, or the target player's)")
        sp.add("new_set", 1, "start a new set with the gem")
        sp.add("card", meaning="a card of this kind in the zone in question (hand, Vault, set, Discard Pile, "
                               "cards shown)", labels=names)
        sp.add("yes", 1, "accept an optional effect (draw a card, apply the timer penalty)")
        sp.add("pass", 1, "pass: no reaction, decline an option, return the card")
        self.PLAY = sp["play"].start
        self.BANK = sp["bank"].start
        self.END_PLAYS = sp["end_plays"].start
        self.ADJUST = sp["adjust"].start
        self.GEM_TYPE = sp["gem_type"].start
        self.TARGET_PLAYER = sp["target_player"].start
        self.KING_VAULT = sp["king_vault"].start
        self.SET = sp["set"].start
        self.NEW_SET = sp["new_set"].start
        self.CARD = sp["card"].start
        self.YES = sp["yes"].start
        self.PASS = sp["pass"].start
        self.num_actions = sp.size
        self.set_needs, self.hard_needs = set_needs(self)
        if self.hard_needs > MAX_SETS:
            raise ValueError(f"Gem Jam addresses {MAX_SETS} set slots per Shrine: a manifest may have at most "
                             f"{MAX_SETS - (self.hard_needs - self.num_types)} gem types, this one has "
                             f"{self.num_types}")


class GemJamState:
    """Everything about one Gem Jam game: lists of ints and small dicts, a Shrine's sets as
    :class:`ShrineSet`, the stack as :class:`StackEntry`, cards set aside as :class:`Aside`, the
    pending question as :class:`Decision`; :meth:`to_dict` writes it all as JSON data."""

    __slots__ = ("seed", "log", "rng", "n", "hands", "vaults", "shrines", "draw", "draw_seen", "discard", "king",
                 "recycled", "turn", "round", "plays", "spent_rebirths", "hand_was_empty", "sleep_next", "freeze_next",
                 "asleep", "frozen", "timer", "timer_used", "stack", "resolving", "transit", "aside", "tasks",
                 "decision", "seen_hand", "seen_vault", "next_set", "events", "hidden", "over", "winners", "end_reason")

    @property
    def rebirths(self) -> int:
        """Extra plays Nature's Rebirth granted in this turn's play stage (its spent copies, docs/gemjam.md "Engine
        choices")."""
        return len(self.spent_rebirths)

    def copy(self) -> GemJamState:
        """An independent copy that continues identically (RNG included)."""
        c = GemJamState.__new__(GemJamState)
        for f in ("seed", "n", "recycled", "turn", "round", "plays", "hand_was_empty", "asleep", "frozen",
                  "timer", "timer_used", "next_set", "over", "end_reason"):
            setattr(c, f, getattr(self, f))
        c.log = [list(x) for x in self.log]
        c.rng = np.random.Generator(np.random.PCG64())
        c.rng.bit_generator.state = self.rng.bit_generator.state
        c.hands = [list(h) for h in self.hands]
        c.vaults = [list(v) for v in self.vaults]
        c.shrines = [[s.copy() for s in sh] for sh in self.shrines]
        c.draw, c.draw_seen = list(self.draw), list(self.draw_seen)
        c.discard, c.king = list(self.discard), list(self.king)
        c.spent_rebirths = [list(x) for x in self.spent_rebirths]
        c.sleep_next, c.freeze_next = list(self.sleep_next), list(self.freeze_next)
        c.stack = [e.copy() for e in self.stack]
        c.resolving, c.transit, c.winners = list(self.resolving), list(self.transit), list(self.winners)
        c.aside = None if self.aside is None else self.aside.copy()
        c.tasks = [list(t) for t in self.tasks]
        c.decision = None if self.decision is None else self.decision.copy()
        c.seen_hand = [[list(x) for x in row] for row in self.seen_hand]
        c.seen_vault = [[list(x) for x in row] for row in self.seen_vault]
        c.events = list(self.events)  # events are immutable lists once written
        c.hidden = list(self.hidden)
        return c

    def to_dict(self) -> dict:
        """The whole state as JSON data (the core rebuilds it from "seed" and "log")."""
        d = {f: _clone(getattr(self, f)) for f in self.__slots__ if f != "rng"}
        d["rng"] = _clone(self.rng.bit_generator.state)
        return d

    def __eq__(self, other) -> bool:
        return isinstance(other, GemJamState) and self.to_dict() == other.to_dict()

    __hash__ = None


def _clone(x):
    """A deep copy of JSON-like data (lists, dicts, scalars)."""
    if isinstance(x, list):
        return [_clone(v) for v in x]
    if isinstance(x, dict):
        return {k: _clone(v) for k, v in x.items()}
    if isinstance(x, (ShrineSet, StackEntry, Decision, Aside)):
        return x.to_json()
    return x


# ---------------------------------------------------------------------------------- setup


def new_state(cfg: Config, seed: int) -> GemJamState:
    """Setup (docs/gemjam.md "Setup and turn"): shuffle, deal 5 to each player and 5 to the King's Vault, the rest
    is the Draw Pile."""
    n = cfg.num_players
    s = GemJamState.__new__(GemJamState)
    s.seed, s.log, s.n = int(seed), [], n
    s.rng = np.random.default_rng(seed)
    deck = list(cfg.deck)
    order = s.rng.permutation(len(deck))
    deck = [deck[int(i)] for i in order]
    s.hands = [sorted(deck[5 * p:5 * p + 5]) for p in range(n)]
    s.king = sorted(deck[5 * n:5 * n + 5])
    s.draw = deck[5 * n + 5:]
    s.draw_seen = [0] * len(s.draw)
    s.vaults = [[] for _ in range(n)]
    s.shrines = [[] for _ in range(n)]
    s.discard = []
    s.recycled = 0
    s.turn, s.round = 0, 1
    s.spent_rebirths = []
    s.plays = s.hand_was_empty = s.asleep = s.frozen = s.timer = s.timer_used = 0
    s.sleep_next, s.freeze_next = [0] * n, [0] * n
    s.stack, s.resolving, s.transit, s.aside = [], [], [], None
    s.tasks = [["turn_start"]]
    s.decision = None
    s.seen_hand = [[[] for _ in range(n)] for _ in range(n)]
    s.seen_vault = [[[] for _ in range(n + 1)] for _ in range(n)]
    s.next_set = 0
    s.events = []
    s.hidden = []
    s.over, s.winners, s.end_reason = 0, [], ""
    return s


# ---------------------------------------------------------------------------------- decisions


def ask(state: GemJamState, cfg: Config, p: int, why: str, cands: list, ctx: dict | None = None) -> None:
    """Put a composite decision to seat ``p``: ``cands`` are its legal complete answers (id tuples).
    Always the last thing a step does (the steps below it on ``tasks`` run after the answer)."""
    if not cands:
        raise AssertionError(f"decision {why!r} for seat {p} has no legal answer")
    state.decision = Decision(why, p, cands, ctx or {})


def event(state: GemJamState, *items, to: int = -1) -> None:
    """Record a game-log event (``to``: -1 public, else the only seat that may see it)."""
    state.events.append([to, *items])


# ---------------------------------------------------------------------------------- sets


def is_complete(cfg: Config, s: ShrineSet) -> bool:
    """Whether a set holds exactly its type's set size of gems, a Basic of the type among them (docs/gemjam.md "Sets
    in the Shrine")."""
    return len(s.gems) == cfg.set_size[s.gem_type] and cfg.basic_of[s.gem_type] in s.gems


def complete_sets(state: GemJamState, cfg: Config, p: int) -> int:
    """Number of completed sets in ``p``'s Shrine."""
    return sum(1 for s in state.shrines[p] if is_complete(cfg, s))


def find_set(state: GemJamState, p: int, set_id: int) -> ShrineSet | None:
    """``p``'s set with id ``set_id``, or None when it is gone (or belongs to someone else now)."""
    for s in state.shrines[p]:
        if s.set_id == set_id:
            return s
    return None


def remove_gem(state: GemJamState, p: int, s: ShrineSet, kind: int) -> None:
    """Take one gem of ``kind`` out of set ``s`` of ``p``; an emptied set disappears."""
    s.gems.remove(kind)
    if not s.gems:
        state.shrines[p].remove(s)


def opponent_basic_types(state: GemJamState, cfg: Config, p: int) -> list[int]:
    """Types of Basic Gems now in opponents' Shrines (Mirror Madness sources, docs/gemjam.md "Sets in the Shrine")."""
    out = set()
    for q in range(state.n):
        if q != p:
            for s in state.shrines[q]:
                if cfg.basic_of[s.gem_type] in s.gems:
                    out.add(s.gem_type)
    return sorted(out)


def gem_types_for(state: GemJamState, cfg: Config, p: int, kind: int) -> list[int]:
    """Types ``p`` may give a gem of ``kind`` it places from hand (Mirror Madness: opponents' Basics)."""
    if cfg.effect[kind] == "mirror_madness":
        return opponent_basic_types(state, cfg, p)
    return list(cfg.manifest.types[kind])


def set_needs(cfg: Config) -> tuple[list, int]:
    """What the set slots of a Shrine with more than ``MAX_SETS`` sets must reach, in order: tests
    on one set, each met by the first set that meets it unless an earlier choice does. The first
    ``hard`` make every decision that addresses sets exactly as the rules have it: a gem's
    destination (a set of its type with room, one per type), a Guardian to pay, a completed
    unprotected set (Dragon's Loot, Armageddon, Gem Guardian, a received Guardian), an unprotected
    Basic (Tsunami, Golem Grab), an incomplete set (Meteor Strike, Rat!, Switch, Forced Wager), a
    payable gem, an unprotected gem (a Move, a Counter Spell return). The rest widen the choices as
    far as the slots allow: each gem kind in an incomplete set (a gem to target), each payable kind
    in an unprotected set (a card to pay). Returns (tests, hard). See docs/gemjam.md "Set slots"."""
    m, size, basic_of = cfg.manifest, cfg.set_size, cfg.basic_of
    paying = [bool(m.is_basic[k] or m.is_dual[k]) for k in range(cfg.num_kinds)]

    def complete(s):
        return len(s.gems) == size[s.gem_type] and basic_of[s.gem_type] in s.gems

    def room(t):
        return lambda s: s.gem_type == t and len(s.gems) < size[t]

    needs = [room(t) for t in range(cfg.num_types)] + [
        lambda s: s.guarded,
        lambda s: not s.guarded and complete(s),
        lambda s: not s.guarded and basic_of[s.gem_type] in s.gems,
        lambda s: not complete(s),
        lambda s: not s.guarded and any(paying[k] for k in s.gems),
        lambda s: not s.guarded,
    ]
    hard = len(needs)
    for k in range(cfg.num_kinds):
        if m.is_gem[k]:
            needs.append(lambda s, k=k: k in s.gems and not complete(s))
        if paying[k]:
            needs.append(lambda s, k=k: k in s.gems and not s.guarded)
    return needs, hard


def arrange(state: GemJamState, cfg: Config) -> None:
    """Give every Shrine of more than ``MAX_SETS`` sets the order its slots address (**Engine
    choice**, docs/gemjam.md "Set slots"): first the sets chosen by :func:`set_needs`, then the
    others, each group in its former order. It depends only on what every seat sees, and once
    arranged a Shrine stays as it is until its sets change; a Shrine of at most ``MAX_SETS`` sets
    keeps its order (the order the sets were made or arrived in). Every decision that addresses
    sets arranges them first."""
    needs = cfg.set_needs
    for shrine in state.shrines:
        if len(shrine) <= MAX_SETS:
            continue
        chosen: list[int] = []
        for need in needs:
            if len(chosen) == MAX_SETS:
                break
            if any(need(shrine[j]) for j in chosen):
                continue
            for j, s in enumerate(shrine):
                if need(s):
                    chosen.append(j)
                    break
        first = set(chosen)
        shrine[:] = [shrine[j] for j in sorted(first)] + [s for j, s in enumerate(shrine) if j not in first]


def destinations(state: GemJamState, cfg: Config, p: int, t: int, exclude: int = -1) -> list[int]:
    """Where a gem of type ``t`` entering ``p``'s Shrine may go: an incomplete set of ``t`` with room (the
    owner chooses), else a new set (docs/gemjam.md "Sets in the Shrine"). Call :func:`arrange` first (then a
    set of ``t`` with room, if any, has a slot)."""
    out = [cfg.SET + i for i, s in enumerate(state.shrines[p])
           if i != exclude and s.gem_type == t and len(s.gems) < cfg.set_size[t] and i < MAX_SETS]
    return out or [cfg.NEW_SET]


def put_gem(state: GemJamState, cfg: Config, p: int, kind: int, t: int, dest: int) -> ShrineSet:
    """Place a gem of ``kind`` as type ``t`` at ``dest`` (a ``set`` or ``new_set`` action id); returns its set."""
    if dest == cfg.NEW_SET:
        s = ShrineSet(state.next_set, t, gems=[kind])
        state.next_set += 1
        state.shrines[p].append(s)
        return s
    s = state.shrines[p][dest - cfg.SET]
    insort(s.gems, kind)
    return s


def place_cands(state: GemJamState, cfg: Config, p: int, types) -> list:
    """Candidate answers [gem_type, destination] for a gem of the given possible types."""
    arrange(state, cfg)
    return [[cfg.GEM_TYPE + t, d] for t in types for d in destinations(state, cfg, p, t)]


def receive_gem(state: GemJamState, cfg: Config, p: int, kind: int, keep_type: int = -1) -> None:
    """A gem arrives in ``p``'s Shrine (payment, theft, swap): ``p`` chooses its type (a Mirror Madness keeps
    ``keep_type``) and its set (docs/gemjam.md "Sets in the Shrine"). Asks, so call it last."""
    state.transit.append(kind)
    if cfg.effect[kind] == "mirror_madness" and keep_type >= 0:
        types = [keep_type]
    else:
        types = cfg.manifest.types[kind]
    ask(state, cfg, p, "place", place_cands(state, cfg, p, types), {"card": kind})


def finish_place(state, cfg, p, pre, ctx):
    state.transit.remove(ctx["card"])
    put_gem(state, cfg, p, ctx["card"], pre[0] - cfg.GEM_TYPE, pre[1])


# ---------------------------------------------------------------------------------- cards and knowledge


def hand_remove(state: GemJamState, p: int, kind: int, public: bool = True) -> None:
    """Take a card of ``kind`` out of ``p``'s hand (``public``: everyone sees which, so others'
    knowledge of that card in the hand is used up)."""
    state.hands[p].remove(kind)
    if public:
        for q in range(state.n):
            seen = state.seen_hand[q][p]
            if q != p and kind in seen:
                seen.remove(kind)


def hand_add_public(state: GemJamState, p: int, kind: int) -> None:
    """A card everyone saw goes to ``p``'s hand (Reanimate, Nature's Rebirth, Forced Wager, a return)."""
    insort(state.hands[p], kind)
    for q in range(state.n):
        if q != p:
            insort(state.seen_hand[q][p], kind)


def vault_add_public(state: GemJamState, p: int, kind: int) -> None:
    """A card everyone saw goes to ``p``'s Vault (a received payment, docs/gemjam.md "Gem Jam and payments")."""
    insort(state.vaults[p], kind)
    for q in range(state.n):
        if q != p:
            insort(state.seen_vault[q][p], kind)


def vault_remove(state: GemJamState, p: int, kind: int, public: bool = True) -> None:
    """Take a card out of Vault ``p`` (``p == n``: the King's Vault)."""
    zone = state.king if p == state.n else state.vaults[p]
    zone.remove(kind)
    if public:
        for q in range(state.n):
            seen = state.seen_vault[q][p]
            if q != p and kind in seen:
                seen.remove(kind)


def to_king(state: GemJamState, kinds) -> None:
    """Destroyed or forfeited gems shuffled face down into the King's Vault (it has no order);
    every player saw which gems went there, so each knows them there (docs/gemjam.md "Hidden
    information")."""
    for k in kinds:
        insort(state.king, k)
        for q in range(state.n):
            insort(state.seen_vault[q][state.n], k)


# Each Nature's Rebirth card grants its extra play at most once a turn (docs/gemjam.md "Engine choices").
# Cards are handled by kind, so the copies that granted it this turn ("spent") are known by the zone they are
# in: ``state.spent_rebirths`` is a sorted list of [zone, kind] pairs, one per spent copy, the zones being
# "discard", "draw", "stack" (cast, resolving, on its way to the Discard Pile), "aside" (set aside by a
# spell), "hand<p>" and "vault<p>". Every move of a card between these zones calls :func:`move_rebirth` (or
# :func:`move_all_rebirths`); the list empties when the play stage ends (nothing is cast after it).


def zone_cards(state: GemJamState, zone: str) -> list:
    """The cards (kinds) now in ``zone`` (a zone name of ``spent_rebirths``)."""
    if zone == "discard":
        return state.discard
    if zone == "draw":
        return state.draw
    if zone == "aside":
        return state.aside.cards if state.aside else []
    if zone == "stack":
        return [e.kind for e in state.stack] + state.resolving
    if zone.startswith("hand"):
        return state.hands[int(zone[4:])]
    return state.vaults[int(zone[5:])]


def spent_in(state: GemJamState, zone: str, kind: int) -> int:
    """How many of the ``kind`` cards in ``zone`` are spent Nature's Rebirths (docs/gemjam.md "Engine choices")."""
    return state.spent_rebirths.count([zone, kind])


def move_rebirth(state: GemJamState, cfg: Config, kind: int, src: str, dst: str, pick: str) -> None:
    """Call just before one card of ``kind`` leaves zone ``src`` for ``dst``: the spent mark moves
    with it when the copy that moves is a spent Nature's Rebirth. Which copy moves, ``pick``:
    "random" (a random card of the zone: spent with probability spent/copies, from the state's
    RNG), "unspent" (a chosen card taken or cast: the unspent copy while there is one), "spent"
    (a chosen card given up, discarded, banked or paid: the spent copy first). Between otherwise
    identical cards these are the dominant choices (**Engine choice**, docs/gemjam.md)."""
    if kind not in cfg.rebirth_kinds:
        return
    spent = spent_in(state, src, kind)
    if not spent:
        return
    copies = zone_cards(state, src).count(kind)
    if pick == "spent":
        moves = True
    elif pick == "unspent":
        moves = spent >= copies
    else:
        moves = spent >= copies or int(state.rng.integers(copies)) < spent
    if moves:
        state.spent_rebirths.remove([src, kind])
        insort(state.spent_rebirths, [dst, kind])


def move_all_rebirths(state: GemJamState, src: str, dst: str) -> None:
    """Every card of zone ``src`` goes to ``dst`` (a recycle, cards set aside going back)."""
    if any(z == src for z, _ in state.spent_rebirths):
        state.spent_rebirths = sorted([dst if z == src else z, k] for z, k in state.spent_rebirths)


def discard_card(state: GemJamState, kind: int) -> None:
    """A card onto the face-up Discard Pile."""
    state.discard.append(kind)


def draw_one(state: GemJamState, cfg: Config, p: int, zone: str = "") -> int:
    """``p`` draws one card into its hand and gets its kind; the first run-out recycles the Discard Pile, the
    second (or an empty recycle) ends the game at once (docs/gemjam.md "The end"): then -1. ``zone``: where a
    spent Nature's Rebirth drawn is counted (default its hand; Lucky Draw's cards go aside)."""
    if not state.draw:
        if not state.recycled:
            state.recycled = 1
            pile = state.discard
            state.discard = []
            order = state.rng.permutation(len(pile))
            state.draw = [pile[int(i)] for i in order]
            state.draw_seen = [0] * len(pile)
            move_all_rebirths(state, "discard", "draw")
            event(state, "recycle", len(pile))
        if not state.draw:
            end_by_count(state, cfg, "deck_out")
            return -1
    # after a recycle in this turn the Draw Pile is a shuffle of the old Discard Pile (cards are
    # put under it only at the end of a turn), so a Nature's Rebirth drawn is any of its copies there
    move_rebirth(state, cfg, state.draw[-1], "draw", zone or f"hand{p}", "random")
    c = state.draw.pop()
    bits = state.draw_seen.pop()
    insort(state.hands[p], c)
    if bits:
        for q in range(state.n):
            if q != p and bits >> q & 1:
                insort(state.seen_hand[q][p], c)
    return c


def draw_cards(state: GemJamState, cfg: Config, p: int, count: int) -> bool:
    """``p`` draws ``count`` cards (see :func:`draw_one`); False when the game ended."""
    for _ in range(count):
        if draw_one(state, cfg, p) < 0:
            return False
    return True


def draw_step(state, cfg, t):
    """``["draw", p, count]``: ``p`` draws ``count`` cards."""
    _, p, count = t
    draw_cards(state, cfg, p, count)


def discard_step(state, cfg, t):
    """``["discard", p, count]``: ``p`` discards ``count`` cards of its choice, one at a time, if it can."""
    _, p, count = t
    if count <= 0 or not state.hands[p]:
        return
    if count > 1:
        state.tasks.append(["discard", p, count - 1])
    ask(state, cfg, p, "discard", build_hand_choice(state, cfg, p, None))


def build_hand_choice(state, cfg, p, ctx):
    """One [card] answer per distinct kind in ``p``'s hand."""
    return [[cfg.CARD + k] for k in sorted(set(state.hands[p]))]


def finish_discard(state, cfg, p, pre, ctx):
    k = pre[0] - cfg.CARD
    move_rebirth(state, cfg, k, f"hand{p}", "discard", "spent")
    hand_remove(state, p, k)
    discard_card(state, k)
    event(state, "discard", p, k)


def yes_draw_step(state, cfg, t):
    """``["yes_draw", p, why]``: ``p`` may draw one card (Armageddon, Forced Wager, Lucky Draw)."""
    _, p, reason = t
    ask(state, cfg, p, "may_draw", [[cfg.YES], [cfg.PASS]], {"reason": reason})


def finish_may_draw(state, cfg, p, pre, ctx):
    if pre[0] == cfg.YES:
        event(state, "draws", p, 1)
        draw_cards(state, cfg, p, 1)


# ---------------------------------------------------------------------------------- payments


def payable(state: GemJamState, cfg: Config, p: int) -> tuple[list, int]:
    """The payment answers of ``p`` ([card] from the Vault, [set, card] from the Shrine: a Guardian before any
    gem of its set) and the value of everything eligible (docs/gemjam.md "Gem Jam and payments")."""
    gold = cfg.gold
    arrange(state, cfg)
    cands, total = [], 0
    v = state.vaults[p]
    for k in sorted(set(v)):
        if gold[k] > 0:
            cands.append([cfg.CARD + k])
    total += sum(gold[k] for k in v)
    is_payable_gem = cfg.manifest.is_basic, cfg.manifest.is_dual
    for i, s in enumerate(state.shrines[p]):
        gems = s.gems
        total += sum(gold[k] for k in gems if is_payable_gem[0][k] or is_payable_gem[1][k])
        if s.guarded:
            total += gold[cfg.manifest.guardian]
        if i >= MAX_SETS:
            continue  # arranged: a set that no slot reaches holds nothing a slot does not offer
        if s.guarded:
            cands.append([cfg.SET + i, cfg.CARD + cfg.manifest.guardian])
        else:
            for k in sorted(set(gems)):
                if is_payable_gem[0][k] or is_payable_gem[1][k]:
                    cands.append([cfg.SET + i, cfg.CARD + k])
    return cands, total


def pay_step(state, cfg, t):
    """``["pay", payer, receiver, amount]``: one card at a time, chosen by the payer, until the
    amount is covered; when everything eligible does not cover it, all of it goes and the rest is
    forgiven (docs/gemjam.md "Gem Jam and payments")."""
    _, payer, recv, left = t
    if left <= 0:
        return
    cands, _ = payable(state, cfg, payer)
    if not cands:
        event(state, "forgiven", payer, left)
        return
    # every eligible card is offered, whether or not everything eligible covers the amount: the
    # receiver places each card before the next, so even when all of it goes the order decides
    # where cards land (a Guardian received before the gem that completes a set cannot guard it).
    # A short payment is thus asked exactly like any other (a step with one legal answer is
    # forced, as everywhere), and nothing others see tells whether the payer's cards cover the
    # debt (docs/gemjam.md "Gem Jam and payments", "Hidden information")
    ask(state, cfg, payer, "pay", cands, {"receiver": recv, "amount_left": left})


def build_pay(state, cfg, p, ctx):
    """The payer's payment answers (rebuilt when its Vault is redrawn)."""
    return payable(state, cfg, p)[0]


def finish_pay(state, cfg, p, pre, ctx):
    transfer(state, cfg, p, ctx["receiver"], ctx["amount_left"], pre)


def transfer(state: GemJamState, cfg: Config, payer: int, recv: int, left: int, choice: list) -> None:
    """Move one paid card from ``payer`` to ``recv``; the receiver places it before the next (docs/gemjam.md "Gem
    Jam and payments")."""
    if choice[0] >= cfg.SET and choice[0] < cfg.SET + MAX_SETS:
        s = state.shrines[payer][choice[0] - cfg.SET]
        k = choice[1] - cfg.CARD
        if k == cfg.manifest.guardian and s.guarded:
            s.guarded = 0
        else:
            remove_gem(state, payer, s, k)
    else:
        k = choice[0] - cfg.CARD
        move_rebirth(state, cfg, k, f"vault{payer}", f"vault{recv}", "spent")  # a spell paid goes to a Vault
        vault_remove(state, payer, k)
    event(state, "paid", payer, recv, k)
    state.tasks.append(["pay", payer, recv, left - cfg.gold[k]])
    receive_card(state, cfg, recv, k)


def receive_card(state: GemJamState, cfg: Config, p: int, k: int) -> None:
    """A paid card is placed by its receiver according to its type (docs/gemjam.md "Gem Jam and payments")."""
    m = cfg.manifest
    if k == m.guardian:
        state.transit.append(k)
        arrange(state, cfg)
        sets = [[cfg.SET + i] for i, s in enumerate(state.shrines[p])
                if i < MAX_SETS and not s.guarded and is_complete(cfg, s)]
        ask(state, cfg, p, "receive_guardian", sets + [[cfg.BANK + k]], {"card": k})
    elif m.is_basic[k] or m.is_dual[k]:
        receive_gem(state, cfg, p, k)
    else:
        vault_add_public(state, p, k)


def finish_receive_guardian(state, cfg, p, pre, ctx):
    k = ctx["card"]
    state.transit.remove(k)
    if pre[0] == cfg.BANK + k:
        vault_add_public(state, p, k)
    else:
        state.shrines[p][pre[0] - cfg.SET].guarded = 1
        event(state, "guard", p, state.shrines[p][pre[0] - cfg.SET].set_id)


# ---------------------------------------------------------------------------------- the turn


def designated(cfg: Config, p: int) -> int:
    """The seat that may apply the timer penalty to ``p`` (docs/gemjam.md "Timer option"): the other, the left, the
    opposite."""
    return (p + (2 if cfg.num_players == 4 else 1)) % cfg.num_players


def end_by_count(state: GemJamState, cfg: Config, reason: str) -> None:
    """End by deck-out or ``max_rounds``: most completed sets wins, ties share (docs/gemjam.md "The end")."""
    counts = [complete_sets(state, cfg, p) for p in range(state.n)]
    best = max(counts)
    end_game(state, cfg, [p for p in range(state.n) if counts[p] == best], reason)


def end_game(state: GemJamState, cfg: Config, winners: list[int], reason: str) -> None:
    """The game is over; Siren's Call's losing penalty is an event for every non-winner (docs/gemjam.md "The end")."""
    state.over = 1
    state.winners = winners
    state.end_reason = reason
    state.decision = None
    event(state, "end", reason, list(winners))
    if cfg.options.sirens_call and len(winners) == 1:
        for p in range(state.n):
            if p not in winners:
                event(state, "siren_loser", p)


def check_win(state: GemJamState, cfg: Config) -> bool:
    """The turn player wins with four completed sets, in its own turn, nothing pending (docs/gemjam.md "The end")."""
    p = state.turn
    if complete_sets(state, cfg, p) >= SETS_TO_WIN:
        end_game(state, cfg, [p], "four_sets")
        return True
    return False


def timer_due(state: GemJamState, cfg: Config, step: str) -> bool:
    """Count a top-level decision of the turn player; past ``turn_decision_limit`` the designated
    opponent first decides on the penalty, once a turn (docs/gemjam.md "Timer option"). True when it was asked."""
    state.timer += 1
    limit = cfg.options.turn_decision_limit
    if limit is None or state.timer <= limit or state.timer_used:
        return False
    state.timer_used = 1
    if not state.hands[state.turn]:
        return False
    state.tasks.append([step, 1])
    ask(state, cfg, designated(cfg, state.turn), "timer", [[cfg.YES], [cfg.PASS]])
    return True


def finish_timer(state, cfg, p, pre, ctx):
    if pre[0] == cfg.YES:
        hand = state.hands[state.turn]
        k = hand[int(state.rng.integers(len(hand)))]
        move_rebirth(state, cfg, k, f"hand{state.turn}", "discard", "random")
        hand_remove(state, state.turn, k)
        discard_card(state, k)
        event(state, "timer", p, state.turn, k)
    else:
        event(state, "timer_declined", p, state.turn)


def turn_start_step(state, cfg, t):
    """``["turn_start"]``: a turn begins (plays, timer, Sleep and Freeze set), after the win check."""
    p = state.turn
    state.plays, state.timer, state.timer_used = PLAYS_PER_TURN, 0, 0
    state.hand_was_empty = int(not state.hands[p])
    state.asleep, state.sleep_next[p] = state.sleep_next[p], 0
    state.frozen, state.freeze_next[p] = state.freeze_next[p], 0
    event(state, "turn", p, state.round)
    if check_win(state, cfg):
        return
    state.tasks.append(["after_adjust"])
    state.tasks.append(["adjust", 0])


def adjust_step(state, cfg, t):
    """``["adjust", timer_asked]``: the turn player's Stage 1 adjustment (after the timer penalty
    question, unless it was just asked)."""
    _, timer_asked = t
    if not timer_asked and timer_due(state, cfg, "adjust"):
        return
    ask(state, cfg, state.turn, "adjust", adjust_cands(state, cfg, state.turn))


def after_adjust_step(state, cfg, t):
    """``["after_adjust"]``: the win check again, then the turn's draw."""
    # the win check runs again after the adjustment, before the draw (docs/gemjam.md "Setup and turn")
    if check_win(state, cfg):
        return
    p = state.turn
    count = 5 if state.hand_was_empty else 2
    state.tasks.append(["plays", 0])
    draw_cards(state, cfg, p, count)


def turn_end_step(state, cfg, t):
    """``["turn_end"]``: the hand limit, the restore check, then the next player's turn."""
    p = state.turn
    state.spent_rebirths = []  # "once per turn"; nothing is cast after the play stage (docs/gemjam.md "Engine choices")
    hand = state.hands[p]
    if len(hand) > HAND_LIMIT:
        state.tasks.append(["turn_end"])
        ask(state, cfg, p, "bottom", build_hand_choice(state, cfg, p, None))
        return
    # Stage 4 (docs/gemjam.md "Adjustments and voluntary breaks"): a set this player broke by its own
    # adjustment must be complete again
    for s in list(state.shrines[p]):
        if s.broken:
            s.broken = 0
            if not is_complete(cfg, s):
                state.shrines[p].remove(s)
                to_king(state, s.gems)
                event(state, "forfeit", p, list(s.gems))
    state.turn = (p + 1) % state.n
    if state.turn == 0:
        if state.round >= cfg.options.max_rounds:
            end_by_count(state, cfg, "max_rounds")
            return
        state.round += 1
    state.tasks.append(["turn_start"])


def finish_bottom(state, cfg, p, pre, ctx):
    # one at a time, each below the previous; only their owner knows them (docs/gemjam.md "Setup and turn")
    k = pre[0] - cfg.CARD
    hand_remove(state, p, k, public=False)
    state.draw.insert(0, k)
    state.draw_seen.insert(0, 1 << p)
    event(state, "bottom", p)


# ---------------------------------------------------------------------------------- adjustments


def _permits(cfg: Config, kind: int, t: int, current: int, opp_basics: list[int]) -> bool:
    """Whether a gem of ``kind`` now representing ``current`` may represent ``t`` after an adjustment."""
    if cfg.effect[kind] == "mirror_madness":
        return t == current or t in opp_basics
    return t in cfg.manifest.types[kind]


def adjust_cands(state: GemJamState, cfg: Config, p: int) -> list:
    """Stage 1 answers (docs/gemjam.md "Adjustments and voluntary breaks"): [adjust none]; [move, set, card,
    gem_type, destination]; [swap, set, card, set, card] (different sets, different cards, each permitted the
    other's type)."""
    m = cfg.manifest
    A = cfg.ADJUST
    out = [[A]]
    arrange(state, cfg)
    shrine = state.shrines[p]
    has_mirror = any(cfg.effect[k] == "mirror_madness" for s in shrine for k in s.gems)
    opp = opponent_basic_types(state, cfg, p) if has_mirror else []
    free = [(i, s) for i, s in enumerate(shrine) if not s.guarded and i < MAX_SETS]
    room = [[] for _ in range(cfg.num_types)]  # per type: the sets with room, as destinations() lists them
    for i, s in enumerate(shrine):
        if len(s.gems) < cfg.set_size[s.gem_type]:
            room[s.gem_type].append(i)
    # per free set: its distinct gems, each with the types it is permitted (computed once)
    permitted = {i: [(k, [t for t in range(cfg.num_types) if _permits(cfg, k, t, s.gem_type, opp)])
                     for k in sorted(set(s.gems))] for i, s in free}
    for i, s in free:
        cur = s.gem_type
        alone = len(s.gems) == 1
        for k, ok in permitted[i]:
            for t in ([cur] if m.is_basic[k] else ok):
                others = [j for j in room[t] if j != i]
                dests = [cfg.SET + j for j in others if j < MAX_SETS] or [cfg.NEW_SET]
                if others and dests == [cfg.NEW_SET]:
                    # the type's set with room in the slots is the source itself and the others lie
                    # beyond them (a Shrine of more than MAX_SETS sets): this Move is not offered
                    continue
                if dests == [cfg.NEW_SET] and t == cur and alone:
                    # a lone gem never moves to a new set of its own type (docs/gemjam.md "Adjustments and voluntary
                    # breaks")
                    continue
                for d in dests:
                    out.append([A + 1, cfg.SET + i, cfg.CARD + k, cfg.GEM_TYPE + t, d])
    for x, (i, s) in enumerate(free):
        for j, s2 in free[x + 1:]:
            for k1, ok1 in permitted[i]:
                if s2.gem_type not in ok1:
                    continue
                for k2, ok2 in permitted[j]:
                    if k2 != k1 and s.gem_type in ok2:
                        out.append([A + 2, cfg.SET + i, cfg.CARD + k1, cfg.SET + j, cfg.CARD + k2])
    return out


def finish_adjust(state, cfg, p, pre, ctx):
    if pre[0] == cfg.ADJUST:
        return
    shrine = state.shrines[p]
    before = {s.set_id: is_complete(cfg, s) for s in shrine}
    if pre[0] == cfg.ADJUST + 1:
        src = shrine[pre[1] - cfg.SET]
        k, t, d = pre[2] - cfg.CARD, pre[3] - cfg.GEM_TYPE, pre[4]
        dest = None if d == cfg.NEW_SET else shrine[d - cfg.SET]
        remove_gem(state, p, src, k)
        if dest is None:
            put_gem(state, cfg, p, k, t, cfg.NEW_SET)
        else:
            insort(dest.gems, k)
        event(state, "move", p, k, t)
    else:
        s1, s2 = shrine[pre[1] - cfg.SET], shrine[pre[3] - cfg.SET]
        k1, k2 = pre[2] - cfg.CARD, pre[4] - cfg.CARD
        s1.gems.remove(k1)
        s2.gems.remove(k2)
        insort(s1.gems, k2)
        insort(s2.gems, k1)
        event(state, "swap", p, k1, k2)
    # an adjustment that leaves a complete set incomplete marks it broken this turn (docs/gemjam.md "Adjustments and
    # voluntary breaks")
    for s in shrine:
        if before.get(s.set_id) and not is_complete(cfg, s):
            s.broken = 1
