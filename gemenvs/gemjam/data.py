"""Gem Jam components as data: the card manifest (gem types, set sizes, payment tables, card kinds), validated.

The default manifest is ``manifest.json`` next to this module (the 172-card reference deck plus the 3 optional
Siren's Call, docs/gemjam.md "Components: the card manifest"). Another can be passed to the game as the
``manifest`` option: a path to a JSON file of the same format, or the parsed dict. Anything malformed raises
:class:`ManifestError` naming the offending entry.

Cards are handled by *kind* (an index into ``cards``): copies of one card are interchangeable,
and every zone of the game is a list of kinds (docs/gemjam.md "Engine choices").
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gemenvs.core.datafile import read_json_source

MANIFEST_FORMAT = "gemenvs.gemjam.manifest/1"
DEFAULT_MANIFEST = Path(__file__).with_name("manifest.json")
CATEGORIES = ("basic", "dual", "wildcard", "gold", "spell")
#: wildcard effects: which types each may represent and what playing it from hand does
WILDCARD_EFFECTS = ("rainbow_gem", "magic_mushroom", "poison_cup", "mirror_madness")
#: every spell effect the engine implements (one function each in :mod:`gemenvs.gemjam.spells`, gathered in
#: :data:`gemenvs.gemjam.steps.EFFECTS`)
SPELL_EFFECTS = (
    "any_gem_jam", "paired_gem_jam", "double_trouble", "shakedown", "kings_ransom",
    "dragons_loot", "armageddon", "meteor_strike", "tsunami", "rat", "switch", "golem_grab", "forced_wager",
    "eye_see", "howling_fear", "take_two", "lucky_draw", "fire_reborn", "reanimate", "natures_rebirth",
    "greedy_goblin", "basilisk", "gem_guardian", "counter_spell", "diabolic_denial", "chaos_cube",
    "sleep_spell", "freeze", "sirens_call",
)
#: the reactive spells: cast only in a response window (docs/gemjam.md "Spells: casting and the stack")
REACTIVE = ("counter_spell", "diabolic_denial", "chaos_cube")
#: spells that target a player's gems or sets, the ones Chaos Cube can take (docs/gemjam.md "Spells: casting and the
#: stack")
GEM_TARGETING = ("dragons_loot", "armageddon", "meteor_strike", "tsunami", "rat", "switch", "golem_grab",
                 "forced_wager")
_TYPE_KEYS = {"name", "set_size", "payment"}
_CARD_KEYS = {"name", "category", "count", "gold", "types", "effect", "optional"}


class ManifestError(ValueError):
    """A Gem Jam card manifest that is malformed (the message names the entry and the problem)."""


class Manifest:
    """The validated contents of a card manifest; a card *kind* indexes every per-kind tuple."""

    def __init__(self, types: list[Mapping], cards: list[Mapping], source: str):
        self.source = source
        self.type_names: tuple[str, ...] = tuple(t["name"] for t in types)
        self.set_size: tuple[int, ...] = tuple(t["set_size"] for t in types)
        self.payment: tuple[tuple[int, ...], ...] = tuple(tuple(t["payment"]) for t in types)
        self.names: tuple[str, ...] = tuple(c["name"] for c in cards)
        self.category: tuple[str, ...] = tuple(c["category"] for c in cards)
        self.count: tuple[int, ...] = tuple(c["count"] for c in cards)
        self.gold: tuple[int, ...] = tuple(c["gold"] for c in cards)
        self.optional: tuple[bool, ...] = tuple(bool(c.get("optional", False)) for c in cards)
        self.effect: tuple[str, ...] = tuple(c.get("effect", c["category"]) for c in cards)
        ti = {t: i for i, t in enumerate(self.type_names)}
        nt = len(self.type_names)
        types_of = []
        for c in cards:
            if c["category"] == "wildcard":
                # Mirror Madness narrows this at play time (docs/gemjam.md "Sets in the Shrine")
                types_of.append(tuple(range(nt)))
            else:
                types_of.append(tuple(ti[t] for t in c.get("types", ())))
        #: per kind: the gem types it may represent (a Gem Jam's choosable types for a paired Gem Jam)
        self.types: tuple[tuple[int, ...], ...] = tuple(types_of)
        k = len(cards)
        self.num_kinds = k
        self.num_types = nt
        self.is_gem = tuple(c in ("basic", "dual", "wildcard") for c in self.category)
        self.is_basic = tuple(c == "basic" for c in self.category)
        self.is_dual = tuple(c == "dual" for c in self.category)
        self.is_wild = tuple(c == "wildcard" for c in self.category)
        self.is_spell = tuple(c == "spell" for c in self.category)
        self.bankable = tuple(c in ("gold", "spell") for c in self.category)
        #: per type: the Basic kind of that type
        self.basic_of: tuple[int, ...] = tuple(
            next(i for i in range(k) if self.is_basic[i] and self.types[i] == (t,)) for t in range(nt))
        self.gem_kinds = tuple(i for i in range(k) if self.is_gem[i])
        self.spell_kinds = tuple(i for i in range(k) if self.is_spell[i])
        self.kind_of_effect: dict[str, tuple[int, ...]] = {}
        for i, e in enumerate(self.effect):
            self.kind_of_effect.setdefault(e, ())
            self.kind_of_effect[e] += (i,)
        self.guardian = self.kind_of_effect.get("gem_guardian", (-1,))[0]
        self.double_trouble = self.kind_of_effect.get("double_trouble", (-1,))[0]
        self.reactive = tuple(e in REACTIVE for e in self.effect)
        self.max_set_size = max(self.set_size)

    def deck(self, sirens_call: bool) -> list[int]:
        """Every card of the game as a list of kinds (optional cards only when ``sirens_call``)."""
        return [i for i in range(self.num_kinds) for _ in range(self.count[i])
                if sirens_call or not self.optional[i]]

    def jam_amount(self, t: int, gems: int, guardians: int) -> int:
        """Gem Jam payment for ``gems`` gems of type ``t`` with ``guardians`` guarded complete sets (docs/gemjam.md
        "Gem Jam and payments")."""
        size, table = self.set_size[t], self.payment[t]
        rest = gems % size
        return (gems // size) * table[-1] + (table[rest - 1] if rest else 0) + 4 * guardians


def _need(cond: bool, source: str, what: str) -> None:
    if not cond:
        raise ManifestError(f"invalid Gem Jam manifest ({source}): {what}")


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def load_manifest(source: str | os.PathLike | Mapping | None = None) -> Manifest:
    """Read and validate a manifest: ``None`` for the default, a JSON file path, or a parsed dict."""
    data, name = read_json_source(source, DEFAULT_MANIFEST, "Gem Jam manifest", ManifestError)
    return parse_manifest(data, name)


def parse_manifest(data: Any, source: str = "dict") -> Manifest:
    """Validate parsed manifest JSON and build a :class:`Manifest` (see ``manifest.json``)."""
    _need(isinstance(data, Mapping), source, "the top level must be an object")
    keys = set(data) - {"description"}
    want = {"format", "gem_types", "cards"}
    _need(keys == want, source, f"keys differ: missing {sorted(want - keys)}, unknown {sorted(keys - want)}")
    _need(data["format"] == MANIFEST_FORMAT, source, f"format must be {MANIFEST_FORMAT!r}, got {data['format']!r}")
    types = data["gem_types"]
    _need(isinstance(types, list) and 1 <= len(types) <= 16, source, "gem_types must be a list of 1 to 16 types")
    names = []
    for i, t in enumerate(types):
        where = f"gem_types[{i}]"
        _need(isinstance(t, Mapping) and set(t) == _TYPE_KEYS, source,
              f"{where} must be an object with exactly the keys {sorted(_TYPE_KEYS)}")
        _need(isinstance(t["name"], str) and t["name"] and t["name"] not in names, source,
              f"{where}.name must be a distinct non-empty string")
        names.append(t["name"])
        _need(_is_int(t["set_size"]) and 1 <= t["set_size"] <= 6, source,
              f"{where} ({t['name']}): set_size must be 1..6")
        pay = t["payment"]
        _need(isinstance(pay, list) and len(pay) == t["set_size"] and all(_is_int(v) and 0 <= v <= 100 for v in pay),
              source, f"{where} ({t['name']}): payment must list set_size integers 0..100 (1 gem .. a full set)")
    cards = data["cards"]
    _need(isinstance(cards, list) and 1 <= len(cards) <= 128, source, "cards must be a list of 1 to 128 kinds")
    seen = set()
    for i, c in enumerate(cards):
        where = f"cards[{i}]"
        _need(isinstance(c, Mapping) and {"name", "category", "count", "gold"} <= set(c) <= _CARD_KEYS, source,
              f"{where} must be an object with name, category, count, gold (and types, effect, optional)")
        where = f"cards[{i}] ({c['name']!r})"
        _need(isinstance(c["name"], str) and c["name"] and c["name"] not in seen, source,
              f"{where}: name must be a distinct non-empty string")
        seen.add(c["name"])
        cat = c["category"]
        _need(cat in CATEGORIES, source, f"{where}: category must be one of {', '.join(CATEGORIES)}")
        _need(_is_int(c["count"]) and 0 <= c["count"] <= 50, source, f"{where}: count must be an integer 0..50")
        _need(_is_int(c["gold"]) and 0 <= c["gold"] <= 50, source, f"{where}: gold must be an integer 0..50")
        _need(isinstance(c.get("optional", False), bool), source, f"{where}: optional must be true or false")
        ts = c.get("types")
        if cat in ("basic", "dual"):
            want_n = 1 if cat == "basic" else 2
            _need(isinstance(ts, list) and len(ts) == want_n and all(t in names for t in ts) and len(set(ts)) == want_n,
                  source, f"{where}: a {cat} gem lists {want_n} distinct gem type(s) from gem_types")
            _need("effect" not in c, source, f"{where}: a {cat} gem has no effect")
            _need(c["gold"] >= 1, source, f"{where}: a {cat} gem needs a gold value >= 1 (it is payable)")
        elif cat == "wildcard":
            _need(c.get("effect") in WILDCARD_EFFECTS, source,
                  f"{where}: a wildcard's effect must be one of {', '.join(WILDCARD_EFFECTS)}")
            _need(ts is None and c["gold"] == 0, source, f"{where}: a wildcard has no types field and gold 0")
        elif cat == "gold":
            _need(ts is None and "effect" not in c and c["gold"] >= 1, source,
                  f"{where}: a gold card has gold >= 1 only")
        else:
            eff = c.get("effect")
            _need(eff in SPELL_EFFECTS, source, f"{where}: unknown spell effect {eff!r}")
            _need(c["gold"] >= 1, source, f"{where}: a spell needs a bank value >= 1")
            if eff == "paired_gem_jam":
                _need(isinstance(ts, list) and len(ts) == 2 and all(t in names for t in ts), source,
                      f"{where}: a paired Gem Jam lists 2 gem types from gem_types")
            else:
                _need(ts is None, source, f"{where}: only a paired Gem Jam has a types field")
    for t in names:
        basics = [c for c in cards if c["category"] == "basic" and c["types"] == [t]]
        _need(len(basics) == 1, source, f"gem type {t!r} needs exactly one Basic card kind, found {len(basics)}")
    for eff in ("gem_guardian", "double_trouble"):
        _need(sum(1 for c in cards if c.get("effect") == eff) <= 1, source, f"at most one card kind has effect {eff!r}")
    _need(sum(c["count"] for c in cards if not c.get("optional")) >= 40, source, "the deck needs at least 40 cards")
    return Manifest(types, cards, source)


__all__ = ["DEFAULT_MANIFEST", "GEM_TARGETING", "MANIFEST_FORMAT", "Manifest", "ManifestError", "REACTIVE",
           "SPELL_EFFECTS", "WILDCARD_EFFECTS", "load_manifest", "parse_manifest"]
