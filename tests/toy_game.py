"""Sealed Lots: a small game written only to show that an entry is all a new game needs.

Rules (2-4 players). Every player starts with ``coins`` coins (default 8). ``lots`` lots (default
3) are sold one after another; each is worth 1-5 points, drawn at setup; a lot's worth is shown
when its bidding starts, the worth of the lots to come stays hidden. For each lot every player
places one sealed bid of 0 up to their coins, all at once. The highest bid wins the lot: its
bidder pays the bid and scores the lot's points; the others pay nothing. Ties go to the tied
bidder first clockwise from the lot's opener (seat ``lot % players``), so a lot nobody bids on
goes to its opener for free. Once a lot is sold every bid on it is shown. After the last lot, most
points wins; ties by most coins left, then shared. A player with no coins bids 0 (forced).

This module holds everything of the game: the state, the :class:`SealedLots` engine with its
observation and action specs and text render, a baseline agent (:class:`ValueBidder`) and
:data:`ENTRY`. ``tests/conftest.py`` registers the entry; nothing else in the suite names the game.
"""
from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field

import numpy as np

from gemenvs.agents.base import BaseAgent, legal_actions
from gemenvs.core.engine import Game, Results, check_int
from gemenvs.core.entry import RANDOM_AGENT, GameEntry
from gemenvs.core.spec import ActionSpec, ObservationSpec

MAX_WORTH = 5


@dataclass
class LotsState:
    """A game of Sealed Lots as plain data (``log``: the core's decision log)."""

    seed: int
    values: list[int]
    lot: int
    coins: list[int]
    points: list[int]
    bids: list[int | None]
    winners: list[int] = field(default_factory=list)
    prices: list[int] = field(default_factory=list)
    log: list[list[int]] = field(default_factory=list)

    def copy(self) -> LotsState:
        return copy.deepcopy(self)

    def to_dict(self) -> dict:
        return asdict(self)


class SealedLots(Game):
    """Sealed Lots for 2-4 players (the rules: the module docstring)."""

    name = "sealedlots"
    version = 0
    player_counts = (2, 3, 4)
    score_scale = float(MAX_WORTH)

    def __init__(self, num_players: int = 3, lots: int = 3, coins: int = 8):
        self.num_players = check_int("num_players", num_players, 2, 4)
        self.lots = check_int("lots", lots, 1, 6)
        self.coins = check_int("coins", coins, 1, 20)
        self.max_decisions = self.lots * self.num_players
        n, k = self.num_players, self.lots
        spec = ObservationSpec()
        spec.add("lot", k, "one-hot: the lot being sold")
        spec.add("worth", 1, "the worth of the lot being sold", scale=MAX_WORTH)
        spec.add("sold_worth", k, "the worth of each lot sold so far", scale=MAX_WORTH)
        spec.add("sold_to", (k, n), "one-hot: who bought each lot sold (row 0: you)")
        spec.add("sold_price", k, "what each lot sold so far was bought for", scale=self.coins)
        spec.add("coins", n, "coins of every player (entry 0: you)", scale=self.coins)
        spec.add("points", n, "points of every player (entry 0: you)", scale=MAX_WORTH * k)
        spec.add("has_bid", n, "1 for each player whose sealed bid on this lot is placed (entry 0: you)")
        spec.add("own_bid", 1, "your sealed bid on this lot (0 until placed)", scale=self.coins)
        self.spec = spec
        self.action_spec = ActionSpec()
        self.action_spec.add("bid", self.coins + 1, "bid that many coins for the lot being sold")

    def options(self) -> dict:
        return {"num_players": self.num_players, "lots": self.lots, "coins": self.coins}

    # ------------------------------------------------------------------ rules

    def initial_state(self, seed: int) -> LotsState:
        values = [int(v) for v in np.random.default_rng(seed).integers(1, MAX_WORTH + 1, size=self.lots)]
        n = self.num_players
        return LotsState(seed, values, 0, [self.coins] * n, [0] * n, [None] * n)

    def to_act(self, state: LotsState) -> tuple[int, ...]:
        if self.is_over(state):
            return ()
        return tuple(p for p, b in enumerate(state.bids) if b is None)

    def legal_mask(self, state: LotsState, player: int) -> np.ndarray:
        mask = np.zeros(self.num_actions, dtype=np.int8)
        if not self.is_over(state) and state.bids[player] is None:
            mask[: state.coins[player] + 1] = 1
        return mask

    def explain(self, state: LotsState, player: int, action: int) -> str:
        return f"a bid of {action} is more than your {state.coins[player]} coins"

    def play(self, state: LotsState, player: int, action: int) -> None:
        state.bids[player] = int(action)
        if any(b is None for b in state.bids):
            return
        n, top = self.num_players, max(state.bids)
        opener = state.lot % n
        winner = min((p for p in range(n) if state.bids[p] == top), key=lambda p: (p - opener) % n)
        state.coins[winner] -= top
        state.points[winner] += state.values[state.lot]
        state.winners.append(winner)
        state.prices.append(top)
        state.lot += 1
        state.bids = [None] * n

    def is_over(self, state: LotsState) -> bool:
        return state.lot >= self.lots

    def results(self, state: LotsState) -> Results:
        keys = [(state.points[p], state.coins[p]) for p in range(self.num_players)]
        best = max(keys)
        breakdown = [{"lots": float(state.winners.count(p)), "coins_left": float(state.coins[p]),
                      "total": float(state.points[p])} for p in range(self.num_players)]
        return Results([float(x) for x in state.points], breakdown, [p for p, k in enumerate(keys) if k == best],
                       rank_keys=keys)

    def log_action_hidden(self, state: LotsState, index: int, viewer: int) -> bool:
        """A sealed bid on the lot being sold (the last log entries) is hidden until the lot is sold."""
        placed = sum(b is not None for b in state.bids)
        return index >= len(state.log) - placed

    # ------------------------------------------------------------------ what a seat sees

    def observe(self, state: LotsState, player: int) -> np.ndarray:
        n, k = self.num_players, self.lots
        seats = [(player + j) % n for j in range(n)]
        obs = np.zeros(self.spec.size, dtype=np.float32)
        view = {s.name: obs[s.offset:s.stop].reshape(s.shape) for s in self.spec.slices}
        if state.lot < k:
            view["lot"][state.lot] = 1.0
            view["worth"][0] = state.values[state.lot] / MAX_WORTH
        for j, (w, price) in enumerate(zip(state.winners, state.prices)):
            view["sold_worth"][j] = state.values[j] / MAX_WORTH
            view["sold_to"][j, (w - player) % n] = 1.0
            view["sold_price"][j] = price / self.coins
        view["coins"][:] = [state.coins[q] / self.coins for q in seats]
        view["points"][:] = [state.points[q] / (MAX_WORTH * k) for q in seats]
        view["has_bid"][:] = [float(state.bids[q] is not None) for q in seats]
        own = state.bids[player]
        view["own_bid"][0] = 0.0 if own is None else own / self.coins
        return obs

    def render(self, state: LotsState, viewer: int | None = None) -> str:
        k = self.lots
        head = "Sealed Lots - game over" if self.is_over(state) else \
            f"Sealed Lots - lot {state.lot + 1} of {k}, worth {state.values[state.lot]}"
        lots = []
        for j in range(k):
            if j < state.lot:
                lots.append(f"#{j + 1} worth {state.values[j]}: player_{state.winners[j]} for {state.prices[j]}")
            elif j == state.lot:
                lots.append(f"#{j + 1} worth {state.values[j]}: bidding")
            else:
                lots.append(f"#{j + 1}: worth hidden")
        lines = [head, "lots: " + " | ".join(lots)]
        for p in range(self.num_players):
            bid = state.bids[p]
            if self.is_over(state):
                note = ""
            elif bid is None:
                note = "to bid"
            elif p == viewer:
                note = f"sealed bid {bid}"
            else:
                note = "bid placed"
            you = " (you)" if p == viewer else ""
            lines.append(f"  player_{p}{you:<6} coins {state.coins[p]:>2}  points {state.points[p]:>2}  {note}".rstrip())
        if self.is_over(state):
            res = self.results(state)
            lines.append("winner(s): " + ", ".join(f"player_{w}" for w in res.winners))
        return "\n".join(lines)

    def resample_hidden(self, state: LotsState, observer: int, rng: np.random.Generator) -> LotsState:
        """Redrawn: the worth of the lots to come and the other players' sealed bids on this lot."""
        s = state.copy()
        for j in range(s.lot + 1, self.lots):
            s.values[j] = int(rng.integers(1, MAX_WORTH + 1))
        placed = sum(b is not None for b in s.bids)
        start = len(s.log) - placed
        for k in range(start, len(s.log)):
            p = s.log[k][0]
            if p != observer:
                s.bids[p] = int(rng.integers(0, s.coins[p] + 1))
                s.log[k][1] = s.bids[p]
        return s


class ValueBidder(BaseAgent):
    """Bids the worth of the lot being sold (at most its coins): the Sealed Lots baseline."""

    name = "value"
    per_game_memory = False

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        worth = round(float(self.spec.view(observation, "worth")[0]) * MAX_WORTH)
        return int(min(worth, legal[-1]))


#: everything the suite needs to know about Sealed Lots
ENTRY = GameEntry(
    SealedLots,
    env_id="toy/SealedLots-v0",
    title="Sealed Lots",
    baselines={"random": RANDOM_AGENT, "value": "toy_game:ValueBidder"},
    default_opponent="value",
    simultaneous=True,
)
