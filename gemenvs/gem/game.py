"""The GEM engine: the :class:`~gemenvs.core.engine.Game` protocol over rules, encoder and renderer."""
from __future__ import annotations

import numpy as np

from gemenvs.core.engine import Game, Results
from gemenvs.core.spec import ActionSpec
from gemenvs.gem import rules
from gemenvs.gem.encode import Encoder
from gemenvs.gem.render import render_text
from gemenvs.gem.rules import Config, GemState, Options
from gemenvs.gem.serialize import state_from_dict

#: divisor turning a final score into a reward for reward="score" / "margin"
SCORE_SCALE = 30.0


class Gem(Game):
    """GEM for 2-4 players; options as in :class:`~gemenvs.gem.rules.Options`.

    Actions: see :mod:`gemenvs.gem.actions` (bid 0..B, pass, take card, pay with a coin or gem
    card, reinvest a gem card, end reinvestment); ``self.layout`` holds the offsets.
    """

    name = "gem"
    version = 0
    score_scale = SCORE_SCALE

    def __init__(self, num_players: int = 3, reinvest_cost: str = "value_minus_one", opener_may_pass: bool = False,
                 manifest=None):
        self.opts = Options(num_players, reinvest_cost, opener_may_pass, manifest)
        self.cfg = Config(self.opts)
        self.manifest = self.cfg.manifest
        self.num_players = self.opts.num_players
        self.layout = self.cfg.layout
        self.encoder = Encoder(self.cfg)
        self.spec = self.encoder.spec
        lay = self.layout
        self.action_spec = ActionSpec()
        self.action_spec.add("bid", lay.max_bid + 1, "bid that many (auction)")
        self.action_spec.add("pass", 1, "pass in this auction")
        self.action_spec.add("take", lay.num_cards, "take face-up gem card c (the auction winner)")
        self.action_spec.add("pay_coin", lay.num_coins, "turn own coin card j to LEVERAGED (payment or credit)")
        self.action_spec.add("pay_card", lay.num_cards, "turn own gem card c to LEVERAGED (payment or credit)")
        self.action_spec.add("reinvest", lay.num_cards, "turn own LEVERAGED gem card c to INVESTED from credit")
        self.action_spec.add("end", 1, "end one's reinvestment phase")
        c, k, n = self.cfg.num_cards, self.cfg.num_coins, self.num_players
        # per auction: n bids, a payment of at most every coin and gem card, a take; per
        # reinvestment turn: every card paid, every card reinvested, and the end
        self.max_decisions = c * (n + k + c + 1) + self.cfg.num_rounds * n * (k + 2 * c + 1)

    def options(self) -> dict:
        return dict(vars(self.opts))

    def initial_state(self, seed: int) -> GemState:
        return rules.new_state(self.cfg, seed)

    def new_state(self, seed: int | None = None) -> GemState:  # TRANSITIONAL: GEM still plays its own forced moves
        return rules.new_state(self.cfg, seed)

    def resample_hidden(self, state, observer, rng):  # TRANSITIONAL
        raise NotImplementedError

    def state_from_dict(self, d: dict) -> GemState:
        """Rebuild a state from ``state.to_dict()``; a malformed or inconsistent dict raises StateError."""
        return state_from_dict(d, self.cfg)

    def to_act(self, state: GemState) -> tuple[int, ...]:
        return rules.to_act(state)

    def legal_actions(self, state: GemState) -> list[int]:
        """The legal action ids of the seat to decide, ascending."""
        return rules.legal_actions(state, self.cfg)

    def legal_mask(self, state: GemState, player: int) -> np.ndarray:
        return self.encoder.mask(state, player)

    def illegal_reason(self, state: GemState, player: int, action: int) -> str | None:  # TRANSITIONAL
        return rules.illegal_reason(state, self.cfg, player, action)

    def explain(self, state: GemState, player: int, action: int) -> str:
        return rules.illegal_reason(state, self.cfg, player, action) or "legal"

    def play(self, state: GemState, player: int, action: int) -> None:
        rules.apply(state, self.cfg, player, action)

    def apply_legal(self, state: GemState, player: int, action: int) -> None:  # TRANSITIONAL: GEM logs itself
        rules.apply(state, self.cfg, player, action)

    def is_over(self, state: GemState) -> bool:
        return state.phase == rules.OVER

    def results(self, state: GemState) -> Results:
        if state.phase != rules.OVER:
            raise ValueError("results() needs a finished game")
        return rules.results(state, self.cfg)

    def observe(self, state: GemState, player: int) -> np.ndarray:
        return self.encoder.observe(state, player)

    def render(self, state: GemState, viewer: int | None = None) -> str:
        return render_text(state, self.cfg, viewer)

    def action_name(self, action: int) -> str:
        kind, arg = self.layout.decode(action)
        if kind == "bid":
            return f"bid {arg}"
        if kind in ("pass", "end"):
            return "pass" if kind == "pass" else "end reinvestment"
        if kind == "pay_coin":
            return f"pay with coin card {self.cfg.coin_values[arg]}"
        label = f"gem card {arg} ({self.manifest.label(arg)})"
        return {"take": "take ", "pay_card": "pay with ", "reinvest": "reinvest "}[kind] + label


__all__ = ["Gem"]
