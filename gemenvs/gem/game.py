"""The GEM engine: the :class:`~gemenvs.core.engine.Game` protocol over rules, encoder and renderer."""
from __future__ import annotations

import numpy as np

from gemenvs.core.engine import Game, Results
from gemenvs.gem import rules
from gemenvs.gem.data import PLAYER_COUNTS
from gemenvs.gem.encode import Encoder
from gemenvs.gem.render import render_text
from gemenvs.gem.rules import Config, GemState, Options

#: divisor turning a final score into a reward for reward="score" / "margin"
SCORE_SCALE = 30.0


class Gem(Game):
    """GEM for 2-4 players; options as in :class:`~gemenvs.gem.rules.Options`.

    Actions: the named ranges of ``self.action_spec`` (:mod:`gemenvs.gem.actions`): bid, pass,
    take a face-up card, pay with a coin or gem card, reinvest a gem card, end reinvestment.
    """

    name = "gem"
    version = 0
    player_counts = PLAYER_COUNTS
    score_scale = SCORE_SCALE
    # GEM has no private information (docs/gem.md "Hidden information"): every seat sees the cards, capital and
    # credit of the seat to act, so every seat can tell by itself that its decision had one option.
    forced_is_public = True

    def __init__(self, num_players: int = 3, reinvest_cost: str = "value_minus_one", opener_may_pass: bool = False,
                 manifest=None):
        self.opts = Options(num_players, reinvest_cost, opener_may_pass, manifest)
        self.cfg = Config(self.opts)
        self.manifest = self.cfg.manifest
        self.num_players = self.opts.num_players
        self.encoder = Encoder(self.cfg)
        self.spec = self.encoder.spec
        self.action_spec = self.cfg.actions
        c, k, n = self.cfg.num_cards, self.cfg.num_coins, self.num_players
        # per auction: n bids, a payment of at most every coin and gem card, a take; per
        # reinvestment turn: every card paid, every card reinvested, and the end
        self.max_decisions = c * (n + k + c + 1) + self.cfg.num_rounds * n * (k + 2 * c + 1)

    def options(self) -> dict:
        return dict(vars(self.opts))

    def initial_state(self, seed: int) -> GemState:
        return rules.new_state(self.cfg, seed)

    def to_act(self, state: GemState) -> tuple[int, ...]:
        return rules.to_act(state)

    def legal_mask(self, state: GemState, player: int) -> np.ndarray:
        return self.encoder.mask(state, player)

    def forced_action(self, state: GemState, player: int) -> int | None:
        if player != state.current:
            return None
        return rules.forced_action(state, self.cfg)

    def explain(self, state: GemState, player: int, action: int) -> str:
        return rules.explain(state, self.cfg, player, action) or "not legal now"

    def play(self, state: GemState, player: int, action: int) -> None:
        rules.play(state, self.cfg, player, action)

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

    def resample_hidden(self, state: GemState, observer: int, rng: np.random.Generator) -> GemState:
        """``state`` with the face-down stacks redealt from ``rng``: the cards nobody has seen,
        shuffled into stacks of the same sizes (nothing else is hidden, from any seat:
        docs/gem.md "Hidden information"). The new state's ``seed`` is kept, although it no longer deals these stacks.
        The draw depends only on what the observer sees and on ``rng`` (search agents rely on it)."""
        new = state.copy()
        hidden = sorted(c for stack in state.stacks for c in stack)  # (not in the order they lie)
        order = [hidden[k] for k in rng.permutation(len(hidden))]
        start = 0
        for stack in new.stacks:
            stack[:] = order[start:start + len(stack)]
            start += len(stack)
        return new

    def action_name(self, action: int) -> str:
        kind, arg = self.action_spec.decode(action)
        if kind == "bid":
            return f"bid {arg}"
        if kind in ("pass", "end"):
            return "pass" if kind == "pass" else "end reinvestment"
        if kind == "pay_coin":
            return f"pay with coin card {self.cfg.coin_values[arg]}"
        label = f"gem card {arg} ({self.manifest.label(arg)})"
        return {"take": "take ", "pay_card": "pay with ", "reinvest": "reinvest "}[kind] + label


__all__ = ["Gem"]
