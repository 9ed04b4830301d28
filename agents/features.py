"""Observation features: a few numbers computed from an observation (and its mask) that a policy reads beside it.

A policy network sees the flat observation, but some quantities a good player computes from it are hard for
an MLP to learn in one training run. MegaGem's clone of the tuned bidder copies 46% of its bids from the
observation alone and 56% with HeuristicBidder's valuation of the lot beside it (3 numbers), and wins 43%
against three HeuristicBidders instead of 32% (docs/results.md, "What the clone misses").

An :class:`ObservationFeatures` computes its numbers for a batch of rows in numpy. The training environment
appends them to the learner's observation (``env.features`` in a training config), and a
:class:`~gemenvs.agents.policy.PolicyAgent` trained on them computes them itself from the environment's
observation and mask: its file names them (metadata ``"features"``: a registered name and the game options,
plain JSON), so every consumer (evaluation, the self-play pool, matches) feeds the network the same input.
Loading never runs code: the name must be one of :data:`FEATURES`.

    feats = make_features("megagem_valuation", {"num_players": 4})
    x = feats.augment(observations, masks)       # (N, obs_dim + 3)
"""
from __future__ import annotations

from typing import Any

import numpy as np


class ObservationFeatures:
    """Numbers computed from observation rows and their action masks; ``size`` per row, named by ``labels``."""

    #: the registered name (:data:`FEATURES`)
    name = ""
    #: one label per number, in order
    labels: tuple[str, ...] = ()
    #: the game whose observations it reads
    game = ""

    def __init__(self, options: dict[str, Any] | None = None):
        self.options = dict(options or {})

    @property
    def size(self) -> int:
        """How many numbers a row gets."""
        return len(self.labels)

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def augment(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """The rows with their features appended: ``(N, obs_dim + size)`` float32 (one row: ``(obs_dim + size,)``)."""
        obs = np.asarray(observations, np.float32)
        if obs.ndim == 1:
            return self.augment(obs[None], np.asarray(action_masks)[None])[0]
        return np.concatenate([obs, self(obs, action_masks)], axis=1)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON that :func:`features_from_dict` turns back into these features."""
        return {"name": self.name, "options": dict(self.options)}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.options})"


class MegaGemValuation(ObservationFeatures):
    """HeuristicBidder's valuation of the lot on a MegaGem bid decision: what the lot is worth to the seat
    (coins / 20), what a coin bid costs it (its shadow price), the largest bid it would consider (coins / 20);
    zeros on reveal decisions and rows with no legal action. A pure function of the observation and mask
    (:meth:`~gemenvs.agents.megagem.BidderGames.valuation`), batched.

    ``options``: the MegaGem options of the observations (``num_players`` decides their layout)."""

    name = "megagem_valuation"
    labels = ("lot_value", "coin_cost", "top_bid")
    game = "megagem"
    #: the divisors of the three numbers (coins to about unit range)
    SCALE = np.array([20.0, 1.0, 20.0])

    def __init__(self, options: dict[str, Any] | None = None):
        super().__init__(options)
        from gemenvs.megagem.game import MegaGem

        game_options = {k: v for k, v in self.options.items() if k != "weights"}
        try:
            game = MegaGem(**game_options)
        except TypeError as e:
            raise ValueError(f"{self.name}: bad MegaGem options {game_options}: {e}") from None
        bidder = self._make_bidder(game, self.options.get("weights"))
        self.obs_dim, self.num_actions = game.spec.size, game.num_actions
        self._table = bidder.batch_games(1)

    def _make_bidder(self, game, weights):
        """The bidder whose numbers these features are: HeuristicBidder (no ``weights`` option)."""
        from gemenvs.agents.megagem import HeuristicBidder

        if weights is not None:
            raise ValueError(f"{self.name} computes HeuristicBidder's numbers: it takes no 'weights' option")
        return HeuristicBidder(spec=game.spec, num_actions=game.num_actions, action_spec=game.action_spec)

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        obs, masks = np.asarray(observations), np.asarray(action_masks)
        if obs.ndim != 2 or obs.shape[1] != self.obs_dim or masks.shape != (len(obs), self.num_actions):
            raise ValueError(f"{self.name} reads observations (N, {self.obs_dim}) and masks (N, {self.num_actions}) "
                             f"of {self.options.get('num_players', 4)}-player MegaGem; got {obs.shape} and {masks.shape}")
        out = np.zeros((len(obs), self.size), np.float32)
        rows = np.flatnonzero(masks.any(axis=1))
        if rows.size:
            out[rows] = self._compute(obs[rows], masks[rows]) / self.SCALE
        return out

    def _compute(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The unscaled numbers of rows that have a legal action."""
        return self._table.valuation(obs, masks)


class MegaGemTunedValuation(MegaGemValuation):
    """:class:`MegaGemValuation` computed with the tuned bidder's weights for the player count instead of
    HeuristicBidder's. The weights are an option: ``options["weights"]`` if given (a ParametricBidder weight
    mapping, checked), else the tuned weights shipped with the package
    (:class:`~gemenvs.agents.megagem_tuned.TunedBidder`), which are then written into ``options``, so that a
    policy file naming these features carries the weights it was trained with (a later weights file does not
    change them)."""

    name = "megagem_tuned_valuation"

    def _make_bidder(self, game, weights):
        from gemenvs.agents.megagem_tuned import ParametricBidder, TunedBidder, WeightsError

        kw = dict(spec=game.spec, num_actions=game.num_actions, action_spec=game.action_spec)
        if weights is None:
            bidder = TunedBidder(**kw)
            self.options["weights"] = dict(bidder.weights)
            return bidder
        try:
            return ParametricBidder(weights=weights, **kw)
        except (WeightsError, TypeError, ValueError) as e:
            raise ValueError(f"{self.name}: bad 'weights' option: {e}") from None


class MegaGemAdvice(MegaGemValuation):
    """:class:`MegaGemValuation`'s three numbers, then the bidder's own advice from them: the bid a fresh
    HeuristicBidder (no memory of the game's bids: the opponents' bids predicted from its priors) makes
    (coins / 20), its chance to win with that bid, and the expected gain of it (chance x (value - cost x bid),
    coins / 20) (:meth:`~gemenvs.agents.megagem.BidderGames.advice`). On a game's first decision the bid is
    exactly HeuristicBidder's; later HeuristicBidder also weighs the bids it has seen, which an observation
    does not hold."""

    name = "megagem_advice"
    labels = ("lot_value", "coin_cost", "top_bid", "bid", "win_chance", "gain")
    SCALE = np.array([20.0, 1.0, 20.0, 20.0, 1.0, 20.0])

    def _compute(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self._table.advice(obs, masks)


class MegaGemTunedAdvice(MegaGemAdvice):
    """:class:`MegaGemAdvice` with the tuned bidder's weights for the player count (as
    :class:`MegaGemTunedValuation`)."""

    name = "megagem_tuned_advice"
    _make_bidder = MegaGemTunedValuation._make_bidder


#: the observation features a training config (``env.features``) or a policy file may name
FEATURES: dict[str, type[ObservationFeatures]] = {
    f.name: f for f in (MegaGemValuation, MegaGemTunedValuation, MegaGemAdvice, MegaGemTunedAdvice)}


def make_features(name: str, options: dict[str, Any] | None = None, game: str | None = None) -> ObservationFeatures:
    """The registered features ``name`` for observations of a game with ``options``; ``game`` (if given) must
    be the game they read. A clear ValueError otherwise."""
    if name not in FEATURES:
        raise ValueError(f"unknown observation features {name!r}; known: {', '.join(sorted(FEATURES))}")
    cls = FEATURES[name]
    if game is not None and game != cls.game:
        raise ValueError(f"observation features {name!r} read {cls.game} observations, not {game}")
    return cls(options)


def features_from_dict(data: Any) -> ObservationFeatures:
    """The features a policy file's metadata names (``{"name": ..., "options": {...}}``, plain JSON)."""
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) \
            or not isinstance(data.get("options", {}), dict):
        raise ValueError(f"observation features must be {{'name': str, 'options': dict}}; got {data!r}")
    return make_features(data["name"], data.get("options", {}))


__all__ = ["FEATURES", "MegaGemAdvice", "MegaGemTunedAdvice", "MegaGemTunedValuation", "MegaGemValuation",
           "ObservationFeatures", "features_from_dict", "make_features"]
