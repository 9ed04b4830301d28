"""Batched twins of MegaGem's scalar bidders: the same choices for many rows or games in one numpy pass.

Each scalar bidder names its twin here in ``batched_twin`` (this module imports none of them: it reads
the bidder it is given), and the twin makes exactly that bidder's choices (``tests/test_act_batch.py``
plays every declared twin against its scalar bidder, and each bidder built on it, on the observations
of seeded games and requires the same actions):

* :class:`TruthfulRows` plays :class:`~gemenvs.agents.megagem.bidders.TruthfulAgent` on rows of any
  games (it remembers nothing): the arithmetic of ``act`` step for step, in the same float64
  operations and order, expected values from the same cached function.
* :class:`BidderGames` plays :class:`~gemenvs.agents.megagem.bidders.HeuristicBidder` (and the tuned
  family, the same arithmetic with other parameters) in many games at once, with every game's
  memory in arrays. Where Python's arithmetic differs from numpy's usual one it is reproduced:
  ``x ** 2`` is libm's pow (np.float_power with an array exponent, not x * x), ``round(x, 6)`` is
  Python's round.
"""
from __future__ import annotations

from functools import cache
from types import SimpleNamespace

import numpy as np

from gemenvs.agents.base import BaseAgent
from gemenvs.agents.megagem.decode import CHARTS, decodes_to_one, first_true, onehot_rows
from gemenvs.agents.megagem.valuation import (
    INVEST, LOAN, TREASURE, expected_values, gems_needed_table, missions_met_table,
)
from gemenvs.megagem.data import AUCTION_AMOUNT, AUCTION_TYPE, CHART_NAMES, GEMS_PER_COLOUR, MISSION_VALUE, NUM_COLOURS

#: below this many rows TruthfulRows calls act row by row (about as quick at 8 rows)
_FEW_ROWS = 8


@cache
def _batch_columns(spec_size: int, slices: tuple) -> tuple[np.ndarray, dict[str, slice]]:
    """The observation columns :class:`TruthfulRows` decodes, and each block's place among them."""
    cols, where = [], {}
    for name, (a, b) in slices:
        if name in ("value_chart", "auction_card", "gem_row", "display", "own_hand", "hand_size", "collection",
                    "mission", "mission_owner"):
            where[name] = slice(sum(len(c) for c in cols), sum(len(c) for c in cols) + b - a)
            cols.append(np.arange(a, b))
    return np.concatenate(cols), where


class TruthfulRows:
    """:class:`~gemenvs.agents.megagem.bidders.TruthfulAgent` deciding rows of any games at once (it remembers
    nothing, so the rows need not say their games); ``agent.act_batch`` plays through it.

    Decoding, lot values (expected gem values, missions the lot completes at once), the rounded
    bid clipped to the limit and the reveal of the least valuable colour held are computed for
    all rows with numpy, in the same float64 operations and order as ``act``; expected values
    come from :func:`~gemenvs.agents.megagem.valuation.expected_value` itself (tabled by argument).
    """

    def __init__(self, agent: BaseAgent, num_games: int | None = None):
        self.agent = agent
        self.num_games = num_games

    def reset(self, games=None) -> None:
        """Nothing to forget (the truthful bidder remembers no game)."""

    def act(self, observations: np.ndarray, action_masks: np.ndarray, games=None) -> np.ndarray:
        """``TruthfulAgent.act`` on every row of ``observations`` (G, obs_dim) and ``action_masks`` (G, A)."""
        return _truthful_rows(self.agent, observations, action_masks)


def _truthful_rows(agent: BaseAgent, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
    """:meth:`TruthfulRows.act`'s arithmetic (see the class)."""
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
    chart = onehot_rows(block("value_chart")) % len(CHARTS)  # (act's decoder indexes -1 too: the last chart)
    card = onehot_rows(block("auction_card"))
    kind = np.array(AUCTION_TYPE)[card % len(AUCTION_TYPE)]  # (and the last kind)
    amount = np.array(AUCTION_AMOUNT)[card % len(AUCTION_AMOUNT)]
    row = block("gem_row")
    slot0, slot1 = onehot_rows(row[:, :NUM_COLOURS]), onehot_rows(row[:, NUM_COLOURS:])
    gem0 = np.where(slot0 >= 0, slot0, slot1)  # v.row: the filled slots in order
    gem1 = np.where(slot0 >= 0, slot1, -1)
    display, hand = block("display"), block("own_hand")
    collection = block("collection").reshape(G, n, NUM_COLOURS)
    colours = np.arange(NUM_COLOURS)
    on0, on1 = gem0[:, None] == colours, gem1[:, None] == colours
    unseen = np.maximum(0, GEMS_PER_COLOUR - (display + collection.sum(axis=1) + on0 + on1 + hand))
    values = expected_values(chart[:, None], display + hand, unseen.sum(axis=1)[:, None], unseen,
                              block("hand_size")[:, 1:].sum(axis=1)[:, None])
    before = collection[:, 0]
    treasure = (kind == TREASURE) & (card >= 0)
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
    table, base7 = missions_met_table(), 7 ** np.arange(NUM_COLOURS)
    completed = table.take(after @ base7) & ~table.take(before @ base7)
    mission = onehot_rows(block("mission").reshape(G * m, -1)).reshape(G, m)
    owner = onehot_rows(block("mission_owner").reshape(G * m, -1)).reshape(G, m) - 1
    counted = (mission >= 0) & (owner < 0) & ((completed[:, None] >> np.maximum(mission, 0)) & 1).astype(bool)
    gain = (counted * np.array(MISSION_VALUE)[np.maximum(mission, 0)]).sum(axis=1).astype(np.float64)
    value = np.where(kind == INVEST, amount.astype(np.float64), np.where(kind == LOAN, 0.0, gems_value + gain))
    limit = bids.stop - 1 - np.argmax(legal[:, bids.stop - 1::-1], axis=1) - bids.start  # the largest legal bid
    bid = np.minimum(limit, np.rint(value).astype(np.int64))
    out[~revealing] = (bids.start + np.clip(bid, 0, limit))[~revealing]
    return out



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
_LOAN_AMOUNT = np.where(_KIND == LOAN, _AMOUNT, 0)  # per auction card


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
    # Python's ``x ** 2`` (libm pow; not always x * x), of the values used only (0 elsewhere)
    sq = np.float_power(dev, np.full(dev.shape, 2.0), out=np.zeros(dev.shape), where=used)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = _sequential_sum(sq) / (c - 1)
        cv = np.sqrt(var) / mean
    return np.where((count < 2) | (mean <= 1e-9), np.inf, cv)


class BidderGames:
    """:class:`HeuristicBidder` (or a :class:`~gemenvs.agents.megagem.tuned.ParametricBidder`) playing
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

    def __init__(self, agent: BaseAgent, num_games: int):
        self.agent = agent
        self.num_games = N = int(num_games)
        self.n = n = agent.decode.n
        self.H = H = int(agent.history_len)
        d = agent.decode  # the slices whose scale is 1 (one-hot ones read as they are, see _decode)
        self._unit_scale = {name for name, (a, b) in d.sl.items() if (d.scale[a:b] == 1).all()}
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

    def add_member(self, agent: BaseAgent) -> int:
        """Let ``agent`` play games of this table too (its parameters read now); its index for ``act``'s
        ``members``. It must be a bidder this table plays (its ``batched_twin`` is BidderGames) for the
        same observations and actions, with the same history length and parameter shapes."""
        first = self.agent
        if getattr(type(agent), "batched_twin", None) is not BidderGames:
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

        def block(name):  # act's decoding (every value times its slice's scale, rounded), of one slice
            a, b = d.sl[name]
            return np.rint(obs[:, a:b] * d.scale[a:b]).astype(np.int64)

        def first_one(name, parts=1):  # onehot_rows(block(name)) (its ``parts`` one-hot blocks), without rounding
            a, b = d.sl[name]
            v = obs[:, a:b] if name in self._unit_scale else obs[:, a:b] * d.scale[a:b]
            return first_true(decodes_to_one(v.reshape(G * parts, -1)))

        r = SimpleNamespace()
        r.legal = legal = masks != 0
        first = np.argmax(legal, axis=1)
        r.revealing = (first >= reveals.start) & (first < reveals.stop)
        r.chart = chart = first_one("value_chart") % len(CHARTS)
        r.rnd = block("round")[:, 0]
        r.card = first_one("auction_card")
        r.deck_left = block("auction_deck_left")
        slot0, slot1 = first_one("gem_row", 2).reshape(G, 2).T
        r.gem0 = gem0 = np.where(slot0 >= 0, slot0, slot1)  # v.row: the filled slots in order
        r.gem1 = gem1 = np.where(slot0 >= 0, slot1, -1)
        r.nrow = (gem0 >= 0).astype(np.int64) + (gem1 >= 0)
        r.gem_deck = block("gem_deck_left")[:, 0]
        display, hand, hand_size = block("display"), block("own_hand"), block("hand_size")
        r.display, r.hand_size, r.coins = display, hand_size, block("coins")
        r.collection = collection = block("collection").reshape(G, n, NUM_COLOURS)
        r.col_total = col_total = collection.sum(axis=1)
        m = d.num_mission_slots
        r.mission = mission = first_one("mission", m).reshape(G, m)
        owner = first_one("mission_owner", m).reshape(G, m) - 1
        r.open_ = (mission >= 0) & (owner < 0)
        colours = np.arange(NUM_COLOURS)
        r.on_row = on_row = (gem0[:, None] == colours).astype(np.int64) + (gem1[:, None] == colours)
        r.last_bids, r.last_winner = block("last_bids"), first_one("last_winner")
        r.tie_rank, r.tie_random = block("tie_rank"), block("tie_random")[:, 0] == 1

        # expected final gem values: own (given the hand) and public
        r.unseen = unseen = np.maximum(0, GEMS_PER_COLOUR - (display + col_total + on_row + hand))
        r.unseen_pub = unseen_pub = np.maximum(0, GEMS_PER_COLOUR - (display + col_total + on_row))
        r.total_pub = total_pub = unseen_pub.sum(axis=1)
        r.mine = mine = expected_values(chart[:, None], display + hand, unseen.sum(axis=1)[:, None], unseen,
                                         hand_size[:, 1:].sum(axis=1)[:, None])
        r.pub = pub = expected_values(chart[:, None], display, total_pub[:, None], unseen_pub,
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
        table = gems_needed_table()
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
        treasure, invest, loan = kind == TREASURE, kind == INVEST, kind == LOAN
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
        after = expected_values(chart[:, None, None], disp, un.sum(axis=2)[:, :, None], un,
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



__all__ = ["NEUTRAL_WEIGHTS", "BidderGames", "TruthfulRows"]
