"""MegaGem's scalar bidders: :class:`TruthfulAgent` and the shading, budgeting :class:`HeuristicBidder`.

Both read only the acting seat's observation, decoded through the environment's
:class:`~gemenvs.core.spec.ObservationSpec` (:mod:`gemenvs.agents.megagem.decode`), and the action
mask; they never touch the engine. Lot values come from :mod:`gemenvs.agents.megagem.valuation`.

Action ids come from the game's :class:`~gemenvs.core.spec.ActionSpec` (``BaseAgent.for_env``
hands it over): the range ``bid`` (argument: coins) and the range ``reveal`` (argument: colour,
Blue, Green, Pink, Purple, Yellow). Without an environment, build an agent from a game:
``HeuristicBidder(spec=game.spec, action_spec=game.action_spec)``.

Each has a batched twin in :mod:`gemenvs.agents.megagem.batched` that makes its choices for many
rows or games at once, named in ``batched_twin``: ``TruthfulAgent.act_batch`` and
``HeuristicBidder.batch_games`` play through it.
"""
from __future__ import annotations

import math

import numpy as np

from gemenvs.agents.base import BaseAgent, legal_actions
from gemenvs.agents.megagem.batched import BidderGames, TruthfulRows
from gemenvs.agents.megagem.decode import Decoder, View
from gemenvs.agents.megagem.valuation import (
    INVEST, LOAN, TREASURE, add_up, lot_gems, mission_gain, private_values, public_values, unseen_counts,
)
from gemenvs.core.spec import ActionSpec, ObservationSpec
from gemenvs.megagem.data import AUCTION_AMOUNT, AUCTION_TYPE, NUM_COLOURS


class _MegaGemAgent(BaseAgent):
    """Shared plumbing: the decoder and the ``bid`` / ``reveal`` ranges of the action spec."""

    #: the choices never draw on the agent's RNG (rows of many games may be decided in one call)
    deterministic = True

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
    #: the batched twin that makes this bidder's choices for many rows at once (:meth:`act_batch`)
    batched_twin = TruthfulRows

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """The choices of :meth:`act` on the rows, computed for all rows at once (its :attr:`batched_twin`)."""
        return self.batched_twin(self).act(observations, action_masks)

    def lot_value(self, v: View) -> float:
        kind = AUCTION_TYPE[v.card]
        if kind == INVEST:
            return float(AUCTION_AMOUNT[v.card])
        if kind == LOAN:
            return 0.0
        gems = lot_gems(v)
        values, _ = private_values(v)
        return add_up(values[c] for c in gems) + mission_gain(v, 0, gems, (1.0, 0.0))

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
    #: the batched twin that plays this bidder (and every bidder built on it) in many games at once
    #: (:meth:`batch_games`)
    batched_twin = BidderGames

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

    def batch_games(self, num_games: int) -> BidderGames:
        """This bidder playing ``num_games`` games at once, each with its own memory (:class:`BidderGames`):
        the same choices as one instance per game, for all their decisions in one numpy pass."""
        return self.batched_twin(self, num_games)

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
            expected = coins_before[w] + (preds[w][2] if cat == LOAN else 0)
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
            bids[w] = coins_before[w] + (preds[w][2] if cat == LOAN else 0) - v.coins[w]
        for p in seats:
            value, limit, _ = preds[p]
            b = bids[p]
            if limit <= 0:
                continue
            if cat == LOAN:
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
            if cat == LOAN:
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
        deck_val = add_up(pub[c] * unseen_pub[c] for c in range(NUM_COLOURS)) / max(total, 1)
        per_gem = (add_up(pub[c] for c in row_left) + max(0, future - len(row_left)) * deck_val) / future
        loans_left = sum(AUCTION_AMOUNT[k] * v.deck_left[k] for k in range(len(v.deck_left))
                         if AUCTION_TYPE[k] == LOAN)
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
        extra = amount if kind == LOAN else 0
        for p in range(1, n):
            limits[p] = v.coins[p] + extra
            if kind == TREASURE:
                opp_values[p] = add_up(pub[c] for c in gems) + mission_gain(v, p, gems, (1.0, 0.0))
            elif kind == INVEST:
                opp_values[p] = float(amount)
        cat = LOAN if kind == LOAN else "value"
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
    #: computed from the observation before weighing opponents' bids
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
        if kind == TREASURE:
            value = add_up(mine[c] for c in gems) + mission_gain(v, 0, gems, self.progress)
            cost_rate = lam
        elif kind == INVEST:
            value = float(amount)
            cost_rate = lam - 1.0
        else:
            value = (lam - 1.0) * amount
            cost_rate = lam
        if kind == TREASURE and self.deny:
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



def _push(xs: list, x: float, cap: int) -> None:
    xs.append(x)
    if len(xs) > cap:
        del xs[0]


def _cv(xs: list) -> float:
    """Coefficient of variation (inf when undefined)."""
    if len(xs) < 2:
        return math.inf
    m = add_up(xs) / len(xs)
    if m <= 1e-9:
        return math.inf
    var = add_up((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return math.sqrt(var) / m



__all__ = ["HeuristicBidder", "TruthfulAgent"]
