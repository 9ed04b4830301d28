"""The tuned MegaGem bidder family: :class:`ParametricBidder` and its tuned member, :class:`TunedBidder`.

:class:`ParametricBidder` is :class:`~gemenvs.agents.megagem.bidders.HeuristicBidder`'s reasoning with its
choices exposed as a named weight vector (:data:`WEIGHTS`, one :class:`Weight` per name: default,
bounds, tuning step, meaning; the table is also in ``docs/megagem.md``). At :data:`DEFAULT_WEIGHTS`
it makes exactly HeuristicBidder's choices, decision for decision (``tests/test_megagem_tuned.py``
plays seeded games over every chart, player count and rule option and compares each one): every
weight enters as a factor that is 1 or a term that is 0 at its default, so the arithmetic, and so
every argmax and tie, is HeuristicBidder's.

:class:`TunedBidder` (``make_agent("megagem", "tuned", env)``) is the ParametricBidder whose weights
are read from :data:`TUNED_WEIGHTS_FILE` for the table's player count; that file is written by
``benchmarks/tune_megagem.py`` (CMA-ES over the family; see its docstring for the command). Where
the file is absent, TunedBidder plays at :data:`DEFAULT_WEIGHTS` (that is, as HeuristicBidder) and
says so in ``weights_source``; a file that exists but is malformed raises :class:`WeightsError`.

Weights files are JSON::

    {"format": "gemenvs-megagem-weights/1",
     "note": "...",                                  (optional, free text)
     "players": {"4": {"weights": {"psi": 0.4, ...}, (every name of WEIGHTS, finite, within bounds)
                       "tuning": {...}}}}            (optional metadata: command, budget, fitness)
"""
from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType, SimpleNamespace

import numpy as np

from gemenvs.agents.megagem.bidders import HeuristicBidder
from gemenvs.agents.megagem.decode import View
from gemenvs.agents.megagem.valuation import INVEST, TREASURE, add_up, mission_gain
from gemenvs.core.spec import ActionSpec, ObservationSpec
from gemenvs.megagem.data import CHART_NAMES, VALUE_CHARTS

FORMAT = "gemenvs-megagem-weights/1"
#: the tuned weights shipped with the package (written by benchmarks/tune_megagem.py)
TUNED_WEIGHTS_FILE = Path(__file__).resolve().parent.parent / "data" / "megagem_tuned.json"


class WeightsError(ValueError):
    """A weight vector or weights file that ParametricBidder cannot use (the message names the problem)."""


@dataclass(frozen=True)
class Weight:
    """One named weight: its HeuristicBidder default, the bounds it is valid in, the tuner's step, its meaning."""

    name: str
    default: float
    low: float
    high: float
    step: float   # the tuner's unit: CMA-ES searches (weight - default) / step
    group: str
    meaning: str


#: every weight of the family, in vector order (the tuner's coordinates follow this order)
WEIGHTS: tuple[Weight, ...] = (
    # valuation of a Treasure lot's gems (per gem, summed over the lot)
    Weight("gem_private", 1.0, 0.0, 3.0, 0.2, "valuation",
           "weight on the gem's expected final chart value given the seat's own hand (hypergeometric over the "
           "unseen cards)"),
    Weight("gem_public", 0.0, -1.0, 2.0, 0.2, "valuation",
           "weight on the gem's expected final value from public information only (what the table thinks it is "
           "worth; also what an opponent would gain by buying it)"),
    Weight("gem_now", 0.0, -1.0, 2.0, 0.2, "valuation",
           "weight on the chart value at the Display's current count of the colour"),
    *(Weight(f"chart_scale_{k}", 1.0, 0.3, 3.0, 0.1, "valuation",
             f"multiplier on the gem part of a Treasure lot's value when chart {k} is in play")
      for k in CHART_NAMES),
    # missions
    Weight("mission_complete", 1.0, 0.0, 4.0, 0.3, "missions",
           "share of an open mission's coins credited when the lot completes it"),
    Weight("mission_progress_1", 0.4, 0.0, 2.0, 0.15, "missions",
           "share of an open mission's coins credited while it is 1 gem short (gain = value x change of credit)"),
    Weight("mission_progress_2", 0.15, 0.0, 1.5, 0.1, "missions", "same, 2 gems short"),
    Weight("mission_progress_3", 0.05, 0.0, 1.0, 0.05, "missions", "same, 3 gems short (4 or more: 0)"),
    Weight("mission_deny", 0.25, 0.0, 2.0, 0.15, "missions",
           "share of the largest mission gain the lot would give one opponent, added to the lot's value"),
    # budget: the shadow price lam of a coin in hand
    Weight("psi", 0.4, 0.0, 3.0, 0.15, "budget",
           "going price of a gem to come = 1 + psi x (opponents' money) / (gems to come)"),
    Weight("share", 0.6, 0.05, 2.0, 0.15, "budget",
           "share of the gems to come the seat budgets to buy; richer than that, coins tend to face value"),
    Weight("lam_max", 30.0, 1.0, 60.0, 5.0, "budget", "cap on the shadow price lam of a coin"),
    Weight("endgame_spend", 0.0, -1.0, 2.0, 0.25, "budget",
           "end-of-game spending: lam becomes 1 + (lam - 1) x max(0, 1 - endgame_spend x stage), stage = share "
           "of the gems already sold; > 0 spends more freely as the game ends, < 0 hoards"),
    # bid shading: a multiplier on the lot's value before the bid is optimised
    Weight("shade_treasure1", 1.0, 0.2, 3.0, 0.15, "shading", "value multiplier on Treasure 1 gem lots"),
    Weight("shade_treasure2", 1.0, 0.2, 3.0, 0.15, "shading", "value multiplier on Treasure 2 gems lots"),
    Weight("shade_loan", 1.0, 0.0, 5.0, 0.3, "shading", "multiplier on a Loan's liquidity value (lam - 1) x amount"),
    Weight("shade_invest", 1.0, 0.0, 3.0, 0.15, "shading", "value multiplier on Invest lots (worth their amount)"),
    Weight("shade_stage", 0.0, -2.0, 2.0, 0.25, "shading",
           "every lot's value is multiplied by max(0, 1 + shade_stage x (stage - 0.5)): > 0 bids up late, "
           "< 0 early"),
    # loans and investments
    Weight("loan_bonus", 0.0, -0.5, 1.0, 0.05, "loans",
           "loan appetite: coins of value added per coin of a Loan's amount"),
    Weight("invest_cost", 1.0, 0.0, 3.0, 0.2, "loans",
           "investment appetite: a coin locked on an Invest card costs invest_cost x (lam - 1)"),
    # the model of the opponents' bids
    Weight("opp_bid_scale", 1.0, 0.3, 2.0, 0.1, "opponents", "multiplier on every predicted opponent bid"),
    Weight("prior_ratio_scale", 1.0, 0.2, 2.0, 0.15, "opponents",
           "multiplier on the prior bid/value ratios (0.6, 0.9, 1.0, 1.1) of opponents"),
    Weight("prior_frac_scale", 1.0, 0.0, 3.0, 0.2, "opponents",
           "multiplier on the prior bid/limit fractions (0, 0.1, 0.3, 0.5) (loans, and the limit model)"),
    # reveal choice: reveal the colour with the least key
    Weight("reveal_info", 1.0, -1.0, 3.0, 0.3, "reveal",
           "weight on the information edge the reveal gives away (on gems still to be sold)"),
    Weight("reveal_value", 0.0, -2.0, 2.0, 0.1, "reveal",
           "weight on the seat's own expected value of the colour (> 0: reveal colours it values least)"),
    Weight("reveal_supply", 0.0, -2.0, 2.0, 0.1, "reveal",
           "weight on the rise of the public value of the gems still to be sold that the reveal causes"),
)
WEIGHT_NAMES: tuple[str, ...] = tuple(w.name for w in WEIGHTS)
_BY_NAME = {w.name: w for w in WEIGHTS}
#: the weights at which ParametricBidder is HeuristicBidder (read-only)
DEFAULT_WEIGHTS: Mapping[str, float] = MappingProxyType({w.name: w.default for w in WEIGHTS})


# --------------------------------------------------------------------------- validation and files

def check_weights(weights: Mapping, where: str = "weights") -> dict[str, float]:
    """A complete, valid weight dict from ``weights``; raises :class:`WeightsError` naming unknown or missing
    names, non-numbers, non-finite values and values outside a weight's bounds (``where`` prefixes the message)."""
    if not isinstance(weights, Mapping):
        raise WeightsError(f"{where}: expected a mapping of weight names to numbers, got {type(weights).__name__}")
    unknown = sorted(set(weights) - set(WEIGHT_NAMES), key=str)
    if unknown:
        raise WeightsError(f"{where}: unknown weight name(s) {', '.join(map(repr, unknown))}; "
                           f"known: {', '.join(WEIGHT_NAMES)}")
    missing = [n for n in WEIGHT_NAMES if n not in weights]
    if missing:
        raise WeightsError(f"{where}: missing weight(s) {', '.join(missing)}")
    out = {}
    for name in WEIGHT_NAMES:
        x, spec = weights[name], _BY_NAME[name]
        if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
            raise WeightsError(f"{where}: weight {name!r} must be a number, got {x!r}")
        x = float(x)
        if not math.isfinite(x):
            raise WeightsError(f"{where}: weight {name!r} is {x} (must be finite)")
        if not spec.low <= x <= spec.high:
            raise WeightsError(f"{where}: weight {name!r} = {x} is outside its bounds [{spec.low}, {spec.high}]")
        out[name] = x
    return out


def read_weights_file(path: str | os.PathLike) -> dict:
    """The parsed, checked contents of a weights file: ``{"players": {n: {"weights": dict, "tuning": dict}}, ...}``
    with integer player counts. Raises :class:`WeightsError` (or ``FileNotFoundError``) naming the problem."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise WeightsError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise WeightsError(f"{path}: not a weights file (expected \"format\": \"{FORMAT}\")")
    players = data.get("players")
    if not isinstance(players, dict) or not players:
        raise WeightsError(f"{path}: \"players\" must map player counts (\"3\", \"4\", \"5\") to entries")
    out = {}
    for key, entry in players.items():
        if key not in ("3", "4", "5"):
            raise WeightsError(f"{path}: player count {key!r} is not one of \"3\", \"4\", \"5\"")
        if not isinstance(entry, dict) or "weights" not in entry:
            raise WeightsError(f"{path}: players[{key!r}] must be an object with \"weights\"")
        extra = set(entry) - {"weights", "tuning"}
        if extra:
            raise WeightsError(f"{path}: players[{key!r}] has unknown field(s) {', '.join(sorted(extra))}")
        out[int(key)] = {"weights": check_weights(entry["weights"], f"{path}: players[{key!r}]"),
                         "tuning": entry.get("tuning", {})}
    return {**data, "players": out}


def load_weights(path: str | os.PathLike, num_players: int) -> dict[str, float]:
    """The checked weights for ``num_players`` from a weights file (:class:`WeightsError` if it has none)."""
    players = read_weights_file(path)["players"]
    if num_players not in players:
        raise WeightsError(f"{path}: no weights for {num_players} players (it has {sorted(players)})")
    return players[num_players]["weights"]


def write_weights_file(path: str | os.PathLike, entries: Mapping[int, Mapping], note: str | None = None) -> None:
    """Write (or update) a weights file: ``entries`` maps player counts to ``{"weights": ..., "tuning": ...}``;
    entries for other player counts already in the file are kept. Written atomically."""
    path = Path(path)
    players: dict[str, dict] = {}
    old_note = None
    if path.exists():
        old = read_weights_file(path)
        old_note = old.get("note")
        players = {str(n): e for n, e in old["players"].items()}
    for n, entry in entries.items():
        players[str(int(n))] = {"weights": check_weights(entry["weights"], f"players[{n}]"),
                                "tuning": dict(entry.get("tuning", {}))}
    data = {"format": FORMAT}
    if note or old_note:
        data["note"] = note or old_note
    data["players"] = {k: players[k] for k in sorted(players)}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, path)


def random_weights(rng: np.random.Generator, center: Mapping | None = None, spread: float = 1.0) -> dict[str, float]:
    """A member of the family drawn around ``center`` (default :data:`DEFAULT_WEIGHTS`): each weight moves by
    ``spread`` x its step x a standard normal draw, clipped to its bounds (for opponent pools)."""
    base = check_weights(DEFAULT_WEIGHTS if center is None else center, "center")
    z = rng.standard_normal(len(WEIGHTS))
    return {w.name: float(min(w.high, max(w.low, base[w.name] + spread * w.step * z[i])))
            for i, w in enumerate(WEIGHTS)}


# --------------------------------------------------------------------------- the agents

def _stage(v: View) -> float:
    """Share of the gems for sale already sold (0 at the first auction, near 1 at the last)."""
    sold = sum(v.col_total)
    total = sold + len(v.row) + v.gem_deck
    return sold / total if total else 1.0


class ParametricBidder(HeuristicBidder):
    """HeuristicBidder with its choices exposed as weights (:data:`WEIGHTS`; ``weights=None`` is
    :data:`DEFAULT_WEIGHTS`, at which every decision is HeuristicBidder's).

    * Treasure value: per gem ``gem_private`` x own expected final value + ``gem_public`` x public
      expected final value + ``gem_now`` x chart value now, summed over the lot and multiplied by
      ``chart_scale_<chart in play>``; plus mission gains with the credits
      (``mission_complete``, ``mission_progress_1..3``) and ``mission_deny`` x the largest gain of
      one opponent; times ``shade_treasure1`` / ``shade_treasure2``.
    * Loan value: ``shade_loan`` x (lam - 1) x amount + ``loan_bonus`` x amount. Invest value:
      ``shade_invest`` x amount, at a cost of ``invest_cost`` x (lam - 1) per coin.
    * Every value times ``max(0, 1 + shade_stage x (stage - 0.5))``.
    * Shadow price lam: HeuristicBidder's (``psi``, ``share``, ``lam_max``), then ``endgame_spend``.
    * Opponent model: the prior ratios and fractions scaled (``prior_ratio_scale``,
      ``prior_frac_scale``), every predicted bid scaled by ``opp_bid_scale``.
    * Reveal: the colour with the least ``reveal_info`` x information given away + ``reveal_value``
      x own value + ``reveal_supply`` x rise of public value of the gems to be sold (ties as
      HeuristicBidder: its lower own value, then its index).
    """

    name = "parametric"

    def __init__(self, spec: ObservationSpec | None = None, num_actions: int | None = None, seed: int | None = None,
                 action_spec: ActionSpec | None = None, weights: Mapping | None = None):
        super().__init__(spec, num_actions, seed, action_spec)
        self.set_weights(DEFAULT_WEIGHTS if weights is None else weights)

    def set_weights(self, weights: Mapping) -> None:
        """Use ``weights`` (checked: all names, finite, within bounds) from the next decision on."""
        self.weights = check_weights(weights)
        w = self.w = SimpleNamespace(**self.weights)
        base = HeuristicBidder
        self.progress = (w.mission_complete, w.mission_progress_1, w.mission_progress_2, w.mission_progress_3, 0.0)
        self.psi, self.share, self.lam_max, self.deny = w.psi, w.share, w.lam_max, w.mission_deny
        self.prior_ratios = tuple(w.prior_ratio_scale * r for r in base.prior_ratios)
        self.prior_fracs = tuple(w.prior_frac_scale * f for f in base.prior_fracs)
        self._chart_scale = {VALUE_CHARTS[k]: self.weights[f"chart_scale_{k}"] for k in CHART_NAMES}

    def _batch_weights(self) -> dict[str, float]:
        """The weights ``batch_games`` plays with (the same arithmetic as this class's methods)."""
        return dict(self.weights)

    def __repr__(self) -> str:
        changed = {k: x for k, x in self.weights.items() if x != DEFAULT_WEIGHTS[k]}
        return f"{type(self).__name__}({changed or 'default weights'})"

    # ---------------------------------------------------------------- budget and opponents

    def _shadow_price(self, v: View, pub: list[float], unseen_pub: list[int], sold: int) -> float:
        lam = super()._shadow_price(v, pub, unseen_pub, sold)
        if self.w.endgame_spend:
            lam = 1.0 + (lam - 1.0) * max(0.0, 1.0 - self.w.endgame_spend * _stage(v))
        return lam

    @property
    def _opp_bid_scale(self) -> float:
        return self.w.opp_bid_scale

    # ---------------------------------------------------------------- bids

    def _lot_value(self, v: View, kind: str, amount: int, gems: list[int], mine: list[float], pub: list[float],
                   lam: float) -> tuple[float, float]:
        """HeuristicBidder's value and cost of a coin with the weights: the gem values mixed and scaled per
        chart, the cost of an investment, the shading per lot type and stage of the game."""
        w = self.w
        if kind == TREASURE:
            top_row = len(v.chart) - 1
            value = self._chart_scale[v.chart] * add_up(w.gem_private * mine[c] + w.gem_public * pub[c]
                                                        + w.gem_now * v.chart[min(v.display[c], top_row)]
                                                        for c in gems)
            value += mission_gain(v, 0, gems, self.progress)
            cost_rate = lam
        elif kind == INVEST:
            value = float(amount)
            cost_rate = w.invest_cost * (lam - 1.0)
        else:
            value = (lam - 1.0) * amount
            cost_rate = lam
        if kind == TREASURE and self.deny:
            value += self.deny * max(mission_gain(v, p, gems, (1.0, 0.0)) for p in range(1, v.n))
        if kind == TREASURE:
            value *= w.shade_treasure1 if amount == 1 else w.shade_treasure2
        elif kind == INVEST:
            value *= w.shade_invest
        else:
            value = w.shade_loan * value + w.loan_bonus * amount
        value *= max(0.0, 1.0 + w.shade_stage * (_stage(v) - 0.5))
        return value, cost_rate

    # ---------------------------------------------------------------- reveal

    @property
    def _reveal_weights(self) -> tuple[float, float, float]:
        w = self.w
        return w.reveal_info, w.reveal_value, w.reveal_supply


_FILE_CACHE: dict[tuple[str, int], dict] = {}


def _tuned_players(path: Path) -> dict | None:
    """The player entries of a weights file (cached by path and modification time); None if it is absent."""
    try:
        mtime = path.stat().st_mtime_ns
    except FileNotFoundError:
        return None
    key = (str(path), mtime)
    if key not in _FILE_CACHE:
        _FILE_CACHE.clear()
        _FILE_CACHE[key] = read_weights_file(path)["players"]
    return _FILE_CACHE[key]


class TunedBidder(ParametricBidder):
    """The ParametricBidder with the tuned weights for its player count, read from ``weights_file``
    (default :data:`TUNED_WEIGHTS_FILE`, shipped with the package).

    If that file does not exist, or has no entry for this player count (a warning), it falls back
    to :data:`DEFAULT_WEIGHTS`, i.e. plays as HeuristicBidder; ``weights_source`` says which it
    uses. A malformed file raises :class:`WeightsError`.
    """

    name = "tuned"

    def __init__(self, spec: ObservationSpec | None = None, num_actions: int | None = None, seed: int | None = None,
                 action_spec: ActionSpec | None = None, weights_file: str | os.PathLike | None = None):
        super().__init__(spec, num_actions, seed, action_spec)
        path = Path(TUNED_WEIGHTS_FILE if weights_file is None else weights_file)
        n = self.decode.n
        players = _tuned_players(path)
        if players is None:
            self.weights_source = f"DEFAULT_WEIGHTS (no tuned weights file at {path})"
        elif n not in players:
            self.weights_source = f"DEFAULT_WEIGHTS ({path} has no weights for {n} players)"
            warnings.warn(f"TunedBidder: {self.weights_source}", stacklevel=2)
        else:
            self.set_weights(players[n]["weights"])
            self.weights_source = f"{path} (players {n})"


__all__ = [
    "DEFAULT_WEIGHTS",
    "FORMAT",
    "TUNED_WEIGHTS_FILE",
    "WEIGHTS",
    "WEIGHT_NAMES",
    "ParametricBidder",
    "TunedBidder",
    "Weight",
    "WeightsError",
    "check_weights",
    "load_weights",
    "random_weights",
    "read_weights_file",
    "write_weights_file",
]
