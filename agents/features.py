"""Observation features: a few numbers computed from an observation (and its mask) that a policy reads beside it.

A policy network sees the flat observation, but some quantities a good player computes from it are hard for
an MLP to learn in one training run. MegaGem's clone of the tuned bidder copies more of its bids, and wins
more often against HeuristicBidders, with HeuristicBidder's valuation of the lot beside the observation
(3 numbers) than from the observation alone.

An :class:`ObservationFeatures` computes its numbers for a batch of rows in numpy. The training environment
appends them to the learner's observation (``env.features`` in a training config), and a
:class:`~gemenvs.agents.policy.PolicyAgent` trained on them computes them itself from the environment's
observation and mask: its file names them (metadata ``"features"``: a registered name and the game options,
plain JSON), so every consumer (evaluation, the self-play pool, matches) feeds the network the same input.
Loading never runs code: the name must be one of :data:`FEATURES`.

    feats = make_features("megagem_valuation", {"num_players": 4})
    x = feats.augment(observations, masks)       # (N, obs_dim + 3)

Some features are computed from the engine state instead (``needs_state``: Gem Jam's
``gemjam_lookahead_advice``, a one-turn search from the seat's view): ``feats.augment_state(obs, state, seat)``
for one decision. The training environment and the pretraining games hand them the state; a policy reading
them is played like a search agent (:func:`gemenvs.agents.base.decide` hands it the state).
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
    #: whether the numbers are computed from the engine state (:meth:`from_state`, e.g. a search from the seat's
    #: view) rather than from the observation and mask alone; a policy reading them then plays through
    #: :func:`gemenvs.agents.base.decide` (``needs_state``), as search agents do
    needs_state = False

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

    def reset(self, seed: int | None = None) -> None:
        """Reseed whatever randomness the features use (none here)."""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON that :func:`features_from_dict` turns back into these features."""
        return {"name": self.name, "options": dict(self.options)}

    def __reduce__(self):
        """Pickled (to a worker process) as its plain description, rebuilt there (randomness reseeded by reset)."""
        return features_from_dict, (self.to_dict(),)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.options})"


class MegaGemValuation(ObservationFeatures):
    """HeuristicBidder's valuation of the lot on a MegaGem bid decision: what the lot is worth to the seat
    (coins / 20), what a coin bid costs it (its shadow price), the largest bid it would consider (coins / 20);
    zeros on reveal decisions and rows with no legal action. A pure function of the observation and mask
    (:meth:`~gemenvs.agents.megagem.batched.BidderGames.valuation`), batched.

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
    (:class:`~gemenvs.agents.megagem.tuned.TunedBidder`), which are then written into ``options``, so that a
    policy file naming these features carries the weights it was trained with (a later weights file does not
    change them)."""

    name = "megagem_tuned_valuation"

    def _make_bidder(self, game, weights):
        from gemenvs.agents.megagem import ParametricBidder, TunedBidder, WeightsError

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
    coins / 20) (:meth:`~gemenvs.agents.megagem.batched.BidderGames.advice`). On a game's first decision the bid is
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


class GemJamLookaheadAdvice(ObservationFeatures):
    """:class:`~gemenvs.agents.gemjam.GemJamLookaheadAgent`'s advice on a Gem Jam decision, one block per action id:

    - ``value_<a>``: the lookahead's mean score of action ``a`` (its chance to win under the win model after the
      rule agents' play to the end of the turn) minus that of GemJamRuleAgent's choice with the lookahead's tie
      bonus (``margin``, 0.001) added, x 10; 0 for the rule agent's choice, for actions not tried and on decisions
      that are not searched;
    - ``advice_<a>``: 1 for the action the lookahead plays (the rule agent's choice where nothing is searched);
    - ``rule_<a>``: 1 for GemJamRuleAgent's choice;

    then ``searched`` (1 where the lookahead compared actions). The numbers need the engine state
    (``needs_state``): they are computed by :meth:`from_state`, which reads it only through ``resample_hidden``
    from the seat to act (so they hold nothing the seat cannot see; tested). They are random (``samples``
    redrawn hidden states per decision; :meth:`reset` reseeds them).

    ``options``: the Gem Jam options of the game (``num_players`` ...) and ``samples`` (hidden states redrawn
    per decision, default 2, written into the options)."""

    name = "gemjam_lookahead_advice"
    game = "gemjam"
    needs_state = True
    #: the factor of the ``value_<a>`` block (score differences are a few hundredths)
    VALUE_SCALE = 10.0

    def __init__(self, options: dict[str, Any] | None = None):
        super().__init__(options)
        from gemenvs.agents.gemjam import GemJamLookaheadAgent
        from gemenvs.gemjam.game import GemJam

        samples = self.options.setdefault("samples", 2)
        if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= 64:
            raise ValueError(f"{self.name}: 'samples' must be an integer from 1 to 64; got {samples!r}")
        game_options = {k: v for k, v in self.options.items() if k != "samples"}
        try:
            self.engine = GemJam(**game_options)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{self.name}: bad Gem Jam options {game_options}: {e}") from None
        self.agent = GemJamLookaheadAgent(self.engine, samples=samples, seed=0)
        self.obs_dim, self.num_actions = self.engine.spec.size, self.engine.num_actions
        ids = range(self.num_actions)
        self.labels = (tuple(f"value_{a}" for a in ids) + tuple(f"advice_{a}" for a in ids)
                       + tuple(f"rule_{a}" for a in ids) + ("searched",))

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        raise ValueError(f"{self.name} is computed from the engine state, not from observations: use from_state, "
                         f"or play the policy through gemenvs.arena.match (decide), which hands it the state")

    def reset(self, seed: int | None = None) -> None:
        """Reseed the lookahead's redraws of the hidden state."""
        self.agent.reset(seed)

    def from_state(self, state, seat: int) -> np.ndarray:
        """The numbers of ``seat``'s decision in ``state`` (``seat`` must be to act), float32 of length ``size``."""
        a_n = self.num_actions
        out = np.zeros(self.size, np.float32)
        choice, value = self.agent.action_values(state, seat)
        advice = self.agent.best(choice, value)  # the lookahead's own choice
        if value is not None:
            base = value[choice]
            for a, v in value.items():
                out[a] = (v - base) * self.VALUE_SCALE
            out[-1] = 1.0
        out[a_n + advice] = 1.0
        out[2 * a_n + choice] = 1.0
        return out

    def augment_state(self, observation: np.ndarray, state, seat: int) -> np.ndarray:
        """``observation`` (``seat``'s, in ``state``) with :meth:`from_state` appended."""
        return np.concatenate([np.asarray(observation, np.float32), self.from_state(state, seat)])

    def advised(self, row: np.ndarray) -> int:
        """The action the lookahead plays, read from a row of these numbers (or an augmented observation)."""
        a_n = self.num_actions
        start = len(row) - self.size + a_n
        return int(np.argmax(row[start:start + a_n]))


#: the observation features a training config (``env.features``) or a policy file may name
FEATURES: dict[str, type[ObservationFeatures]] = {
    f.name: f for f in (MegaGemValuation, MegaGemTunedValuation, MegaGemAdvice, MegaGemTunedAdvice,
                        GemJamLookaheadAdvice)}


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


__all__ = ["FEATURES", "GemJamLookaheadAdvice", "MegaGemAdvice", "MegaGemTunedAdvice", "MegaGemTunedValuation",
           "MegaGemValuation", "ObservationFeatures", "features_from_dict", "make_features"]
