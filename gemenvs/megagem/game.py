"""The MegaGem engine: the :class:`~gemenvs.core.engine.Game` protocol over rules, encoder and renderer."""
from __future__ import annotations

import numpy as np

from gemenvs.core.engine import Game, Results
from gemenvs.core.spec import ActionSpec
from gemenvs.megagem import rules
from gemenvs.megagem.data import COLOURS
from gemenvs.megagem.encode import Encoder
from gemenvs.megagem.render import render_text
from gemenvs.megagem.rules import BID, MegaGemState, Options
from gemenvs.megagem.serialize import state_from_dict

#: divisor turning a final score into a reward for reward="score" / "margin"
SCORE_SCALE = 100.0


class MegaGem(Game):
    """MegaGem for 3-5 players; options as in :class:`~gemenvs.megagem.rules.Options`.

    Actions: ``0..max_bid`` bid that many coins; ``max_bid+1+c`` reveal a gem of colour ``c``
    (Blue, Green, Pink, Purple, Yellow) from hand.
    """

    name = "megagem"
    version = 0
    score_scale = SCORE_SCALE
    max_decisions = 25 * 5 + 25

    def __init__(self, num_players: int = 4, value_chart: str = "A", tie_break: str = "rulebook",
                 reveal_after: str = "every_auction", two_pairs: str = "any", public_bids: bool = True):
        self.opts = Options(num_players, value_chart, tie_break, reveal_after, two_pairs, public_bids)
        self.num_players = self.opts.num_players
        self.encoder = Encoder(self.opts)
        self.spec = self.encoder.spec
        self.max_bid = self.opts.max_bid
        self.action_spec = ActionSpec()
        self.action_spec.add("bid", self.max_bid + 1, "bid that many coins (bidding; at most the bid limit)")
        self.action_spec.add("reveal", meaning="reveal a gem of that colour from hand (the winner, after an auction)",
                             labels=COLOURS)
        self.reveal_offset = self.action_spec["reveal"].start

    def options(self) -> dict:
        return dict(vars(self.opts))

    def initial_state(self, seed: int) -> MegaGemState:
        return rules.new_state(self.opts, seed)

    def forced_action(self, state, player):  # TRANSITIONAL: forced bids not yet auto-played
        return None

    def resample_hidden(self, state, observer, rng):  # TRANSITIONAL
        raise NotImplementedError

    def state_from_dict(self, d: dict) -> MegaGemState:
        """Rebuild a state from ``state.to_dict()``; a malformed or inconsistent dict raises StateError."""
        return state_from_dict(d, self.opts)

    def to_act(self, state: MegaGemState) -> tuple[int, ...]:
        return rules.to_act(state)

    def legal_mask(self, state: MegaGemState, player: int) -> np.ndarray:
        return self.encoder.mask(state, player)

    def explain(self, state: MegaGemState, player: int, action: int) -> str:
        if state.phase == BID:
            if action >= self.reveal_offset:
                return "this is a bidding decision; reveal actions are not allowed"
            limit = rules.bid_limit(state, player)
            if action > limit:
                return f"bid {action} exceeds the limit of {limit} (coins{' + loan' if limit > state.coins[player] else ''})"
            return "legal"
        if action < self.reveal_offset:
            return "the winner must reveal a gem from its hand, not bid"
        colour = action - self.reveal_offset
        if state.hands[player][colour] == 0:
            return f"no {COLOURS[colour]} gem in hand"
        return "legal"

    def play(self, state: MegaGemState, player: int, action: int) -> None:
        if state.phase == BID:
            rules.place_bid(state, self.opts, player, action)
        else:
            rules.reveal(state, self.opts, player, action - self.reveal_offset)

    def is_over(self, state: MegaGemState) -> bool:
        return state.phase == rules.OVER

    def results(self, state: MegaGemState) -> Results:
        if state.phase != rules.OVER:
            raise ValueError("results() needs a finished game")
        return rules.results(state)

    def observe(self, state: MegaGemState, player: int) -> np.ndarray:
        return self.encoder.observe(state, player)

    def render(self, state: MegaGemState, viewer: int | None = None) -> str:
        return render_text(state, viewer, self.opts.public_bids)

    def action_name(self, action: int) -> str:
        if action < self.reveal_offset:
            return f"bid {action}"
        return f"reveal {COLOURS[action - self.reveal_offset]}"


__all__ = ["MegaGem"]
