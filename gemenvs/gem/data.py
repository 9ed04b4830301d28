"""GEM components as data: the card manifest (gem types, coin cards, gem cards, stacks), loaded and validated.

The default manifest is ``manifest.json`` next to this module (docs/gem.md "Components"). A
different one can be passed to the game as the ``manifest`` option: a path to a JSON file of the
same format, or the already-parsed dict. Anything malformed raises :class:`ManifestError`
naming the offending entry.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gemenvs.core.datafile import read_json_source

MANIFEST_FORMAT = "gemenvs.gem.manifest/1"
DEFAULT_MANIFEST = Path(__file__).with_name("manifest.json")
PLAYER_COUNTS = (2, 3, 4)
_KEYS = {"format", "gem_types", "coin_cards", "stacks", "gem_cards"}
_CARD_KEYS = {"id", "gems", "invested", "reinvest_cost"}


class ManifestError(ValueError):
    """A GEM card manifest that is malformed (the message names the entry and the problem)."""


@dataclass(frozen=True)
class Manifest:
    """The validated contents of a card manifest; card ids index every per-card tuple."""

    gem_types: tuple[str, ...]
    coin_values: tuple[int, ...]        # INVESTED value of each player's coin cards
    card_gems: tuple[tuple[int, ...], ...]  # gem-type indices on each gem card
    card_value: tuple[int, ...]         # INVESTED value (what the card pays)
    card_cost: tuple[int, ...]          # printed LEVERAGED value (reinvestment cost)
    stacks: Mapping[int, tuple[int, ...]]  # players -> sizes of the six stacks, dealt left to right
    source: str = "default"

    @property
    def num_types(self) -> int:
        """Number of gem types."""
        return len(self.gem_types)

    @property
    def num_cards(self) -> int:
        """Number of gem cards."""
        return len(self.card_gems)

    @property
    def num_coins(self) -> int:
        """Number of coin cards each player holds."""
        return len(self.coin_values)

    @property
    def type_counts(self) -> tuple[tuple[int, ...], ...]:
        """Per gem card, the number of gems of each type on it."""
        return tuple(tuple(g.count(t) for t in range(self.num_types)) for g in self.card_gems)

    @property
    def gems_of_type(self) -> tuple[int, ...]:
        """Gems of each type on all gem cards together."""
        return tuple(sum(g.count(t) for g in self.card_gems) for t in range(self.num_types))

    @property
    def total_gems(self) -> int:
        """Gems on all gem cards together."""
        return sum(len(g) for g in self.card_gems)

    @property
    def max_capital(self) -> int:
        """The INVESTED value of every coin card of one player and every gem card (a bid bound)."""
        return sum(self.coin_values) + sum(self.card_value)

    def label(self, card: int) -> str:
        """A short readable name of gem card ``card``, e.g. ``Sapphire+Ruby``."""
        return "+".join(self.gem_types[t] for t in self.card_gems[card])


def _need(cond: bool, source: str, what: str) -> None:
    if not cond:
        raise ManifestError(f"invalid GEM manifest ({source}): {what}")


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def load_manifest(source: str | os.PathLike | Mapping | None = None) -> Manifest:
    """Read and validate a manifest: ``None`` for the default, a JSON file path, or a parsed dict."""
    data, name = read_json_source(source, DEFAULT_MANIFEST, "GEM manifest", ManifestError)
    return parse_manifest(data, name)


def parse_manifest(data: Any, source: str = "dict") -> Manifest:
    """Validate parsed manifest JSON and build a :class:`Manifest` (see ``manifest.json``)."""
    _need(isinstance(data, Mapping), source, "the top level must be an object")
    keys = set(data) - {"description"}
    _need(keys == _KEYS, source, f"keys differ: missing {sorted(_KEYS - keys)}, unknown {sorted(keys - _KEYS)}")
    _need(data["format"] == MANIFEST_FORMAT, source, f"format must be {MANIFEST_FORMAT!r}, got {data['format']!r}")
    types = data["gem_types"]
    _need(isinstance(types, list) and 1 <= len(types) <= 12, source, "gem_types must be a list of 1 to 12 names")
    _need(all(isinstance(t, str) and t for t in types), source, "gem_types must hold non-empty strings")
    _need(len(set(types)) == len(types), source, "gem_types must be distinct")
    coins = data["coin_cards"]
    _need(isinstance(coins, list) and 1 <= len(coins) <= 6, source, "coin_cards must be a list of 1 to 6 values")
    _need(all(_is_int(v) and 1 <= v <= 20 for v in coins), source, "coin_cards values must be integers 1..20")
    cards = data["gem_cards"]
    _need(isinstance(cards, list) and 1 <= len(cards) <= 64, source, "gem_cards must be a list of 1 to 64 cards")
    card_gems, values, costs = [], [], []
    for i, card in enumerate(cards):
        where = f"gem_cards[{i}]"
        _need(isinstance(card, Mapping) and set(card) == _CARD_KEYS, source,
              f"{where} must be an object with exactly the keys {sorted(_CARD_KEYS)}")
        _need(_is_int(card["id"]) and card["id"] == i, source,
              f"{where} has id {card['id']!r}; ids must be 0, 1, 2, ... in order")
        gems = card["gems"]
        _need(isinstance(gems, list) and 1 <= len(gems) <= 4, source, f"{where}.gems must list 1 to 4 gem types")
        for g in gems:
            _need(g in types, source, f"{where}.gems names {g!r}, which is not in gem_types")
        _need(_is_int(card["invested"]) and 1 <= card["invested"] <= 20, source,
              f"{where}.invested must be an integer 1..20")
        _need(_is_int(card["reinvest_cost"]) and 0 <= card["reinvest_cost"] <= card["invested"], source,
              f"{where}.reinvest_cost must be an integer 0..invested")
        card_gems.append(tuple(types.index(g) for g in gems))
        values.append(card["invested"])
        costs.append(card["reinvest_cost"])
    for t in types:
        _need(any(types.index(t) in g for g in card_gems), source, f"gem type {t!r} is on no card")
    stacks = data["stacks"]
    expected = {str(n) for n in PLAYER_COUNTS}
    _need(isinstance(stacks, Mapping) and set(stacks) == expected, source,
          f"stacks must be an object with the keys {sorted(expected)}")
    sizes = {}
    for n in PLAYER_COUNTS:
        st = stacks[str(n)]
        _need(isinstance(st, list) and 1 <= len(st) <= 12 and all(_is_int(x) and x >= 1 for x in st), source,
              f"stacks[{str(n)!r}] must be a list of 1 to 12 positive integers")
        _need(sum(st) == len(cards), source, f"stacks[{str(n)!r}] deals {sum(st)} cards, the manifest has {len(cards)}")
        sizes[n] = tuple(st)
    return Manifest(gem_types=tuple(types), coin_values=tuple(coins), card_gems=tuple(card_gems),
                    card_value=tuple(values), card_cost=tuple(costs), stacks=sizes, source=source)


__all__ = ["DEFAULT_MANIFEST", "MANIFEST_FORMAT", "Manifest", "ManifestError", "load_manifest", "parse_manifest"]
