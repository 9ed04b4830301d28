"""MegaGem baselines: a truthful bidder and a shading, budgeting heuristic bidder.

Both agents read only the acting seat's observation, decoded through the environment's
:class:`~gemenvs.core.spec.ObservationSpec`, and the action mask; they never touch the engine.

Action ids come from the game's :class:`~gemenvs.core.spec.ActionSpec` (``BaseAgent.for_env``
hands it over): the range ``bid`` (argument: coins) and the range ``reveal`` (argument: colour,
Blue, Green, Pink, Purple, Yellow). Without an environment, build an agent from a game:
``HeuristicBidder(spec=game.spec, action_spec=game.action_spec)``.

Shared model of a colour's final value: every gem card that starts in a hand ends in the
Value Display, so the final Display count of colour ``c`` is ``display[c] + own_hand[c] + X``
where ``X`` is the number of colour-``c`` cards in the other hands. The unseen cards of ``c``
(6 minus Display, own hand, all Collections and the face-up row) are split between the other
hands and the face-down deck, so ``X`` is hypergeometric: ``H`` draws (cards in other hands)
from ``U`` unseen cards of which ``U_c`` have colour ``c``. The expected chart value over that
distribution is the colour's expected final gem value.
"""
from __future__ import annotations

import math
from functools import lru_cache
from types import SimpleNamespace

import numpy as np

from gemenvs.agents.base import BaseAgent, legal_actions
from gemenvs.core.spec import ActionSpec, ObservationSpec
from gemenvs.megagem.data import (
    AUCTION_AMOUNT, AUCTION_TYPE, CHART_NAMES, GEMS_PER_COLOUR, MISSION_VALUE, MISSIONS, NUM_COLOURS, VALUE_CHARTS,
)

CHARTS = tuple(VALUE_CHARTS.values())  # in observation one-hot order A..E
_LOAN, _INVEST, _TREASURE = "loan", "invest", "treasure"


# --------------------------------------------------------------------------- decoding

class View:
    """One seat's observation in game units (seat-relative per-player lists; index 0 = self)."""

    __slots__ = (
        "n", "bidding", "chart", "round", "card", "deck_left", "row", "gem_deck", "display", "hand",
        "hand_size", "coins", "collection", "col_total", "loans", "investment", "locked", "missions", "owner",
        "open_missions", "last_bids", "last_winner", "tie_rank", "tie_random",
    )


class Decoder:
    """Decodes MegaGem observations through the spec, in the same units as ``spec.decode``, quickly.

    Every slot is multiplied back by its slice's scale and rounded to an integer (all MegaGem
    quantities are integers in game units); one-hot blocks become indices.
    """

    def __init__(self, spec: ObservationSpec):
        if spec is None:
            raise ValueError("MegaGem agents need the observation spec (use Agent.for_env(env))")
        self.spec = spec
        self.size = spec.size
        self.scale = np.concatenate([np.full(s.size, s.scale) for s in spec.slices])
        self.sl = {s.name: (s.offset, s.stop) for s in spec.slices}
        self.n = spec["hand_size"].size
        self.num_missions = spec["mission"].shape[1]
        self.num_mission_slots = spec["mission"].shape[0]

    def __call__(self, obs: np.ndarray) -> View:
        obs = np.asarray(obs)
        if obs.shape != (self.size,):
            raise ValueError(f"observation has shape {obs.shape}, spec expects ({self.size},)")
        x = np.rint(obs * self.scale).astype(np.int64).tolist()
        n, sl = self.n, self.sl
        v = View()
        v.n = n

        def block(name):
            a, b = sl[name]
            return x[a:b]

        v.bidding = block("phase")[0] == 1
        v.chart = CHARTS[_onehot(block("value_chart"))]
        v.round = block("round")[0]
        v.card = _onehot(block("auction_card"))
        v.deck_left = block("auction_deck_left")
        row = block("gem_row")
        v.row = [c for c in (_onehot(row[:NUM_COLOURS]), _onehot(row[NUM_COLOURS:])) if c >= 0]
        v.gem_deck = block("gem_deck_left")[0]
        v.display = block("display")
        v.hand = block("own_hand")
        v.hand_size = block("hand_size")
        v.coins = block("coins")
        col = block("collection")
        v.collection = [col[NUM_COLOURS * p:NUM_COLOURS * (p + 1)] for p in range(n)]
        v.col_total = [sum(col[c::NUM_COLOURS]) for c in range(NUM_COLOURS)]
        v.loans = block("loans")
        v.investment = block("investment")
        v.locked = block("locked")
        mis, own = block("mission"), block("mission_owner")
        m = self.num_missions
        missions, owner = [], []
        for i in range(self.num_mission_slots):
            k = _onehot(mis[m * i:m * (i + 1)])
            if k >= 0:
                missions.append(k)
                owner.append(_onehot(own[(n + 1) * i:(n + 1) * (i + 1)]) - 1)  # -1 open, else claimer
        v.missions, v.owner = missions, owner
        v.open_missions = tuple(k for k, o in zip(missions, owner) if o < 0)
        v.last_bids = block("last_bids")
        v.last_winner = _onehot(block("last_winner"))
        v.tie_rank = block("tie_rank")
        v.tie_random = block("tie_random")[0] == 1
        return v


def _onehot(xs: list) -> int:
    """Index of the 1 in a decoded one-hot block, -1 if the block is all zero."""
    return xs.index(1) if 1 in xs else -1


# --------------------------------------------------------------------------- gem values

@lru_cache(maxsize=None)
def hypergeom_pmf(total: int, good: int, draws: int) -> tuple[float, ...]:
    """P(k good cards among ``draws`` drawn from ``total`` of which ``good`` are good), k = 0..draws."""
    if total <= 0 or draws <= 0:
        return (1.0,)
    draws = min(draws, total)
    good = max(0, min(good, total))
    denom = math.comb(total, draws)
    return tuple(math.comb(good, k) * math.comb(total - good, draws - k) / denom for k in range(draws + 1))


@lru_cache(maxsize=None)
def expected_value(chart: tuple, known: int, total: int, good: int, draws: int) -> float:
    """Expected chart value of a colour with ``known`` certain Display cards plus a hypergeometric rest."""
    top = len(chart) - 1
    return sum(p * chart[min(known + k, top)] for k, p in enumerate(hypergeom_pmf(total, good, draws)))


def unseen_counts(v: View, include_own_hand: bool) -> list[int]:
    """Cards of each colour that the observer (or, without its hand, the public) cannot locate."""
    out = []
    for c in range(NUM_COLOURS):
        seen = v.display[c] + v.col_total[c] + v.row.count(c)
        if include_own_hand:
            seen += v.hand[c]
        out.append(max(0, GEMS_PER_COLOUR - seen))
    return out


def private_values(v: View) -> tuple[list[float], list[int]]:
    """Expected final value of one gem of each colour given the observer's hand; and unseen counts."""
    unseen = unseen_counts(v, True)
    total = sum(unseen)
    draws = sum(v.hand_size[1:])
    return [expected_value(v.chart, v.display[c] + v.hand[c], total, unseen[c], draws)
            for c in range(NUM_COLOURS)], unseen


def public_values(v: View, display=None, unseen=None, draws=None) -> list[float]:
    """Expected final value of each colour from public information only (all hands unknown)."""
    display = v.display if display is None else display
    unseen = unseen_counts(v, False) if unseen is None else unseen
    total = sum(unseen)
    draws = sum(v.hand_size) if draws is None else draws
    return [expected_value(v.chart, display[c], total, unseen[c], draws) for c in range(NUM_COLOURS)]


def lot_gems(v: View) -> list[int]:
    """Colours of the gems the current auction card sells (empty for loans and investments)."""
    if v.card < 0 or AUCTION_TYPE[v.card] != _TREASURE:
        return []
    return v.row[:AUCTION_AMOUNT[v.card]]


# --------------------------------------------------------------------------- missions

def _need(mission: int, counts) -> int:
    """Fewest gems to add to Collection ``counts`` to meet ``mission`` ("two pairs" read as "any")."""
    _, _, kind, arg = MISSIONS[mission]
    if kind == "each":
        return sum(1 for c in arg if counts[c] == 0)
    if kind == "same":
        return max(0, 2 - counts[arg[0]])
    if kind == "same_any":
        return max(0, arg[0] - max(counts))
    if kind == "different":
        return max(0, arg[0] - sum(1 for x in counts if x > 0))
    # two pairs
    pairs = sum(x // 2 for x in counts)
    odd = sum(1 for x in counts if x % 2)
    if pairs >= 2:
        return 0
    if pairs == 1:
        return 1 if odd else 2
    return 2 if odd >= 2 else (3 if odd == 1 else 4)


def mission_gain(v: View, player: int, gems: list[int], progress: tuple[float, ...]) -> float:
    """Mission coins ``player`` (seat-relative) expects to gain by adding ``gems`` to its Collection.

    ``progress[d]`` is the credit for an open mission still ``d`` gems short (``progress[0] = 1``).
    """
    if not gems or not v.open_missions:
        return 0.0
    return _mission_gain(v.open_missions, tuple(v.collection[player]), tuple(gems), tuple(progress))


@lru_cache(maxsize=1 << 16)
def _mission_gain(missions: tuple, before: tuple, gems: tuple, progress: tuple) -> float:
    after = list(before)
    for c in gems:
        after[c] += 1
    top = len(progress) - 1
    gain = 0.0
    for m in missions:
        d0, d1 = _need(m, before), _need(m, after)
        if d1 < d0:
            gain += MISSION_VALUE[m] * (progress[min(d1, top)] - progress[min(d0, top)])
    return gain


# --------------------------------------------------------------------------- agents

class _MegaGemAgent(BaseAgent):
    """Shared plumbing: the decoder and the ``bid`` / ``reveal`` ranges of the action spec."""

    def __init__(self, spec: ObservationSpec | None = None, num_actions: int | None = None, seed: int | None = None,
                 action_spec: ActionSpec | None = None):
        super().__init__(spec, num_actions, seed, action_spec)
        self.decode = Decoder(spec)
        if action_spec is None:
            raise ValueError("MegaGem agents need the action spec (use Agent.for_env(env), or "
                             "spec=game.spec, action_spec=game.action_spec)")
        self.bids, self.reveals = action_spec["bid"], action_spec["reveal"]

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        mask = np.asarray(action_mask)
        legal = legal_actions(mask)
        bids, reveals = self.bids, self.reveals
        if legal[0] in reveals:  # revealing a gem from hand
            v = self.decode(observation)
            colours = [int(a) - reveals.start for a in legal]
            return reveals[self.choose_reveal(v, colours)]
        limit = int(legal[legal < bids.stop][-1]) - bids.start
        v = self.decode(observation)
        bid = int(self.choose_bid(v, limit))
        return bids[min(max(bid, 0), limit)]

    def choose_bid(self, v: View, limit: int) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def choose_reveal(self, v: View, colours: list[int]) -> int:  # pragma: no cover - abstract
        raise NotImplementedError


class TruthfulAgent(_MegaGemAgent):
    """Bids its expected value of the lot, clipped to the legal range; reveals its least valuable colour.

    Lot values: a Treasure card is worth the expected final values of its gems (given its own
    hand) plus the missions it would complete at once; an Invest card is worth its amount (the bid
    comes back at the end); a Loan is worth nothing net (it is repaid in full), so it bids 0.
    """

    name = "truthful"
    per_game_memory = False

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """The choices of :meth:`act` on the rows, computed for all rows at once (see ``truthful_act_batch``)."""
        return truthful_act_batch(self, observations, action_masks)

    def lot_value(self, v: View) -> float:
        kind = AUCTION_TYPE[v.card]
        if kind == _INVEST:
            return float(AUCTION_AMOUNT[v.card])
        if kind == _LOAN:
            return 0.0
        gems = lot_gems(v)
        values, _ = private_values(v)
        return sum(values[c] for c in gems) + mission_gain(v, 0, gems, (1.0, 0.0))

    def choose_bid(self, v: View, limit: int) -> int:
        return min(limit, int(round(self.lot_value(v))))

    def choose_reveal(self, v: View, colours: list[int]) -> int:
        values, _ = private_values(v)
        return min(colours, key=lambda c: (values[c], c))


class HeuristicBidder(_MegaGemAgent):
    """Values lots from what it can see, models its opponents' bids, shades and budgets its own.

    * Values: gems by their expected final value (hypergeometric over the unseen cards, see the
      module docstring), plus missions they complete or bring closer, plus a share (``deny``)
      of the missions the lot would complete for an opponent; an Invest card by its amount; a
      Loan by the liquidity it adds, ``(lam - 1) * amount``.
    * Budget: a coin in hand is worth ``lam >= 1`` final coins (its shadow price, from the gems
      still to be sold against the money the opponents have left to bid with; see
      :meth:`_shadow_price`), so a bid ``b`` costs ``lam * b`` on a Treasure or a Loan and
      ``(lam - 1) * b`` on an Invest card (the bid comes back at the end). Early, while the
      others are rich, it bids little; as their coins run out and few gems remain, ``lam``
      falls towards 1 and it buys the rest cheaply.
    * Opponents: each one's bid is predicted from its coins (its hard limit) and its public-
      information value of the lot, scaled by the ratios (bid / value or bid / limit, whichever
      fits its past bids in this game better) seen in earlier auctions.
    * Bid: the ``b`` that maximises P(win | b) * (value - cost(b)) (first-price sealed bid against
      ``n - 1`` predicted opponents, ties per the observed tie-break order).
    * Reveal: the colour whose reveal gives away the least of its information edge on gems
      still to be sold (the final Display does not depend on reveal order: every hand card
      ends there), preferring colours it values least.
    """

    name = "heuristic"

    #: credit for an open mission by gems still missing (0, 1, 2, 3, 4+)
    progress = (1.0, 0.4, 0.15, 0.05, 0.0)
    #: shadow price of coins (see :meth:`_shadow_price`)
    psi = 0.4
    share = 0.6
    lam_max = 30.0
    #: how much of an opponent's gain from the lot counts against us
    deny = 0.25
    #: prior bid/value ratios for opponents with no history
    prior_ratios = (0.6, 0.9, 1.0, 1.1)
    #: prior bid/limit fractions (loans, and the limit model)
    prior_fracs = (0.0, 0.1, 0.3, 0.5)
    history_len = 16
    #: the tunable parameters above (keyword arguments of the constructor)
    PARAMS = ("progress", "psi", "share", "lam_max", "deny", "prior_ratios", "prior_fracs", "history_len")

    def __init__(self, spec: ObservationSpec | None = None, num_actions: int | None = None, seed: int | None = None,
                 action_spec: ActionSpec | None = None, **params):
        super().__init__(spec, num_actions, seed, action_spec)
        for k, val in params.items():
            if k not in self.PARAMS:
                raise TypeError(f"unknown HeuristicBidder parameter {k!r}")
            setattr(self, k, val)
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        n = self.decode.n
        # (round, category, [(value, limit, loan amount)] per seat, coins per seat) awaiting the bids
        self._pending = None
        self._ratios = [[] for _ in range(n)]   # bid / value on value-type lots
        self._fracs = [[] for _ in range(n)]    # bid / limit on value-type lots
        self._loan_fracs = [[] for _ in range(n)]
        self._private_bids = False

    def batch_games(self, num_games: int) -> "BidderGames":
        """This bidder playing ``num_games`` games at once, each with its own memory (:class:`BidderGames`):
        the same choices as one instance per game, for all their decisions in one numpy pass."""
        return BidderGames(self, num_games)

    def _batch_weights(self) -> dict[str, float]:
        """The weights BidderGames plays with beside this bidder's parameters (none: the neutral ones)."""
        return {}

    # ---------------------------------------------------------------- opponent model

    def _learn(self, v: View) -> None:
        pend = self._pending
        if pend is None or pend[0] != v.round - 1 or v.last_winner < 0:
            return
        self._pending = None
        bids = v.last_bids
        _, cat, preds, coins_before = pend
        w = v.last_winner
        if not any(bids):
            # all zero: either everyone bid 0, or bids are private (public_bids=False); the winner's
            # coins tell which (a 0 bid leaves them unchanged, or adds the loan)
            expected = coins_before[w] + (preds[w][2] if cat == _LOAN else 0)
            if v.coins[w] != expected:
                self._private_bids = True
                for hist in (self._ratios, self._fracs, self._loan_fracs):
                    for h in hist:
                        h.clear()
        seats = range(1, v.n)
        if self._private_bids:
            # only the winner's price is public (through its coins): learn from that alone
            if w == 0:
                return
            seats = (w,)
            bids = [0] * v.n
            bids[w] = coins_before[w] + (preds[w][2] if cat == _LOAN else 0) - v.coins[w]
        for p in seats:
            value, limit, _ = preds[p]
            b = bids[p]
            if limit <= 0:
                continue
            if cat == _LOAN:
                _push(self._loan_fracs[p], b / limit, self.history_len)
                continue
            _push(self._fracs[p], b / limit, self.history_len)
            if value >= 1.0 and not (b >= limit and value > limit):  # skip bids censored by the limit
                _push(self._ratios[p], b / value, self.history_len)

    #: factor on every predicted opponent bid (ParametricBidder's ``opp_bid_scale`` weight; 1 here)
    _opp_bid_scale = 1.0

    def _opponent_samples(self, v: View, cat: str, values: list[float], limits: list[int]) -> list[np.ndarray]:
        """Each opponent's predicted bids on this lot (sorted): its history of bid ratios or fractions in this
        game, else the priors, times ``_opp_bid_scale``, rounded and capped at its limit."""
        scale = self._opp_bid_scale
        out = []
        for p in range(1, v.n):
            lim, val = limits[p], values[p]
            if cat == _LOAN:
                fr = self._loan_fracs[p] + list(self.prior_fracs)
                s = [f * lim for f in fr]
            else:
                ratios, fracs = self._ratios[p], self._fracs[p]
                if len(fracs) >= 4 and _cv(fracs) < _cv(ratios):
                    s = [f * lim for f in fracs]
                else:
                    s = [r * val for r in ratios + list(self.prior_ratios)]
            arr = np.minimum(np.rint(np.asarray(s, dtype=np.float64) * scale), lim)
            arr.sort()
            out.append(arr)
        return out

    # ---------------------------------------------------------------- valuation

    def _shadow_price(self, v: View, pub: list[float], unseen_pub: list[int], sold: int) -> float:
        """What one coin in hand is worth now, in final-score coins (>= 1).

        Coins buy the gems still to come. Their going price is estimated from the opponents'
        money (coins plus a share of the loans still in the auction deck) spread over the gems
        left: ``price = 1 + psi * money / gems``. A coin is worth ``gem value / price`` while our
        coins buy no more than ``share`` of the remaining gems at that price, and tends to 1
        (face value at the end) when we hold more than that.
        """
        future = v.gem_deck + len(v.row) - sold  # gems sold after this auction
        if future <= 0:
            return 1.0
        total = sum(unseen_pub)
        row_left = v.row[sold:]
        # a face-down gem has the colour mix of the publicly unseen cards
        deck_val = sum(pub[c] * unseen_pub[c] for c in range(NUM_COLOURS)) / max(total, 1)
        per_gem = (sum(pub[c] for c in row_left) + max(0, future - len(row_left)) * deck_val) / future
        loans_left = sum(AUCTION_AMOUNT[k] * v.deck_left[k] for k in range(len(v.deck_left))
                         if AUCTION_TYPE[k] == _LOAN)
        opp_money = sum(v.coins[1:]) + loans_left * (v.n - 1) / v.n
        price = 1.0 + self.psi * opp_money / future
        lam = max(1.0, per_gem / price)
        affordable = max(v.coins[0], 1) / price
        wanted = future * self.share
        if affordable > wanted:
            lam = 1.0 + (lam - 1.0) * wanted / affordable
        return min(self.lam_max, lam)

    def _opponents(self, v: View, kind: str, amount: int, gems: list[int], pub: list[float]) -> tuple:
        """The opponents' values of this lot (public information) and bid limits, (category, values, limits) by
        seat; records the auction as pending, so that :meth:`_learn` reads the bids it gets."""
        n = v.n
        opp_values = [0.0] * n
        limits = [0] * n
        extra = amount if kind == _LOAN else 0
        for p in range(1, n):
            limits[p] = v.coins[p] + extra
            if kind == _TREASURE:
                opp_values[p] = sum(pub[c] for c in gems) + mission_gain(v, p, gems, (1.0, 0.0))
            elif kind == _INVEST:
                opp_values[p] = float(amount)
        cat = _LOAN if kind == _LOAN else "value"
        self._pending = (v.round, cat, [(opp_values[p], limits[p], extra) for p in range(n)], list(v.coins))
        return cat, opp_values, limits

    def _best_bid(self, v: View, cat: str, opp_values: list[float], limits: list[int], value: float,
                  cost_rate: float, top: int) -> int:
        """The bid in 0..top with the largest expected gain, chance to win x (value - cost_rate x bid), the chance
        from the opponents' predicted bids (:meth:`_opponent_samples`) and the tie order."""
        samples = self._opponent_samples(v, cat, opp_values, limits)
        bids = np.arange(top + 1, dtype=np.float64)
        win = np.ones(top + 1)
        for p, s in zip(range(1, v.n), samples):
            lt = np.searchsorted(s, bids, "left")
            if v.tie_random:
                q = (lt + 0.5 * (np.searchsorted(s, bids, "right") - lt)) / s.size
            elif v.tie_rank[0] < v.tie_rank[p]:
                q = np.searchsorted(s, bids, "right") / s.size
            else:
                q = lt / s.size
            win *= q
        eu = win * (value - cost_rate * bids)
        return int(np.argmax(eu))

    #: (value of the lot, cost of a coin, largest bid considered) of the last bid this bidder chose: what it
    #: computed from the observation before weighing opponents' bids (read by benchmarks/megagem_clone_features.py)
    last_valuation: tuple[float, float, int] | None = None

    def choose_bid(self, v: View, limit: int) -> int:
        """The bid with the largest expected gain (:meth:`_best_bid`) up to the largest worth considering, for the
        lot's value and the cost of a coin (:meth:`_lot_value`); 0 when the lot is worth nothing."""
        self._learn(v)
        kind, amount = AUCTION_TYPE[v.card], AUCTION_AMOUNT[v.card]
        gems = lot_gems(v)
        mine, _ = private_values(v)
        unseen_pub = unseen_counts(v, False)
        pub = public_values(v, unseen=unseen_pub)
        lam = self._shadow_price(v, pub, unseen_pub, len(gems))
        cat, opp_values, limits = self._opponents(v, kind, amount, gems, pub)
        value, cost_rate = self._lot_value(v, kind, amount, gems, mine, pub, lam)
        self.last_valuation = (float(value), float(cost_rate), 0)
        if value <= 0:
            return 0
        top = limit if cost_rate <= 1e-9 else min(limit, int(value / cost_rate) + 1)
        self.last_valuation = (float(value), float(cost_rate), max(int(top), 0))
        if top <= 0:
            return 0
        return self._best_bid(v, cat, opp_values, limits, value, cost_rate, top)

    def _lot_value(self, v: View, kind: str, amount: int, gems: list[int], mine: list[float], pub: list[float],
                   lam: float) -> tuple[float, float]:
        """The lot's value to this seat and the cost of each coin bid for it, in final-score coins (``lam``: the
        shadow price of a coin in hand)."""
        if kind == _TREASURE:
            value = sum(mine[c] for c in gems) + mission_gain(v, 0, gems, self.progress)
            cost_rate = lam
        elif kind == _INVEST:
            value = float(amount)
            cost_rate = lam - 1.0
        else:
            value = (lam - 1.0) * amount
            cost_rate = lam
        if kind == _TREASURE and self.deny:
            value += self.deny * max(mission_gain(v, p, gems, (1.0, 0.0)) for p in range(1, v.n))
        return value, cost_rate

    # ---------------------------------------------------------------- reveal

    #: weights of the reveal choice's score (ParametricBidder's ``reveal_info``, ``reveal_value``,
    #: ``reveal_supply``): the information the reveal gives away, the revealed colour's value to us, the
    #: rise of the public values of the gems to come
    _reveal_weights = (1.0, 0.0, 0.0)

    def choose_reveal(self, v: View, colours: list[int]) -> int:
        """The colour whose reveal scores lowest: by default the one that tells the others least about
        the values this seat expects (``_reveal_weights``), ties to the lower own value, then colour."""
        self._learn(v)
        if len(colours) == 1:
            return colours[0]
        info, own, supply_w = self._reveal_weights
        mine, unseen = private_values(v)
        unseen_pub = unseen_counts(v, False)
        pub = public_values(v, unseen=unseen_pub)
        total = sum(unseen)
        deck_frac = v.gem_deck / total if total else 0.0
        hands = sum(v.hand_size)
        best, best_key = colours[0], None
        for c in colours:
            disp = list(v.display)
            disp[c] += 1
            un = list(unseen_pub)
            un[c] -= 1
            after = public_values(v, display=disp, unseen=un, draws=hands - 1)
            loss = rise = 0.0
            for k in range(NUM_COLOURS):
                supply = v.row.count(k) + unseen[k] * deck_frac
                loss += supply * (abs(mine[k] - pub[k]) - abs(mine[k] - after[k]))
                rise += supply * (after[k] - pub[k])
            score = info * loss + own * mine[c] + supply_w * rise
            key = (round(score, 6), mine[c], c)
            if best_key is None or key < best_key:
                best, best_key = c, key
        return best


# --------------------------------------------------------------------------- batched play (act_batch)
# TruthfulAgent.act_batch: the arithmetic of TruthfulAgent.act on many observation rows at once,
# step for step (the same float64 operations in the same order, expected values from the same
# cached function), so its choices are act's. HeuristicBidder keeps BaseAgent's row-by-row
# act_batch (rows of one game: it remembers the game in progress); many games at once go through
# its batch_games table (BidderGames, below).

#: below this many rows truthful_act_batch calls act row by row (about as quick at 8 rows)
_FEW_ROWS = 8
#: bounds of the packed key of an expected value: chart, known, total unseen, unseen of the colour, draws
_EV_BOUNDS = (len(CHARTS), 16, 32, 8, 32)
_EV_TABLE: np.ndarray | None = None  # expected_value by packed key, filled as keys are met (NaN: not yet)


def _onehot_rows(block: np.ndarray) -> np.ndarray:
    """Per row, the index of the first 1 of a decoded one-hot block, -1 if none (``_onehot`` row by row)."""
    one = block == 1
    return np.where(one.any(axis=1), np.argmax(one, axis=1), -1)


def _expected_values(chart: np.ndarray, known: np.ndarray, total: np.ndarray, good: np.ndarray,
                     draws: np.ndarray) -> np.ndarray | None:
    """:func:`expected_value` for arrays of arguments (broadcast together), or None when an argument
    falls outside the table (never for observations of real games: the caller then plays row by row)."""
    global _EV_TABLE
    args = np.broadcast_arrays(chart, known, total, good, draws)
    key = np.zeros(args[0].shape, np.int64)
    for a, bound in zip(args, _EV_BOUNDS):
        if a.size and (a.min() < 0 or a.max() >= bound):
            return None
        key = key * bound + a
    if _EV_TABLE is None:
        _EV_TABLE = np.full(int(np.prod(_EV_BOUNDS)), np.nan)
    values = _EV_TABLE.take(key)
    missing = np.isnan(values)
    if missing.any():
        for k in np.unique(key[missing]).tolist():
            c, rest = divmod(k, int(np.prod(_EV_BOUNDS[1:])))
            kn, rest = divmod(rest, int(np.prod(_EV_BOUNDS[2:])))
            t, rest = divmod(rest, int(np.prod(_EV_BOUNDS[3:])))
            g, d = divmod(rest, _EV_BOUNDS[4])
            _EV_TABLE[k] = expected_value(CHARTS[c], kn, t, g, d)
        values = _EV_TABLE.take(key)
    return values


def _missions_met(counts: np.ndarray) -> np.ndarray:
    """(G, missions) bool: Collection counts (G, 5) meet each mission card as :func:`_need` reads it
    (``_need == 0``; "two pairs" as any two pairs)."""
    ge1, ge2 = counts >= 1, counts >= 2
    met = np.zeros((len(counts), len(MISSIONS)), np.bool_)
    for i, (_, _, kind, arg) in enumerate(MISSIONS):
        if kind == "each":
            met[:, i] = ge1[:, list(arg)].all(axis=1)
        elif kind == "same":
            met[:, i] = ge2[:, arg[0]]
        elif kind == "same_any":
            met[:, i] = counts.max(axis=1) >= arg[0]
        elif kind == "different":
            met[:, i] = ge1.sum(axis=1) >= arg[0]
        else:  # two pairs
            met[:, i] = (counts // 2).sum(axis=1) >= 2
    return met


@lru_cache(maxsize=None)
def _missions_met_table() -> np.ndarray:
    """Bit ``m`` of entry ``code`` (Collection counts 0..6 per colour in base 7): the counts meet mission ``m``."""
    counts = (np.arange(7 ** NUM_COLOURS)[:, None] // 7 ** np.arange(NUM_COLOURS)) % 7
    return (_missions_met(counts).astype(np.int64) << np.arange(len(MISSIONS))).sum(axis=1)


@lru_cache(maxsize=None)
def _batch_columns(spec_size: int, slices: tuple) -> tuple[np.ndarray, dict[str, slice]]:
    """The observation columns :func:`truthful_act_batch` decodes, and each block's place among them."""
    cols, where = [], {}
    for name, (a, b) in slices:
        if name in ("value_chart", "auction_card", "gem_row", "display", "own_hand", "hand_size", "collection",
                    "mission", "mission_owner"):
            where[name] = slice(sum(len(c) for c in cols), sum(len(c) for c in cols) + b - a)
            cols.append(np.arange(a, b))
    return np.concatenate(cols), where


def truthful_act_batch(agent: "TruthfulAgent", observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
    """:meth:`TruthfulAgent.act` on every row of ``observations`` (G, obs_dim) and ``action_masks`` (G, A).

    Decoding, lot values (expected gem values, missions the lot completes at once), the rounded
    bid clipped to the limit and the reveal of the least valuable colour held are computed for
    all rows with numpy, in the same float64 operations and order as ``act``; expected values
    come from :func:`expected_value` itself (tabled by argument). Tested equal to ``act``.
    """
    from gemenvs.agents.base import check_batch, legal_counts

    obs, masks = check_batch(observations, action_masks)
    legal_counts(masks)
    if len(obs) < _FEW_ROWS:  # a few rows: act row by row is quicker than the fixed cost of the numpy pass
        return BaseAgent.act_batch(agent, obs, masks)
    d, bids, reveals = agent.decode, agent.bids, agent.reveals
    if obs.shape[1] != d.size:
        raise ValueError(f"observations have {obs.shape[1]} values per row, spec expects {d.size}")
    G, n, m = len(obs), d.n, d.num_mission_slots
    cols, where = _batch_columns(d.size, tuple(d.sl.items()))
    x = np.rint(obs[:, cols] * d.scale[cols]).astype(np.int64)  # act's decoding, of the columns it reads here

    def block(name):
        return x[:, where[name]]

    legal = masks != 0
    first = np.argmax(legal, axis=1)
    revealing = (first >= reveals.start) & (first < reveals.stop)
    chart = _onehot_rows(block("value_chart")) % len(CHARTS)  # (act's decoder indexes -1 too: the last chart)
    card = _onehot_rows(block("auction_card"))
    kind = np.array(AUCTION_TYPE)[card % len(AUCTION_TYPE)]  # (and the last kind)
    amount = np.array(AUCTION_AMOUNT)[card % len(AUCTION_AMOUNT)]
    row = block("gem_row")
    slot0, slot1 = _onehot_rows(row[:, :NUM_COLOURS]), _onehot_rows(row[:, NUM_COLOURS:])
    gem0 = np.where(slot0 >= 0, slot0, slot1)  # v.row: the filled slots in order
    gem1 = np.where(slot0 >= 0, slot1, -1)
    display, hand = block("display"), block("own_hand")
    collection = block("collection").reshape(G, n, NUM_COLOURS)
    colours = np.arange(NUM_COLOURS)
    on0, on1 = gem0[:, None] == colours, gem1[:, None] == colours
    unseen = np.maximum(0, GEMS_PER_COLOUR - (display + collection.sum(axis=1) + on0 + on1 + hand))
    values = _expected_values(chart[:, None], display + hand, unseen.sum(axis=1)[:, None], unseen,
                              block("hand_size")[:, 1:].sum(axis=1)[:, None])
    before = collection[:, 0]
    treasure = (kind == _TREASURE) & (card >= 0)
    ngems = np.where(treasure, np.minimum(amount, (gem0 >= 0).astype(np.int64) + (gem1 >= 0)), 0)
    after = before + (ngems >= 1)[:, None] * on0 + (ngems >= 2)[:, None] * on1
    if values is None or before.min(initial=0) < 0 or after.max(initial=0) > 6:
        return BaseAgent.act_batch(agent, obs, masks)  # not a real game's observations: act row by row
    out = np.zeros(G, np.int64)
    # reveals: the legal colour of least value, the lowest colour among equals
    held = legal[:, reveals.start:reveals.stop]
    out[revealing] = reveals.start + np.argmin(np.where(held, values, np.inf), axis=1)[revealing]
    # bids: Treasure: its gems' values + the open missions they complete at once; Invest: its amount; Loan: 0
    rows = np.arange(G)
    v0, v1 = values[rows, np.maximum(gem0, 0)], values[rows, np.maximum(gem1, 0)]
    gems_value = np.where(ngems >= 1, np.where(ngems >= 2, v0 + v1, v0), 0.0)
    table, base7 = _missions_met_table(), 7 ** np.arange(NUM_COLOURS)
    completed = table.take(after @ base7) & ~table.take(before @ base7)
    mission = _onehot_rows(block("mission").reshape(G * m, -1)).reshape(G, m)
    owner = _onehot_rows(block("mission_owner").reshape(G * m, -1)).reshape(G, m) - 1
    counted = (mission >= 0) & (owner < 0) & ((completed[:, None] >> np.maximum(mission, 0)) & 1).astype(bool)
    gain = (counted * np.array(MISSION_VALUE)[np.maximum(mission, 0)]).sum(axis=1).astype(np.float64)
    value = np.where(kind == _INVEST, amount.astype(np.float64), np.where(kind == _LOAN, 0.0, gems_value + gain))
    limit = bids.stop - 1 - np.argmax(legal[:, bids.stop - 1::-1], axis=1) - bids.start  # the largest legal bid
    bid = np.minimum(limit, np.rint(value).astype(np.int64))
    out[~revealing] = (bids.start + np.clip(bid, 0, limit))[~revealing]
    return out


# --------------------------------------------------------------------------- HeuristicBidder for many games at once
# BidderGames plays HeuristicBidder (or a ParametricBidder) in many games at once: the memory of every
# game (the opponent model's histories, the pending auction) in arrays, and every decision of a call
# computed with numpy in the float64 operations and order of the scalar methods (_learn,
# _shadow_price, _opponent_samples, choose_bid, choose_reveal), so its choices are act's. Where
# Python's arithmetic differs from numpy's usual one it is reproduced: ``x ** 2`` is libm's pow
# (np.float_power with an array exponent, not x * x), ``round(x, 6)`` is Python's round.

#: ParametricBidder's weights that HeuristicBidder holds fixed (a factor 1 or a term 0): with them the
#: weighted arithmetic of BidderGames is HeuristicBidder's exactly
NEUTRAL_WEIGHTS = {
    "gem_private": 1.0, "gem_public": 0.0, "gem_now": 0.0, **{f"chart_scale_{k}": 1.0 for k in CHART_NAMES},
    "endgame_spend": 0.0, "shade_treasure1": 1.0, "shade_treasure2": 1.0, "shade_loan": 1.0, "shade_invest": 1.0,
    "shade_stage": 0.0, "loan_bonus": 0.0, "invest_cost": 1.0, "opp_bid_scale": 1.0, "reveal_info": 1.0,
    "reveal_value": 0.0, "reveal_supply": 0.0,
}
#: a BidderGames member's parameters, one column each: the weights, then HeuristicBidder's scalar attributes
_MEMBER_PARAMS = (*NEUTRAL_WEIGHTS, "psi", "share", "lam_max", "deny")
_COL = {name: j for j, name in enumerate(_MEMBER_PARAMS)}
_CHART_SCALE_COLS = [_COL[f"chart_scale_{k}"] for k in CHART_NAMES]
_NO_AUCTION = -10  # pending round of a game with no auction awaiting its bids
_RATIOS, _FRACS, _LOAN_FRACS = 0, 1, 2  # the three histories of the opponent model
_KIND = np.array(AUCTION_TYPE)
_AMOUNT = np.array(AUCTION_AMOUNT)
_LOAN_AMOUNT = np.where(_KIND == _LOAN, _AMOUNT, 0)  # per auction card


@lru_cache(maxsize=None)
def _need_table() -> np.ndarray:
    """(7**5, missions) int64: :func:`_need` of every mission for Collection counts 0..6 per colour (base 7 code)."""
    counts = (np.arange(7 ** NUM_COLOURS)[:, None] // 7 ** np.arange(NUM_COLOURS)) % 7
    need = np.zeros((len(counts), len(MISSIONS)), np.int64)
    have = counts > 0
    pairs, odd = (counts // 2).sum(axis=1), (counts % 2).sum(axis=1)
    for i, (_, _, kind, arg) in enumerate(MISSIONS):
        if kind == "each":
            need[:, i] = (~have[:, list(arg)]).sum(axis=1)
        elif kind == "same":
            need[:, i] = np.maximum(0, 2 - counts[:, arg[0]])
        elif kind == "same_any":
            need[:, i] = np.maximum(0, arg[0] - counts.max(axis=1))
        elif kind == "different":
            need[:, i] = np.maximum(0, arg[0] - have.sum(axis=1))
        else:  # two pairs
            need[:, i] = np.where(pairs >= 2, 0, np.where(pairs == 1, np.where(odd > 0, 1, 2),
                                                          np.where(odd >= 2, 2, np.where(odd == 1, 3, 4))))
    return need


def _sequential_sum(terms: np.ndarray) -> np.ndarray:
    """Sum along the last axis left to right, as Python's ``sum`` adds (numpy's sum adds pairwise;
    an accumulation adds each term to the sum before it)."""
    if not terms.shape[-1]:
        return np.zeros(terms.shape[:-1])
    return np.cumsum(terms, axis=-1)[..., -1]


def _cv_rows(hist: np.ndarray, count: np.ndarray) -> np.ndarray:
    """:func:`_cv` of each row's first ``count`` values of ``hist`` (k, H), as _cv computes it."""
    used = np.arange(hist.shape[1]) < count[:, None]
    c = np.maximum(count, 1)
    mean = _sequential_sum(np.where(used, hist, 0.0)) / c
    dev = hist - mean[:, None]
    sq = np.float_power(dev, np.full(dev.shape, 2.0))  # Python's ``x ** 2`` (libm pow; not always x * x)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = _sequential_sum(np.where(used, sq, 0.0)) / (c - 1)
        cv = np.sqrt(var) / mean
    return np.where((count < 2) | (mean <= 1e-9), np.inf, cv)


class BidderGames:
    """:class:`HeuristicBidder` (or a :class:`~gemenvs.agents.megagem_tuned.ParametricBidder`) playing
    ``num_games`` games at once: game ``g``'s memory is what a fresh instance would remember after
    the decisions of game ``g`` so far (built by ``agent.batch_games(num_games)``).

    :meth:`act` takes the decisions of any games (at most one per game per call) and returns
    exactly the actions ``act`` of each game's own instance would choose (and leaves in
    ``last_valuation`` (G, 3) what the scalar bidder's ``last_valuation`` holds after each row's
    bid: the lot's value, the cost of a coin, the largest bid considered; zeros for reveals);
    :meth:`valuation` computes those rows alone, from observations and masks only, touching no
    game's memory; :meth:`reset` starts games afresh (``agent.reset()``). The agent's parameters
    and weights are read when the table is made.

    One table can play for several bidders of this family (HeuristicBidder, ParametricBidder and its
    subclasses: the same arithmetic with other parameters): :meth:`add_member` gives another bidder
    a member index, and ``act(..., members=...)`` says which member decides in each row, so the games
    of every member are played in one numpy pass (each row with its member's parameters). A game's
    memory belongs to the game: :meth:`reset` a game when another member starts playing it.
    """

    def __init__(self, agent: "HeuristicBidder", num_games: int):
        self.agent = agent
        self.num_games = N = int(num_games)
        self.n = n = agent.decode.n
        self.H = H = int(agent.history_len)
        self.w = SimpleNamespace(**{**NEUTRAL_WEIGHTS, **agent._batch_weights()})
        self.chart_scale = np.array([getattr(self.w, f"chart_scale_{k}") for k in CHART_NAMES])
        self.progress = tuple(float(p) for p in agent.progress)
        self.prior_ratios = np.array(agent.prior_ratios, np.float64)
        self.prior_fracs = np.array(agent.prior_fracs, np.float64)
        self.members: list = []
        self._params = np.zeros((0, len(_MEMBER_PARAMS)))   # (members, params): see _MEMBER_PARAMS
        self._progress = np.zeros((0, len(self.progress)))
        self._prior_ratios = np.zeros((0, len(self.prior_ratios)))
        self._prior_fracs = np.zeros((0, len(self.prior_fracs)))
        self.add_member(agent)
        self.pend_round = np.full(N, _NO_AUCTION, np.int64)
        self.pend_loan = np.zeros(N, np.bool_)
        self.pend_value = np.zeros((N, n))
        self.pend_limit = np.zeros((N, n), np.int64)
        self.pend_extra = np.zeros(N, np.int64)
        self.pend_coins = np.zeros((N, n), np.int64)
        self.hist = np.zeros((3, N, n, H))          # ratios, fracs, loan fracs per seat, oldest first
        self.count = np.zeros((3, N, n), np.int64)
        self.private = np.zeros(N, np.bool_)        # bids found private (public_bids=False)
        self.last_valuation = np.zeros((0, 3))      # of the last act call's rows

    def add_member(self, agent: "HeuristicBidder") -> int:
        """Let ``agent`` play games of this table too (its parameters read now); its index for ``act``'s
        ``members``. It must be a bidder this table plays (``batch_games`` is HeuristicBidder's) for the
        same observations and actions, with the same history length and parameter shapes."""
        first = self.agent
        if getattr(type(agent), "batch_games", None) is not HeuristicBidder.batch_games:
            raise ValueError(f"{type(agent).__name__} plays through its own batch_games table, not BidderGames")
        if (agent.decode.size, agent.decode.n, agent.bids, agent.reveals, int(agent.history_len)) != \
                (first.decode.size, self.n, first.bids, first.reveals, self.H):
            raise ValueError(f"{agent!r} sees other observations or actions, or keeps another history length, "
                             f"than the table's first member {first!r}")
        w = {**NEUTRAL_WEIGHTS, **agent._batch_weights()}
        row = [float(w[k]) for k in NEUTRAL_WEIGHTS] + [float(agent.psi), float(agent.share), float(agent.lam_max),
                                                        float(agent.deny)]
        progress = np.array([float(p) for p in agent.progress], np.float64)
        ratios = np.array(agent.prior_ratios, np.float64)
        fracs = np.array(agent.prior_fracs, np.float64)
        if (progress.shape, ratios.shape, fracs.shape) != \
                (self._progress.shape[1:], self._prior_ratios.shape[1:], self._prior_fracs.shape[1:]):
            raise ValueError(f"{agent!r} has other progress or prior lengths than the table's first member")
        self._params = np.vstack([self._params, np.array(row, np.float64)])
        self._progress = np.vstack([self._progress, progress])
        self._prior_ratios = np.vstack([self._prior_ratios, ratios])
        self._prior_fracs = np.vstack([self._prior_fracs, fracs])
        self.members.append(agent)
        return len(self.members) - 1

    def reset(self, games=None) -> None:
        """Forget games ``games`` (indices; None: all), as ``agent.reset()`` does."""
        g = slice(None) if games is None else np.asarray(games, np.int64)
        self.pend_round[g] = _NO_AUCTION
        self.count[:, g] = 0
        self.private[g] = False

    # ------------------------------------------------------------------ memory

    def _push(self, which: int, games: np.ndarray, seats: np.ndarray, x: np.ndarray) -> None:
        """``_push`` of ``x`` onto history ``which`` of the (game, seat) pairs ``games``, ``seats`` (distinct)."""
        if not games.size or not self.H:
            return
        c = self.count[which, games, seats]
        full = c >= self.H
        if full.any():
            rows, at = games[full], seats[full]
            self.hist[which, rows, at, :-1] = self.hist[which, rows, at, 1:]
        self.hist[which, games, seats, np.minimum(c, self.H - 1)] = x
        self.count[which, games, seats] = np.minimum(c + 1, self.H)

    def _learn(self, g, rnd, coins, last_bids, last_winner) -> None:
        """HeuristicBidder._learn for rows of games ``g``."""
        active = (self.pend_round[g] == rnd - 1) & (last_winner >= 0)
        if not active.any():
            return
        r = np.flatnonzero(active)
        g, coins, bids, w = g[r], coins[r], last_bids[r], last_winner[r]
        self.pend_round[g] = _NO_AUCTION
        loan = self.pend_loan[g]
        extra = np.where(loan, self.pend_extra[g], 0)
        before = self.pend_coins[g]
        k = np.arange(len(g))
        paid = before[k, w] + extra - coins[k, w]  # the winner's price, from its coins
        cleared = ~bids.any(axis=1) & (paid != 0)  # all bids 0 but the winner paid: bids are private
        if cleared.any():
            self.private[g[cleared]] = True
            self.count[:, g[cleared]] = 0
        private = self.private[g][:, None]
        seat = np.arange(self.n)
        # the seats learnt from: every opponent, or (private bids) the winner alone, at its price
        sel = np.where(private, seat == w[:, None], seat > 0) & (self.pend_limit[g] > 0)
        b = np.where(private, paid[:, None], bids)
        lim, val = self.pend_limit[g], self.pend_value[g]
        for which, on, x in ((_LOAN_FRACS, sel & loan[:, None], None), (_FRACS, sel & ~loan[:, None], None),
                             (_RATIOS, sel & ~loan[:, None] & (val >= 1.0) & ~((b >= lim) & (val > lim)), val)):
            rows, at = np.nonzero(on)  # (ratios: bids censored by the limit are skipped)
            self._push(which, g[rows], at, b[rows, at] / (lim[rows, at] if x is None else x[rows, at]))

    # ------------------------------------------------------------------ decisions

    def _check(self, observations, action_masks, members, games=None) -> tuple:
        """The rows ``act`` and ``valuation`` accept, validated: (observations, masks, games or None, members)."""
        from gemenvs.agents.base import check_batch, legal_counts

        obs, masks = check_batch(observations, action_masks)
        G = len(obs)
        g = None
        if games is not None:
            g = np.asarray(games, np.int64).reshape(-1)
            if g.shape != (G,) or (G and (g.min() < 0 or g.max() >= self.num_games)):
                raise ValueError(f"games must be {G} game indices in 0..{self.num_games - 1}")
            if np.unique(g).size != G:
                raise ValueError("a game may make one decision per call")
        if members is None:
            mem = np.zeros(G, np.int64)
        else:
            mem = np.asarray(members, np.int64).reshape(-1)
            if mem.shape != (G,) or (G and (mem.min() < 0 or mem.max() >= len(self.members))):
                raise ValueError(f"members must be {G} member indices in 0..{len(self.members) - 1}")
        legal_counts(masks)
        d = self.agent.decode
        if obs.shape[1] != d.size:
            raise ValueError(f"observations have {obs.shape[1]} values per row, spec expects {d.size}")
        return obs, masks, g, mem

    def _decode(self, obs: np.ndarray, masks: np.ndarray) -> SimpleNamespace:
        """The rows decoded as act's decoder reads them (arrays, one row each), with the expected final gem values:
        ``mine`` (given the own hand) and ``pub`` (public)."""
        d, n, G = self.agent.decode, self.n, len(obs)
        reveals = self.agent.reveals
        x = np.rint(obs * d.scale).astype(np.int64)  # act's decoding

        def block(name):
            a, b = d.sl[name]
            return x[:, a:b]

        r = SimpleNamespace()
        r.legal = legal = masks != 0
        first = np.argmax(legal, axis=1)
        r.revealing = (first >= reveals.start) & (first < reveals.stop)
        r.chart = chart = _onehot_rows(block("value_chart")) % len(CHARTS)
        r.rnd = block("round")[:, 0]
        r.card = _onehot_rows(block("auction_card"))
        r.deck_left = block("auction_deck_left")
        row = block("gem_row")
        slot0, slot1 = _onehot_rows(row[:, :NUM_COLOURS]), _onehot_rows(row[:, NUM_COLOURS:])
        r.gem0 = gem0 = np.where(slot0 >= 0, slot0, slot1)  # v.row: the filled slots in order
        r.gem1 = gem1 = np.where(slot0 >= 0, slot1, -1)
        r.nrow = (gem0 >= 0).astype(np.int64) + (gem1 >= 0)
        r.gem_deck = block("gem_deck_left")[:, 0]
        display, hand, hand_size = block("display"), block("own_hand"), block("hand_size")
        r.display, r.hand_size, r.coins = display, hand_size, block("coins")
        r.collection = collection = block("collection").reshape(G, n, NUM_COLOURS)
        r.col_total = col_total = collection.sum(axis=1)
        m = d.num_mission_slots
        r.mission = mission = _onehot_rows(block("mission").reshape(G * m, -1)).reshape(G, m)
        owner = _onehot_rows(block("mission_owner").reshape(G * m, -1)).reshape(G, m) - 1
        r.open_ = (mission >= 0) & (owner < 0)
        colours = np.arange(NUM_COLOURS)
        r.on_row = on_row = (gem0[:, None] == colours).astype(np.int64) + (gem1[:, None] == colours)
        r.last_bids, r.last_winner = block("last_bids"), _onehot_rows(block("last_winner"))
        r.tie_rank, r.tie_random = block("tie_rank"), block("tie_random")[:, 0] == 1

        # expected final gem values: own (given the hand) and public
        r.unseen = unseen = np.maximum(0, GEMS_PER_COLOUR - (display + col_total + on_row + hand))
        r.unseen_pub = unseen_pub = np.maximum(0, GEMS_PER_COLOUR - (display + col_total + on_row))
        r.total_pub = total_pub = unseen_pub.sum(axis=1)
        r.mine = mine = _expected_values(chart[:, None], display + hand, unseen.sum(axis=1)[:, None], unseen,
                                         hand_size[:, 1:].sum(axis=1)[:, None])
        r.pub = pub = _expected_values(chart[:, None], display, total_pub[:, None], unseen_pub,
                                       hand_size.sum(axis=1)[:, None])
        if mine is None or pub is None or collection.min(initial=0) < 0 or collection.max(initial=0) > 6:
            raise ValueError("observations outside what a MegaGem game shows (BidderGames plays real games only)")
        return r

    def act(self, observations: np.ndarray, action_masks: np.ndarray, games, members=None) -> np.ndarray:
        """Actions ``(G,)`` for decisions of games ``games`` (G distinct indices): row ``i`` is game ``games[i]``'s,
        decided by member ``members[i]`` (:meth:`add_member`; None: the table's first bidder in every row)."""
        if games is None:
            raise ValueError("act needs the games' indices (games); valuation reads rows without them")
        obs, masks, g, mem = self._check(observations, action_masks, members, games)
        reveals, G = self.agent.reveals, len(obs)
        out = np.zeros(G, np.int64)
        self.last_valuation = np.zeros((G, 3))
        if not G:
            return out
        r = self._decode(obs, masks)
        self._learn(g, r.rnd, r.coins, r.last_bids, r.last_winner)
        rv = np.flatnonzero(r.revealing)
        if rv.size:
            out[rv] = reveals.start + self._reveal(r.legal[rv, reveals.start:reveals.stop], r.chart[rv], r.display[rv],
                                                   r.hand_size[rv], r.gem_deck[rv], r.on_row[rv], r.unseen[rv],
                                                   r.unseen_pub[rv], r.mine[rv], r.pub[rv], self._params[mem[rv]])
        bd = np.flatnonzero(~r.revealing)
        if bd.size:
            lot = self._value_rows(r, bd, mem[bd])
            out[bd] = self.agent.bids.start + np.clip(self._bid(g[bd], lot), 0, lot.limit)
            self.last_valuation[bd] = lot.valuation
        return out

    def valuation(self, observations: np.ndarray, action_masks: np.ndarray, members=None) -> np.ndarray:
        """(G, 3) float64: per row, what the member deciding it would compute before weighing opponents' bids:
        the lot's value, the cost of a coin, the largest bid it would consider (ParametricBidder.last_valuation);
        zeros on reveal decisions. A pure function of the observation and mask: reads and changes no game's memory."""
        out, bd, lot = self._lots(observations, action_masks, members, 3)
        if lot is not None:
            out[bd] = lot.valuation
        return out

    def _lots(self, observations, action_masks, members, width: int) -> tuple:
        """The rows checked and valued for :meth:`valuation` and :meth:`advice`: (zeros (G, width), the bid rows,
        their :meth:`_value_rows`, or None where no row is a bid)."""
        obs, masks, _, mem = self._check(observations, action_masks, members)
        out = np.zeros((len(obs), width))
        if not len(obs):
            return out, None, None
        r = self._decode(obs, masks)
        bd = np.flatnonzero(~r.revealing)
        return out, bd, (self._value_rows(r, bd, mem[bd]) if bd.size else None)

    def advice(self, observations: np.ndarray, action_masks: np.ndarray, members=None) -> np.ndarray:
        """(G, 6) float64: per row, :meth:`valuation`'s three numbers, then what a fresh bidder (no memory of the
        game: the opponents' bids predicted from its priors alone) would do with them: its bid, its chance to win
        with that bid, and the expected gain of it (chance x (value - cost x bid)); zeros on reveal decisions and
        where it would not bid. A pure function of the observation and mask: on a game's first decision it is
        exactly what :meth:`act` does; later, ``act`` also weighs the bids it has seen in the game."""
        out, bd, lot = self._lots(observations, action_masks, members, 6)
        if lot is None:
            return out
        out[bd, :3] = lot.valuation
        b = np.flatnonzero((lot.value > 0) & (lot.top > 0))
        if b.size:
            samples, ok, size, ahead = self._opponent_samples(lot, b, None)
            bid, win, gain = self._best_bids(samples, ok, size, ahead, lot.tie_random[b], lot.value[b], lot.cost[b],
                                             lot.top[b], detail=True)
            out[bd[b], 3] = np.clip(bid, 0, lot.limit[b])
            out[bd[b], 4] = win
            out[bd[b], 5] = gain
        return out

    def _mission_gains(self, collection, gem0, gem1, ngems, mission, open_, prog) -> tuple[np.ndarray, np.ndarray]:
        """:func:`mission_gain` of every seat's Collection (R, n, 5) plus the lot's first ``ngems`` gems:
        with the credits (1, 0) for every seat (R, n), and with each row's bidder ``progress`` (``prog``
        (R, len)) for seat 0 (R,)."""
        colours = np.arange(NUM_COLOURS)
        lot = ((ngems >= 1)[:, None] & (gem0[:, None] == colours)).astype(np.int64) \
            + ((ngems >= 2)[:, None] & (gem1[:, None] == colours))  # (two gems may share a colour)
        base7 = 7 ** colours
        table = _need_table()
        mi = np.maximum(mission, 0)[:, None, :]
        d0 = table[(collection @ base7)[:, :, None], mi]                  # (R, n, m)
        d1 = table[((collection + lot[:, None, :]) @ base7)[:, :, None], mi]
        counted = open_[:, None, :] & (d1 < d0)
        values = np.array(MISSION_VALUE)[mi]
        complete = _sequential_sum(np.where(counted, values * ((d1 == 0) * 1.0 - (d0 == 0) * 1.0), 0.0))
        top = prog.shape[1] - 1
        own = values[:, 0] * (np.take_along_axis(prog, np.minimum(d1[:, 0], top), axis=1)
                              - np.take_along_axis(prog, np.minimum(d0[:, 0], top), axis=1))
        return complete, _sequential_sum(np.where(counted[:, 0], own, 0.0))

    def _value_rows(self, r: SimpleNamespace, rows: np.ndarray, mem: np.ndarray) -> SimpleNamespace:
        """choose_bid up to weighing the opponents, for the bid decisions ``rows`` of decoded rows ``r``, each with
        its member's parameters (``mem``): the lot's value, the cost of a coin, the largest bid considered
        (``valuation``), and what the auction's pending record and the opponents' predicted bids need."""
        n, bids_r = self.n, self.agent.bids
        chart, card, deck_left, gem0, gem1, nrow, gem_deck, display, coins, collection, col_total, mission, open_, \
            unseen_pub, total_pub, mine, pub = (
                a[rows] for a in (r.chart, r.card, r.deck_left, r.gem0, r.gem1, r.nrow, r.gem_deck, r.display, r.coins,
                                  r.collection, r.col_total, r.mission, r.open_, r.unseen_pub, r.total_pub, r.mine,
                                  r.pub))
        limit = bids_r.stop - 1 - np.argmax(r.legal[rows, bids_r.stop - 1::-1], axis=1) - bids_r.start
        prm = self._params[mem]
        w = agent = SimpleNamespace(**{name: prm[:, j] for j, name in enumerate(_MEMBER_PARAMS)})  # (R,) each
        k = np.arange(len(rows))
        kind, amount = _KIND[card], _AMOUNT[card]
        treasure, invest, loan = kind == _TREASURE, kind == _INVEST, kind == _LOAN
        ngems = np.where(treasure, np.minimum(amount, nrow), 0)  # lot_gems
        g0, g1 = np.maximum(gem0, 0), np.maximum(gem1, 0)
        has0, has1 = ngems >= 1, ngems >= 2

        # shadow price of a coin (_shadow_price), ParametricBidder's end-game spending after it
        future = gem_deck + nrow - ngems
        deck_val = _sequential_sum(pub * unseen_pub) / np.maximum(total_pub, 1)
        left0 = (ngems == 0) & (gem0 >= 0)  # v.row[sold:]: slot 0 unsold, and slot 1 unsold
        left1 = (ngems <= 1) & (gem1 >= 0)
        row_left = np.where(left0, pub[k, g0], 0.0) + np.where(left1, pub[k, g1], 0.0)
        nleft = left0.astype(np.int64) + left1
        with np.errstate(divide="ignore", invalid="ignore"):
            per_gem = (row_left + np.maximum(0, future - nleft) * deck_val) / future
            loans_left = deck_left @ _LOAN_AMOUNT
            opp_money = coins[:, 1:].sum(axis=1) + loans_left * (n - 1) / n
            price = 1.0 + agent.psi * opp_money / future
            lam = np.maximum(1.0, per_gem / price)
            affordable = np.maximum(coins[:, 0], 1) / price
            wanted = future * agent.share
            lam = np.where(affordable > wanted, 1.0 + (lam - 1.0) * wanted / affordable, lam)
        lam = np.where(future <= 0, 1.0, np.minimum(agent.lam_max, lam))
        sold = col_total.sum(axis=1)
        stage_total = sold + nrow + gem_deck
        stage = np.where(stage_total > 0, sold / np.maximum(stage_total, 1), 1.0)
        lam = np.where(w.endgame_spend != 0, 1.0 + (lam - 1.0) * np.maximum(0.0, 1.0 - w.endgame_spend * stage), lam)

        # the opponents' values (public information) and limits
        extra = np.where(loan, amount, 0)
        limits = coins + extra[:, None]
        limits[:, 0] = 0
        pub_lot = np.where(has0, pub[k, g0], 0.0) + np.where(has1, pub[k, g1], 0.0)
        gain, own_gain = self._mission_gains(collection, gem0, gem1, ngems, mission, open_, self._progress[mem])
        opp_values = np.where(treasure[:, None], pub_lot[:, None] + gain, np.where(invest, amount, 0.0)[:, None])
        opp_values[:, 0] = 0.0

        # the lot's value to this seat and the cost of a coin bid
        top_row = len(CHARTS[0]) - 1
        chart_now = np.array(CHARTS)[chart[:, None], np.minimum(display, top_row)]
        per_gem_value = w.gem_private[:, None] * mine + w.gem_public[:, None] * pub + w.gem_now[:, None] * chart_now
        gems_value = np.where(has0, per_gem_value[k, g0], 0.0) + np.where(has1, per_gem_value[k, g1], 0.0)
        value = np.where(treasure, prm[k, np.array(_CHART_SCALE_COLS)[chart]] * gems_value + own_gain,
                         np.where(invest, amount.astype(np.float64), (lam - 1.0) * amount))
        cost = np.where(invest, w.invest_cost * (lam - 1.0), lam)
        value = np.where(treasure & (agent.deny != 0), value + agent.deny * gain[:, 1:].max(axis=1), value)
        value = np.where(treasure, value * np.where(amount == 1, w.shade_treasure1, w.shade_treasure2),
                         np.where(invest, value * w.shade_invest, w.shade_loan * value + w.loan_bonus * amount))
        value = value * np.maximum(0.0, 1.0 + w.shade_stage * (stage - 0.5))
        top = limit.copy()
        steep = cost > 1e-9
        top[steep] = np.minimum(limit[steep], (value[steep] / cost[steep]).astype(np.int64) + 1)
        valuation = np.stack([value, cost, np.where(value > 0, np.maximum(top, 0), 0)], axis=1)
        return SimpleNamespace(value=value, cost=cost, top=top, limit=limit, valuation=valuation, mem=mem,
                               rnd=r.rnd[rows], loan=loan, extra=extra, coins=coins, limits=limits,
                               opp_values=opp_values, tie_rank=r.tie_rank[rows], tie_random=r.tie_random[rows],
                               opp_bid_scale=w.opp_bid_scale)

    def _bid(self, g, lot: SimpleNamespace) -> np.ndarray:
        """choose_bid per row (after _learn) of games ``g``, from their :meth:`_value_rows` ``lot``: the bids, and
        each game's pending auction."""
        value, cost, top, loan = lot.value, lot.cost, lot.top, lot.loan
        limits, opp_values, tie_random = lot.limits, lot.opp_values, lot.tie_random
        self.pend_round[g] = lot.rnd
        self.pend_loan[g] = loan
        self.pend_value[g] = opp_values
        self.pend_limit[g] = limits
        self.pend_extra[g] = lot.extra
        self.pend_coins[g] = lot.coins
        out = np.zeros(len(g), np.int64)
        bidding = np.flatnonzero((value > 0) & (top > 0))
        if not bidding.size:
            return out
        # P(win | bid) against the opponents' predicted bids (_opponent_samples), then the best bid
        b = bidding
        samples, ok, size, ahead = self._opponent_samples(lot, b, g[b])
        # the arrays below are as wide as the largest top bid among their rows, and a row's chances at the
        # bids up to its own top do not depend on that width: rows with small tops go apart from the rest
        R2, T = len(b), int(top[b].max())
        tops = top[b]
        cut = T
        if R2 >= 256:  # (for fewer rows the split saves less than it costs)
            small, often = np.unique(tops, return_counts=True)
            below = np.cumsum(often)
            cut = small[np.argmin(below * (small + 4) + (R2 - below) * (T + 4))]
        for rows in ((np.flatnonzero(tops <= cut), np.flatnonzero(tops > cut)) if cut < T else (np.arange(R2),)):
            out[b[rows]] = self._best_bids(samples[rows], ok[rows], size[rows], ahead[rows], tie_random[b[rows]],
                                           value[b[rows]], cost[b[rows]], tops[rows])
        return out

    def _opponent_samples(self, lot: SimpleNamespace, b: np.ndarray, games: np.ndarray | None) -> tuple:
        """HeuristicBidder._opponent_samples for the bidding rows ``b`` of ``lot``: each opponent's predicted bids
        (R, n - 1, S), which of them count (``ok``) and how many (``size``, (R, n - 1, 1)), and whether this seat
        comes before each opponent in the tie order (``ahead``, (R, n - 1, 1)); from the memory of ``games`` (their
        games' indices), or from the bidders' priors alone (``games`` None: a fresh bidder's)."""
        n1, H = self.n - 1, self.H
        R = len(b)
        is_loan = lot.loan[b][:, None]
        mem = lot.mem[b]
        priors = np.where(is_loan[..., None], self._prior_fracs[mem][:, None, :],
                          self._prior_ratios[mem][:, None, :])  # (R, 1, 4)
        priors = np.broadcast_to(priors, (R, n1, priors.shape[-1]))
        if games is None:
            by_limit = np.zeros((R, n1), np.bool_)
            s, ok = priors, np.ones(priors.shape, np.bool_)
        else:
            gb = games[:, None]
            opp = np.arange(1, n1 + 1)[None, :]
            count = self.count[:, gb, opp]                 # (3, R, n - 1)
            by_limit = ~is_loan & (count[_FRACS] >= 4)    # the limit model, where it fits the past bids better
            if by_limit.any():
                rr, pp = np.nonzero(by_limit)
                gg = games[rr]
                by_limit[rr, pp] = _cv_rows(self.hist[_FRACS, gg, pp + 1], count[_FRACS, rr, pp]) \
                    < _cv_rows(self.hist[_RATIOS, gg, pp + 1], count[_RATIOS, rr, pp])
            which = np.where(is_loan, _LOAN_FRACS, np.where(by_limit, _FRACS, _RATIOS))
            ok = np.arange(H) < np.take_along_axis(count, which[None], 0)[0][..., None]
            s = np.concatenate([self.hist[which, gb, opp], priors], axis=2)
            ok = np.concatenate([ok, np.broadcast_to(~by_limit[..., None], priors.shape)], axis=2)
        lim = lot.limits[b, 1:]
        scale = np.where(is_loan | by_limit, lim, lot.opp_values[b, 1:])
        samples = np.minimum(np.rint(s * scale[..., None] * lot.opp_bid_scale[b, None, None]), lim[..., None])
        ahead = (lot.tie_rank[b, :1] < lot.tie_rank[b, 1:])[..., None]
        return samples, ok, ok.sum(axis=2)[..., None], ahead

    @staticmethod
    def _best_bids(samples, ok, size, ahead, tie_random, value, cost, top, detail: bool = False):
        """The bid in 0..top (per row) maximising P(win | bid) x (value - cost x bid), P(win) from the opponents'
        predicted bids ``samples`` (R, n - 1, S; ``ok`` those that count, ``size`` how many), ties per
        ``ahead`` (this seat first in the tie order) or ``tie_random``; with ``detail``, (bids, P(win) at them,
        the expected gain at them)."""
        R, n1, T = len(top), samples.shape[1], int(top.max())
        # how many samples lie below, and at or below, each bid: a histogram of the (integer) samples
        bucket = np.where(ok, np.clip(samples, -1, T + 1).astype(np.int64) + 1, T + 3)
        bucket += np.arange(R * n1).reshape(R, n1, 1) * (T + 4)
        cum = np.bincount(bucket.ravel(), minlength=R * n1 * (T + 4)).reshape(R, n1, T + 4).cumsum(axis=2)
        lt, le = cum[..., :T + 1], cum[..., 1:T + 2]
        q = np.where(ahead, le, lt) / size
        rand = np.flatnonzero(tie_random)  # (random tie-breaks: half the ties; only those rows computed so)
        if rand.size:
            q[rand] = (lt[rand] + 0.5 * (le[rand] - lt[rand])) / size[rand]
        win = q[:, 0]
        for j in range(1, n1):  # the opponents' chances multiplied in seat order
            win = win * q[:, j]
        bidsf = np.arange(T + 1, dtype=np.float64)
        eu = win * (value[:, None] - cost[:, None] * bidsf)
        eu[bidsf[None, :] > top[:, None]] = -np.inf
        best = np.argmax(eu, axis=1)
        if not detail:
            return best
        k = np.arange(R)
        return best, win[k, best], eu[k, best]

    def _reveal(self, held, chart, display, hand_size, gem_deck, on_row, unseen, unseen_pub, mine, pub,
                prm) -> np.ndarray:
        """choose_reveal per row: the legal colour (``held`` (R, 5)) with the least key (``prm``: each row's
        member parameters)."""
        w = SimpleNamespace(**{name: prm[:, _COL[name], None] for name in ("reveal_info", "reveal_value",
                                                                            "reveal_supply")})  # (R, 1) each
        R = len(held)
        total = unseen.sum(axis=1)
        deck_frac = np.where(total > 0, gem_deck / np.maximum(total, 1), 0.0)
        hands = hand_size.sum(axis=1)
        eye = np.eye(NUM_COLOURS, dtype=np.int64)
        disp = display[:, None, :] + eye                             # (R, c, k): colour c revealed
        un = np.maximum(0, unseen_pub[:, None, :] - eye)
        after = _expected_values(chart[:, None, None], disp, un.sum(axis=2)[:, :, None], un,
                                 (hands - 1)[:, None, None])
        supply = on_row + unseen * deck_frac[:, None]                # (R, k)
        mk, pk = mine[:, None, :], pub[:, None, :]
        loss = _sequential_sum(supply[:, None, :] * (np.abs(mk - pk) - np.abs(mk - after)))
        rise = _sequential_sum(supply[:, None, :] * (after - pk))
        score = w.reveal_info * loss + w.reveal_value * mine + w.reveal_supply * rise
        rounded = np.array([round(s, 6) for s in score.ravel().tolist()]).reshape(R, NUM_COLOURS)
        rounded = np.where(held, rounded, np.inf)
        best = held & (rounded == rounded.min(axis=1, keepdims=True))
        least = np.where(best, mine, np.inf)
        best &= least == least.min(axis=1, keepdims=True)
        return np.argmax(best, axis=1)


def _push(xs: list, x: float, cap: int) -> None:
    xs.append(x)
    if len(xs) > cap:
        del xs[0]


def _cv(xs: list) -> float:
    """Coefficient of variation (inf when undefined)."""
    if len(xs) < 2:
        return math.inf
    m = sum(xs) / len(xs)
    if m <= 1e-9:
        return math.inf
    var = sum((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return math.sqrt(var) / m


__all__ = ["BidderGames", "Decoder", "HeuristicBidder", "NEUTRAL_WEIGHTS", "TruthfulAgent", "View", "hypergeom_pmf",
           "private_values", "public_values"]
