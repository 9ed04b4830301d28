"""GEM state <-> JSON-safe dict, checked on the way in by replaying the decision log over the deal.

After the deal a GEM game has no randomness, so the deal and the log of decisions determine
every other field. :func:`state_from_dict` checks the shape of the dict, that every gem card is
in exactly one place, then replays the log and requires the replay to match every field
exactly (types included: ``True`` is not ``1``).
"""
from __future__ import annotations

import json

from gemenvs.gem import rules
from gemenvs.gem.rules import PHASES, STATE_FIELDS, Config, GemState


class StateError(ValueError):
    """A serialized GEM state that is malformed or breaks the rules."""


def _need(cond: bool, what: str) -> None:
    if not cond:
        raise StateError(f"invalid GEM state: {what}")


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _int_list(x, name: str, length: int | None = None, lo: int | None = None, hi: int | None = None) -> list[int]:
    _need(isinstance(x, list), f"{name} must be a list")
    _need(length is None or len(x) == length, f"{name} must have length {length}, has {len(x)}")
    for v in x:
        _need(_is_int(v), f"{name} must hold integers, found {v!r}")
        _need((lo is None or v >= lo) and (hi is None or v <= hi), f"{name} holds {v}, outside {lo}..{hi}")
    return x


def _bool_list(x, name: str, length: int) -> list[bool]:
    _need(isinstance(x, list) and len(x) == length, f"{name} must be a list of length {length}")
    _need(all(isinstance(v, bool) for v in x), f"{name} must hold booleans")
    return x


def state_from_dict(d: dict, cfg: Config) -> GemState:
    """Rebuild a state from :meth:`GemState.to_dict` output, rejecting anything inconsistent."""
    _need(isinstance(d, dict), "expected a dict")
    keys = set(STATE_FIELDS)
    _need(set(d) == keys, f"keys differ: missing {sorted(keys - set(d))}, unknown {sorted(set(d) - keys)}")
    n, num_cards = cfg.n, cfg.num_cards
    _need(d["num_players"] == n and _is_int(d["num_players"]), f"num_players is {d['num_players']!r}, the game has {n}")
    _need(d["phase"] in PHASES, f"phase {d['phase']!r} is not one of {PHASES}")
    deal = d["deal"]
    _need(isinstance(deal, list) and len(deal) == cfg.num_rounds, f"deal must list {cfg.num_rounds} stacks")
    for i, (stack, size) in enumerate(zip(deal, cfg.stack_sizes)):
        _int_list(stack, f"deal[{i}]", size, 0, num_cards - 1)
    _need(sorted(c for st in deal for c in st) == list(range(num_cards)), "deal must hold every gem card once")
    stacks = d["stacks"]
    _need(isinstance(stacks, list), "stacks must be a list")
    for i, stack in enumerate(stacks):
        _int_list(stack, f"stacks[{i}]", None, 0, num_cards - 1)
    face_up = _int_list(d["face_up"], "face_up", None, 0, num_cards - 1)
    owner = _int_list(d["owner"], "owner", num_cards, -1, n - 1)
    invested = _bool_list(d["invested"], "invested", num_cards)
    coins = d["coins"]
    _need(isinstance(coins, list) and len(coins) == n, f"coins must list {n} players")
    for row in coins:
        _bool_list(row, "coins row", cfg.num_coins)
    places = [c for st in stacks for c in st] + list(face_up) + [c for c in range(num_cards) if owner[c] >= 0]
    for c in range(num_cards):
        _need(places.count(c) == 1, f"gem card {c} is in {places.count(c)} places (face down, face up, held)")
        _need(owner[c] >= 0 or not invested[c], f"gem card {c} is INVESTED but held by nobody")
    log = d["log"]
    _need(isinstance(log, list), "log must be a list")
    for i, entry in enumerate(log):
        _int_list(entry, f"log[{i}]", 3, 0, None)
        _need(entry[0] < n and entry[1] < cfg.layout.num_actions and entry[2] <= 1, f"log[{i}] is out of range")
    replay = rules.state_from_deal(cfg, deal)
    for i, (player, action, auto) in enumerate(log):
        if auto:
            continue
        _need(len(replay.log) == i, f"log[{i}] is a decision, but the engine plays that one itself (auto)")
        reason = rules.illegal_reason(replay, cfg, player, action)
        _need(reason is None, f"log[{i}]: action {action} by player {player} is illegal: {reason}")
        rules.apply(replay, cfg, player, action)
    expect = replay.to_dict()
    for k in STATE_FIELDS:
        _need(json.dumps(d[k]) == json.dumps(expect[k]),
              f"{k} is {d[k]!r}, but replaying the log over the deal gives {expect[k]!r}")
    return replay


__all__ = ["StateError", "state_from_dict"]
