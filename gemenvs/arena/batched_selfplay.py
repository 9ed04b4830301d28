"""Single-learner MegaGem on the batched engine: B games in one process, the opponents acting in batch.

:class:`BatchedSelfPlay` is the core (numpy only): ``num_games`` MegaGem games held by one
:class:`~gemenvs.megagem.batched.BatchedMegaGem`, the learner in one seat of each, the other
seats played by opponents. :class:`~gemenvs.arena.batched_vec_env.BatchedVecEnv` shows it to
Stable-Baselines3 as a ``VecEnv`` (MaskablePPO's ``action_masks``, auto-reset, ``terminal_observation``; in
:mod:`gemenvs.arena.batched_vec_env`, imported on first use), and :class:`BatchedVectorEnv` to
Gymnasium as a ``gymnasium.vector.VectorEnv`` (same-step autoreset, ``final_obs``/``final_info``),
which ``gymnasium.make_vec("gemenvs/MegaGem-v0", num_envs=B, ...)`` builds (:func:`make_vector_env`,
MegaGem's ``vector_entry_point``). The per-process path (one :class:`~gemenvs.arena.SingleAgentEnv`
per worker) and this one play the same games by the same rules, with the same observations,
masks, rewards and final infos; ``gemenvs.training.selfplay.make_vec_env`` picks one
(``vec_env`` in the config).

**A step.** Between steps every game waits on the learner: its seat is among the seats to act
(``to_act``). ``step(actions)`` takes one action per game (the learner's) and:

1. asks the opponents for the other seats to act (the sealed bids of the same round, all at
   once), puts the learner's actions beside theirs and steps every game once;
2. **advances the games where the learner has no decision** now (an opponent must reveal the gem
   of the auction it won; a round in which the learner's bid is forced, its bid limit being 0):
   those games are stepped again, with their opponents' actions, while every game that waits on
   the learner is *held* (left exactly as it is), until every game waits on the learner again
   or is over. Each round of this loop is one engine step over the games that need it (usually
   one reveal: most steps need one extra round, a few two or three);
3. reports the games that ended (the learner's terminal reward; the infos below), deals their
   next games (the learner's seat and the opponents drawn afresh) and plays those up to the
   learner's first decision.

So, as in ``SingleAgentEnv``, one learner step is one learner decision, the reward is 0 until
the game's last step and then the learner's terminal reward (``reward`` mode: ``"win"`` +1/-1,
``"score"``, ``"rank"``, ``"margin"``; the engine's ``terminal_rewards``), and the
observation after the last step is the next game's first (the finished game's final
observation is in the info). MegaGem has no shaping potential (``Game.progress`` is 0), so there
is no shaping here.

**Seats and opponents.** Game ``j`` of slot ``b`` is the scalar game
``MegaGem.new_state(game_seeds(seed, b, j))`` (the engine's seeding). The learner's seat
(``learner_seat``, or drawn uniformly per game) and the opponents of a pool (one member for all
opponent seats, or one per seat with ``seat_mix="per_seat"``, by the pool's weights at the
game's start) are drawn from hashes of that game seed, so a slot's games, seats and opponents do
not depend on the batch size. Opponents are given as for ``SingleAgentEnv``: a baseline name, a
policy file, an Agent, a list of those (one per opponent seat, clockwise from the learner), or
``None`` for a self-play pool whose members and weights come from :meth:`update_opponents`
(``(name, source)`` pairs, as ``PoolOpponents`` takes them; snapshots are PolicyAgent ``.npz``
files played with sampled actions). Each step groups the opponent seats to act by pool member
and calls that member's ``act_batch`` once (a frozen policy: one forward pass for all its seats).
An agent that remembers the game in progress (``per_game_memory``) and can play many games at
once (``batch_games(num_games)``, e.g. HeuristicBidder and the tuned bidders: their
:class:`~gemenvs.agents.megagem.batched.BidderGames`) plays all its seats in one call too from
``BATCH_MEMORY_FROM`` games on (``batch_memory``), game slot ``b`` and opponent seat ``k`` being
game ``b * (n - 1) + k - 1`` of its table, forgotten when a game starts there; the bidders among
them (HeuristicBidder, the tuned bidder, its family members: one arithmetic with other parameters)
share ONE BidderGames table, each row with its member's parameters, so all of them play in one call
(:class:`_Member` is one member's view of it); any other agent
with memory plays through one instance per game slot and seat, reset with a seed from the
game's hash when its game starts; the others (RandomAgent, TruthfulAgent, PolicyAgent) are one
instance per member, reseeded at :meth:`BatchedSelfPlay.reset`.

**Infos** of a finished game, as ``SingleAgentEnv``'s: ``learner_seat``, ``opponent`` (the
label the pool's bookkeeping reads), ``win_share`` (1 / number of winners if the learner is
among them, else 0), ``score`` and ``margin`` (the learner's final score, and its difference
to the best other score, in coins), plus SB3's ``terminal_observation`` and Monitor's
``episode`` (``r`` return, ``l`` learner decisions, ``t`` seconds since the env was made).

**Threads.** The frozen policies' forward passes are numpy matrix products in the training
process; the training run fixes numpy's BLAS at ``torch_threads`` threads
(:func:`gemenvs.workers.fix_threads`), since extra BLAS threads beside torch's only wait on each
other at these sizes.

**Holding games** uses the engine's treatment of finished games (with ``auto_reset=False`` a game
that is over is left unchanged by ``step``): a held game is marked over for one step and given
its phase back afterwards (:class:`_HeldGames`; it calls the engine's ``_refresh``, which
recomputes what the masks and the next step read). ``tests/test_batched_env.py`` plays the
learner's games against the scalar engine decision by decision, so a change of the engine that
broke this would fail there.
"""
from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from gemenvs.agents.base import Agent, act_batch
from gemenvs.agents.features import make_features
from gemenvs.agents.megagem import BidderGames
from gemenvs.core.engine import check_int
from gemenvs.megagem.batched import BatchedMegaGem, game_seeds
from gemenvs.megagem.batched.engine import OVER
from gemenvs.arena.pool import LABEL_SEPARATOR, PoolOpponents
from gemenvs.arena.resolve import resolve_agent
from gemenvs.arena.single_agent import check_learner_seat, make_aec_env

#: salts of the hashes of a game's seed that draw its learner seat, its opponents and their seeds
_SEAT_SALT, _PICK_SALT, _AGENT_SALT, _SHARED_SALT, _RESEED_SALT = 1, 2, 16, 3, 4
#: games from which opponents with memory play through their batch_games tables by default
BATCH_MEMORY_FROM = 32
#: rounds of opponents' decisions that may follow one learner decision before something is wrong
_MAX_ROUNDS = 1000


class _HeldGames(BatchedMegaGem):
    """The batched engine, able to step some of its games while the others are held unchanged."""

    def step_games(self, actions: np.ndarray, games: np.ndarray):
        """``step(actions)`` for the games where ``games`` is True; every other game is left as it is."""
        held = np.flatnonzero(~games & (self.phase != OVER))
        if not held.size:
            return self.step(actions)
        phase = self.phase[held].copy()
        self.phase[held] = OVER  # a game that is over is not played by step (auto_reset=False)
        self._refresh()
        try:
            return self.step(actions)
        finally:
            self.phase[held] = phase
            self._refresh()


@dataclass
class Finished:
    """The learner's games that ended in the last step, one entry each (``slots`` in increasing order)."""

    slots: np.ndarray              # (k,) game slots
    terminal_observation: np.ndarray  # (k, obs_dim) the learner's observation of the finished game
    rewards: np.ndarray            # (k,) the learner's terminal reward
    win_share: np.ndarray          # (k,)
    score: np.ndarray              # (k,) the learner's final score
    margin: np.ndarray             # (k,) score minus the best other score
    seat: np.ndarray               # (k,) the learner's seat
    opponent: list[str]            # (k,) labels of the opponents
    length: np.ndarray             # (k,) learner decisions in the game
    returns: np.ndarray            # (k,) the learner's summed rewards in the game

    def info(self, i: int, elapsed: float) -> dict[str, Any]:
        """Entry ``i`` as a ``SingleAgentEnv`` final info (plus Monitor's ``episode``)."""
        return {"learner_seat": int(self.seat[i]), "opponent": self.opponent[i],
                "win_share": float(self.win_share[i]), "score": float(self.score[i]),
                "margin": float(self.margin[i]),
                "episode": {"r": float(self.returns[i]), "l": int(self.length[i]), "t": round(elapsed, 6)}}


class BatchedSelfPlay:
    """``num_games`` MegaGem games with one learner seat each (see the module docstring).

    Args:
        num_games: games played in lockstep (B).
        opponents: a baseline name, a policy path, an Agent, a list of those (one per opponent
            seat, clockwise from the learner), or ``None`` / a ``PoolOpponents`` for a self-play
            pool fed by :meth:`update_opponents`.
        learner_seat: the learner's seat in every game, or ``None`` to draw it per game.
        reward: the learner's terminal reward mode (``"win"``, ``"score"``, ``"rank"``, ``"margin"``).
        seat_mix: pool only: ``"same"`` member for all opponent seats of a game, or ``"per_seat"``.
        seed: the engine's seed (game ``j`` of slot ``b`` plays ``game_seeds(seed, b, j)``), which the first
            ``reset()`` without a seed uses; None: random.
        env_id: the registry id of a MegaGem environment (its options are validated by it).
        record: keep every game's record, so that ``games.state(b)`` rebuilds game ``b`` (tests).
        features: the name of observation features (:mod:`gemenvs.agents.features`, e.g.
            ``"megagem_valuation"``) appended to the learner's observations (and to the observation space);
            None: the observation alone.
        batch_memory: play opponents with memory that have ``batch_games`` through it (True), or
            through one instance per game slot and seat (False; the same choices). None (default):
            True from :data:`BATCH_MEMORY_FROM` games on; with fewer games the numpy pass's fixed
            cost outweighs what it saves (``benchmarks/megagem_batched.py --selfplay 8,64`` compares
            the two).
        **options: MegaGem options (``num_players``, ``value_chart``, ...).
    """

    def __init__(self, num_games: int, opponents: Any = "random", *, learner_seat: int | None = None,
                 reward: str = "win", seat_mix: str = "same", seed: int | None = None,
                 env_id: str = "gemenvs/MegaGem-v0", record: bool = False, batch_memory: bool | None = None,
                 features: str | None = None, **options):
        self.aec = make_aec_env(env_id, reward=reward, **options)  # what opponents are built for
        game = self.aec.unwrapped.game
        if game.name != "megagem":
            self.aec.close()
            raise ValueError(f"the batched environment plays MegaGem; {env_id!r} is {game.name}")
        if seat_mix not in ("same", "per_seat"):
            raise ValueError(f"seat_mix must be 'same' or 'per_seat'; got {seat_mix!r}")
        self.games = _HeldGames(num_games, seed=seed, reward=reward, auto_reset=False, record=record, **options)
        self.num_games = B = self.games.num_games
        self.num_players = n = self.games.num_players
        self.learner_seat = check_learner_seat(learner_seat, n)
        self.seat_mix = seat_mix
        self.batch_memory = B >= BATCH_MEMORY_FROM if batch_memory is None else bool(batch_memory)
        first = self.aec.unwrapped.possible_agents[0]
        self.observation_space = self.aec.unwrapped.observation_space(first)["observation"]
        self.features = make_features(features, options, game="megagem") if features is not None else None
        if self.features is not None:  # the features' numbers after the observation's, unbounded
            k = self.features.size
            space = self.observation_space
            self.observation_space = spaces.Box(np.concatenate([space.low, np.full(k, -np.inf, np.float32)]),
                                                np.concatenate([space.high, np.full(k, np.inf, np.float32)]),
                                                dtype=np.float32)
        self.action_space = spaces.Discrete(self.games.num_actions)
        self._ar = np.arange(B)
        # opponents: every source ever used has an id in the registry; games hold ids
        self._registry: list[tuple[str, Any]] = []
        self._ids: dict[tuple[str, Any], int] = {}
        self._stateless: list[bool] = []
        self._shared: dict[int, Agent] = {}                 # id -> the one instance (no per-game memory)
        self._own: dict[tuple[int, int, int], Agent] = {}  # (id, slot, opponent seat) -> its instance
        self._batchable: list[bool] = []                   # per id: memory, played through batch_games
        self._memory: dict[int, Any] = {}                  # id -> its games table (batch_games)
        self._bidders: BidderGames | None = None           # the bidders' shared table (built at its first member)
        self._bidder_ids: dict[int, int] = {}              # id -> member index in it (-1: not a member)
        self._pool_ids = np.zeros(0, np.int64)             # pool members now, and their weights
        self._weights = np.zeros(0)
        self._fixed: np.ndarray | None = None              # fixed opponents: an id per opponent seat
        self._fixed_label = ""
        if opponents is None or isinstance(opponents, PoolOpponents):
            if isinstance(opponents, PoolOpponents):
                self.seat_mix = opponents.seat_mix
                if opponents.members:
                    self.update_opponents(opponents.members, opponents.weights)
        else:
            self._set_fixed(opponents)
        self.seat = np.zeros(B, np.int64)
        self._picks = np.zeros((B, n - 1), np.int64)
        self._labels: list[str] = [""] * B
        self._length = np.zeros(B, np.int64)
        self._returns = np.zeros(B, np.float64)
        self.episodes = np.zeros(B, np.int64)  # the learner's games finished in each slot
        self.engine_steps = 0                   # engine steps played (learner steps + rounds of advancing)
        self.last_finished: Finished | None = None
        self._made = time.time()
        self._resets = 0
        self._obs = np.zeros((B, self.observation_space.shape[0]), np.float32)
        self._masks = np.zeros((B, self.games.num_actions), np.bool_)
        self._started = False
        self._current: tuple[np.ndarray, np.ndarray] | None = None  # (observations, masks) of the engine now
        self._clear_final()

    # ------------------------------------------------------------------ opponents

    def _set_fixed(self, specs: Any) -> None:
        if isinstance(specs, (str, Agent)):
            specs = [specs] * (self.num_players - 1)
        elif isinstance(specs, (bytes, dict)) or not isinstance(specs, Sequence) or not specs:
            raise TypeError("opponents must be a baseline name, a policy path, an Agent, a non-empty list of those, "
                            f"or None for a self-play pool; got {specs!r}")
        specs = list(specs)
        if len(specs) != self.num_players - 1:
            raise ValueError(f"{len(specs)} opponents given for {self.num_players - 1} opponent seats")
        names = []
        for spec in specs:
            if not isinstance(spec, (str, Agent)):
                raise TypeError(f"each opponent must be a baseline name, a policy path or an Agent; got {spec!r}")
            names.append(spec if isinstance(spec, str) else type(spec).__name__)
        self._fixed = np.array([self._register(name, spec) for name, spec in zip(names, specs)], np.int64)
        self._fixed_label = "+".join(names)

    def _register(self, name: str, source: Any) -> int:
        """The registry id of opponent ``(name, source)``; builds its first instance (a bad name or file fails here)."""
        key = (name, source if isinstance(source, str) else id(source))
        if key in self._ids:
            return self._ids[key]
        i = len(self._registry)
        agent = self._build(source, self._agent_seed(_SHARED_SALT, i))
        self._registry.append((name, source))
        self._ids[key] = i
        self._stateless.append(not getattr(agent, "per_game_memory", True))
        self._batchable.append(self.batch_memory and not self._stateless[i]
                               and callable(getattr(agent, "batch_games", None)))
        if self._stateless[i]:
            self._shared[i] = agent
        elif self._batchable[i]:
            self._memory[i] = agent.batch_games(self.num_games * (self.num_players - 1))
        return i

    def _build(self, source: Any, seed: int) -> Agent:
        if isinstance(source, str):
            return resolve_agent("megagem", source, self.aec, seed=seed)
        if not getattr(source, "per_game_memory", True):
            return source
        agent = copy.deepcopy(source)  # an agent with memory of its game: one copy per game and seat
        agent.reset(seed=seed)
        return agent

    def _agent_seed(self, salt: int, i: int) -> int:
        return int(game_seeds(self.games.seed, salt, i) % np.uint64(2**31))

    def update_opponents(self, members: list[tuple[str, str]], weights: list[float] | None = None) -> None:
        """Replace the pool's members (``(name, source)`` pairs) and their sampling weights, as
        ``PoolOpponents.update`` does; games under way keep their opponents until they end."""
        if self._fixed is not None:
            raise RuntimeError("this environment has fixed opponents; build it with opponents=None for a pool")
        members = [tuple(m) for m in members]
        if not members:
            raise ValueError("the opponent pool needs at least one member")
        w = np.ones(len(members)) if weights is None else np.asarray(weights, dtype=np.float64)
        if w.shape != (len(members),) or not np.all(w >= 0) or w.sum() <= 0:
            raise ValueError(f"weights must be {len(members)} non-negative numbers, not all 0; got {weights!r}")
        self._pool_ids = np.array([self._register(name, source) for name, source in members], np.int64)
        self._weights = w / w.sum()
        # forget the agents of sources no longer in the pool nor in a game under way
        keep = set(self._pool_ids.tolist()) | set(np.unique(self._picks).tolist() if self._started else [])
        self._own = {k: v for k, v in self._own.items() if k[0] in keep}
        self._memory = {i: t for i, t in self._memory.items() if i in keep}
        for i in list(self._shared):
            if i not in keep and isinstance(self._registry[i][1], str):
                del self._shared[i]

    def _agent(self, i: int, slot: int, k: int) -> Agent:
        """The instance of opponent ``i`` for opponent seat ``k`` of game slot ``slot``."""
        if self._stateless[i]:
            if i not in self._shared:
                self._shared[i] = self._build(self._registry[i][1], self._agent_seed(_SHARED_SALT, i))
            return self._shared[i]
        if self._batchable[i]:
            raise RuntimeError(f"opponent {self._registry[i][0]!r} plays through its games table (_table)")
        key = (i, slot, k)
        if key not in self._own:
            self._own[key] = self._build(self._registry[i][1], 0)
        return self._own[key]

    def _own_table(self, i: int):
        """Opponent ``i``'s own games table (``batch_games``): game ``b * (n - 1) + k - 1`` is slot ``b``, seat ``k``."""
        agent = self._build(self._registry[i][1], self._agent_seed(_SHARED_SALT, i))
        return agent.batch_games(self.num_games * (self.num_players - 1))

    # the bidders of the pool (HeuristicBidder, the tuned bidder and its family members: one arithmetic, other
    # parameters) play through ONE BidderGames table, every member's rows in one call (each with its member's
    # parameters); a game's memory is reset whenever a member starts a game in it, as in the members' own tables

    def _table(self, i: int):
        """Opponent ``i``'s games table: a view of the shared bidder table where it plays through BidderGames,
        else its own (:meth:`_own_table`)."""
        table = self._memory.get(i)
        if table is None:
            table = self._memory[i] = self._own_table(i)
        if isinstance(table, BidderGames) and not isinstance(table, _Member):
            if self._bidders is None:
                self._bidders = BidderGames(table.agent, self.num_games * (self.num_players - 1))
                self._bidder_ids = {i: 0}
            if i not in self._bidder_ids:
                try:
                    self._bidder_ids[i] = self._bidders.add_member(table.agent)
                except ValueError:  # (another kind of bidder: it keeps its own table)
                    self._bidder_ids[i] = -1
            if self._bidder_ids[i] >= 0:
                table = self._memory[i] = _Member(self._bidders, self._bidder_ids[i])
        return table

    # ------------------------------------------------------------------ games

    def reset(self, seed: int | None = None) -> np.ndarray:
        """Deal every game afresh (``seed`` as the engine's; None: the constructor's ``seed`` the first time, a
        new seed drawn from the last one afterwards) and play to the learner's first decision; its observations."""
        if seed is None:  # (the engine holds the constructor's seed, or the one it drew for seed=None)
            seed = int(game_seeds(self.games.seed, _RESEED_SALT, self._resets)) if self._started else self.games.seed
        self._resets += 1
        self.games.reset(seed)
        self._current = None
        for i, agent in self._shared.items():
            agent.reset(seed=self._agent_seed(_SHARED_SALT, i))
        self.episodes[:] = 0
        self._started = True
        self._clear_final()
        self._start(self._ar)
        self._advance(fresh=True)
        self._view()
        return self._obs.copy()

    def _start(self, idx: np.ndarray) -> None:
        """Draw the learner's seat and the opponents of the games just dealt into slots ``idx``."""
        n, seeds = self.num_players, self.games.seeds[idx]
        if self.learner_seat is None:
            self.seat[idx] = (game_seeds(seeds, _SEAT_SALT, 0) % np.uint64(n)).astype(np.int64)
        else:
            self.seat[idx] = self.learner_seat
        if self._fixed is not None:
            self._picks[idx] = self._fixed
            labels = [self._fixed_label] * len(idx)
        else:
            if not self._pool_ids.size:
                raise RuntimeError("the opponent pool is empty: call update_opponents(members, weights) first")
            draws = 1 if self.seat_mix == "same" else n - 1
            u = (game_seeds(seeds[:, None], _PICK_SALT, np.arange(draws)) >> np.uint64(11)) * 2.0 ** -52
            pick = np.minimum(np.searchsorted(np.cumsum(self._weights), u, side="right"), len(self._weights) - 1)
            self._picks[idx] = self._pool_ids[pick]  # (broadcast over seats with "same")
            names = [[self._registry[i][0] for i in row] for row in self._picks[idx].tolist()]
            labels = [LABEL_SEPARATOR.join(dict.fromkeys(row)) for row in names]
        for j, b in enumerate(idx.tolist()):
            self._labels[b] = labels[j]
        for k in range(n - 1):  # agents with memory of their game: reset, seeded from the game
            picks = self._picks[idx, k]
            for i in np.unique(picks).tolist():
                if self._batchable[i]:
                    self._table(i).reset(idx[picks == i] * (n - 1) + k)
            own = ~np.array([self._stateless[i] or self._batchable[i] for i in picks.tolist()], np.bool_)
            if own.any():
                agent_seeds = game_seeds(seeds[own], _AGENT_SALT + k, 0) % np.uint64(2**31)
                for b, i, s in zip(idx[own].tolist(), self._picks[idx[own], k].tolist(), agent_seeds.tolist()):
                    self._agent(i, b, k + 1).reset(seed=int(s))
        self._length[idx] = 0
        self._returns[idx] = 0.0

    def _opponent_actions(self, games: np.ndarray) -> np.ndarray:
        """(B, n) actions: the opponents' choices in ``games`` (bool (B,)), -1 for every other seat; the rows of every
        member of the shared bidder table in one call."""
        to_act = self.games.to_act()
        to_act[self._ar, self.seat] = False
        to_act &= games[:, None]
        actions = np.full((self.num_games, self.num_players), -1, np.int64)
        b, p = np.nonzero(to_act)
        if not b.size:
            return actions
        n = self.num_players
        k = (p - self.seat[b]) % n  # the opponent seat, 1 .. n-1 clockwise from the learner
        member = self._picks[b, k - 1]
        all_obs, all_masks = self._tables()
        obs, masks = all_obs[b, p], all_masks[b, p]
        ids = np.unique(member).tolist()
        shared = np.full(max(ids) + 1, -1, np.int64)
        for i in ids:
            if self._batchable[i] and isinstance(self._table(i), _Member):
                shared[i] = self._bidder_ids[i]
        which = shared[member]
        rows = np.flatnonzero(which >= 0)
        if rows.size:
            actions[b[rows], p[rows]] = self._bidders.act(obs[rows], masks[rows], b[rows] * (n - 1) + k[rows] - 1,
                                                          which[rows])
        for i in ids:
            if shared[i] >= 0:
                continue
            rows = np.flatnonzero(member == i)
            if self._stateless[i]:
                actions[b[rows], p[rows]] = act_batch(self._agent(i, 0, 0), obs[rows], masks[rows])
            elif self._batchable[i]:
                actions[b[rows], p[rows]] = self._table(i).act(obs[rows], masks[rows], b[rows] * (n - 1) + k[rows] - 1)
            else:
                for r in rows.tolist():
                    actions[b[r], p[r]] = self._agent(i, int(b[r]), int(k[r])).act(obs[r], masks[r])
        return actions

    def _advance(self, fresh: bool = False) -> np.ndarray:
        """Play the opponents of every game where the learner has no decision, holding the others,
        until every game waits on the learner or is over; the games that ended (bool (B,))."""
        ended = np.zeros(self.num_games, np.bool_)
        for _ in range(_MAX_ROUNDS):
            live = self.games.phase != OVER
            pending = live & ~self.games.to_act()[self._ar, self.seat]
            if not pending.any():
                break
            result = self.games.step_games(self._opponent_actions(pending), pending)
            self._current = None
            self.engine_steps += 1
            ended |= result.done
            self._record(result)
        else:  # pragma: no cover - a rules bug
            raise RuntimeError(f"the opponents played {_MAX_ROUNDS} rounds without the learner being asked")
        if fresh and ended.any():  # pragma: no cover - a MegaGem learner always bids in the first round
            raise RuntimeError(f"games {np.flatnonzero(ended).tolist()} ended before the learner's first decision")
        return ended

    def _clear_final(self) -> None:
        B, n = self.num_games, self.num_players
        self._final = np.zeros(B, np.bool_)  # the games that ended in this step, their results
        self._final_rewards = np.zeros(B)
        self._final_scores = np.zeros((B, n), np.int64)
        self._final_winners = np.zeros((B, n), np.bool_)

    def _record(self, result) -> None:
        """Keep the learner's results of the games that ended in an engine step."""
        if result.done.any():
            idx = np.flatnonzero(result.done)
            self._final[idx] = True
            self._final_rewards[idx] = result.rewards[idx, self.seat[idx]]
            self._final_scores[idx] = result.scores[idx]
            self._final_winners[idx] = result.winners[idx]

    def _view(self) -> None:
        """The learner's observations (with its features, if any) and masks now."""
        self._masks[:] = self._tables()[1][self._ar, self.seat]
        self._obs[:] = self._learner_rows(self._ar, self.seat)

    def _learner_rows(self, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Seat ``seats[i]``'s observation of game ``games[i]`` now, with its features appended (if any)."""
        all_obs, all_masks = self._tables()
        obs = all_obs[games, seats]
        return obs if self.features is None else self.features.augment(obs, all_masks[games, seats])

    def _tables(self) -> tuple[np.ndarray, np.ndarray]:
        """Every seat's observations and masks now, computed once per engine state (the engine's views)."""
        if self._current is None:
            self._current = self.games.observations(), self.games.action_masks()
        return self._current

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, Finished | None]:
        """Play the learner's ``actions`` (one per game), then the opponents up to the learner's next
        decision (see the module docstring). Returns the next observations (B, obs_dim), rewards (B,),
        dones (B,) and the :class:`Finished` games (None if none); finished games are dealt afresh."""
        if not self._started:
            raise RuntimeError("step() called before reset()")
        a = np.asarray(actions)
        if a.shape not in ((self.num_games,), (self.num_games, 1)) or a.dtype.kind not in "iu":
            raise ValueError(f"actions must be {self.num_games} integers, one per game; got {a.dtype} {a.shape}")
        a = a.reshape(self.num_games).astype(np.int64)
        bad = (a < 0) | (a >= self.games.num_actions)
        bad[~bad] = ~self._masks[self._ar[~bad], a[~bad]]
        if bad.any():
            b = int(np.flatnonzero(bad)[0])
            name = self.games.game.action_name(int(a[b])) if 0 <= a[b] < self.games.num_actions else "not an action"
            raise ValueError(f"game {b}: the learner's action {int(a[b])} ({name}) is not legal now; legal: "
                             f"{np.flatnonzero(self._masks[b]).tolist()}")
        B = self.num_games
        self._clear_final()
        full = self._opponent_actions(np.ones(B, np.bool_))
        full[self._ar, self.seat] = a
        self._record(self.games.step(full))
        self._current = None
        self.engine_steps += 1
        self._length += 1
        self._advance()
        rewards, done, finished = self._deal_finished(terminal=True, advance=True)
        return self._obs.copy(), rewards, done, finished

    def _deal_finished(self, terminal: bool, advance: bool) -> tuple[np.ndarray, np.ndarray, Finished | None]:
        """The learner's rewards (B,), the games that ended since ``_clear_final`` (B,) and those
        :class:`Finished` games (None if none); deals their next games. ``terminal``: report each finished
        game's last observation of the learner (else an empty row); ``advance``: play the new games on to
        the learner's first decision."""
        n = self.num_players
        done = self._final.copy()
        rewards = np.where(done, self._final_rewards, 0.0)
        self._returns += rewards
        finished = None
        if done.any():
            idx = np.flatnonzero(done)
            seat = self.seat[idx]
            rows = np.arange(len(idx))
            scores = self._final_scores[idx]
            mine = scores[rows, seat]
            others = np.where(np.eye(n, dtype=bool)[seat], np.iinfo(np.int64).min, scores).max(axis=1)
            winners = self._final_winners[idx]
            last = self._learner_rows(idx, seat) if terminal else np.zeros((len(idx), 0), np.float32)
            finished = Finished(
                slots=idx, terminal_observation=last, rewards=rewards[idx].copy(),
                win_share=np.where(winners[rows, seat], 1.0 / winners.sum(axis=1), 0.0),
                score=mine.astype(np.float64), margin=(mine - others).astype(np.float64), seat=seat.copy(),
                opponent=[self._labels[b] for b in idx.tolist()], length=self._length[idx].copy(),
                returns=self._returns[idx].copy())
            self.episodes[idx] += 1
            self.games.reset_finished()
            self._current = None
            self._start(idx)
            if advance:
                self._advance(fresh=True)
        self.last_finished = finished
        self._view()
        return rewards.astype(np.float32), done, finished

    def action_masks(self) -> np.ndarray:
        """(B, num_actions) bool: the learner's legal actions in every game now."""
        return self._masks.copy()

    @property
    def num_episodes(self) -> int:
        """The learner's games finished since the last reset, all slots together."""
        return int(self.episodes.sum())

    def elapsed(self) -> float:
        """Seconds since the environment was made (Monitor's ``t``)."""
        return time.time() - self._made

    def close(self) -> None:
        """Close the AEC environment the opponents were built for."""
        self.aec.close()


class _Member(BidderGames):
    """Member ``index`` of a shared :class:`~gemenvs.agents.megagem.batched.BidderGames` table, seen as its own table
    (``act`` and ``reset`` of its games; the memory is the shared table's)."""

    def __init__(self, shared: BidderGames, index: int):  # (no table of its own: BidderGames.__init__ not called)
        self.shared, self.index = shared, index
        self.agent, self.num_games = shared.members[index], shared.num_games

    def act(self, observations, action_masks, games, members=None) -> np.ndarray:
        """The member's choices in games ``games`` (BidderGames.act with this member in every row)."""
        return self.shared.act(observations, action_masks, games, np.full(len(observations), self.index))

    def reset(self, games=None) -> None:
        """Forget games ``games`` in the shared table (a game's memory belongs to the game)."""
        self.shared.reset(games)


class BatchedVectorEnv(gymnasium.vector.VectorEnv):
    """:class:`BatchedSelfPlay` as a ``gymnasium.vector.VectorEnv`` (same-step autoreset).

    ``step`` returns the next games' first observations for the games that ended, with the
    finished game's in ``infos["final_obs"]`` and its ``SingleAgentEnv`` final info in
    ``infos["final_info"]`` (each with its ``_key`` mask, Gymnasium's convention); every
    ``infos`` holds the learner's ``action_mask`` (num_envs, num_actions). Arguments as
    :class:`BatchedSelfPlay`'s.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, num_games: int, opponents: Any = "random", **kwargs):
        self.core = BatchedSelfPlay(num_games, opponents, **kwargs)
        self.num_envs = self.core.num_games
        self.single_observation_space = self.core.observation_space
        self.single_action_space = self.core.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Deal every game (``seed`` as the engine's); the learner's observations and ``{"action_mask"}``.
        There are no reset options (every game is dealt afresh: no ``reset_mask``)."""
        if options:
            raise ValueError(f"BatchedVectorEnv.reset takes no options (every game is dealt afresh); got {options!r}")
        obs = self.core.reset(seed)
        return obs, {"action_mask": self.core.action_masks(), "learner_seat": self.core.seat.copy()}

    def step(self, actions):
        obs, rewards, dones, finished = self.core.step(actions)
        infos: dict[str, Any] = {"action_mask": self.core.action_masks()}
        if finished is not None:
            B, s = self.num_envs, finished.slots
            final_obs = np.full(B, None, dtype=object)
            for i, b in enumerate(s.tolist()):
                final_obs[b] = finished.terminal_observation[i]
            infos["final_obs"], infos["_final_obs"] = final_obs, dones.copy()
            final: dict[str, Any] = {}
            for key, values, dtype in (("win_share", finished.win_share, np.float64),
                                       ("score", finished.score, np.float64),
                                       ("margin", finished.margin, np.float64),
                                       ("learner_seat", finished.seat, np.int64),
                                       ("opponent", finished.opponent, object)):
                column = np.zeros(B, dtype) if dtype is not object else np.full(B, None, dtype=object)
                column[s] = values
                final[key], final[f"_{key}"] = column, dones.copy()
            infos["final_info"], infos["_final_info"] = final, dones.copy()
        return obs, rewards, dones, np.zeros(self.num_envs, np.bool_), infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, num_actions) bool: the learner's masks now."""
        return self.core.action_masks()

    def update_opponents(self, members, weights=None) -> None:
        """The pool's new members and weights (see :meth:`BatchedSelfPlay.update_opponents`)."""
        self.core.update_opponents(members, weights)

    def close_extras(self, **kwargs) -> None:
        self.core.close()


#: ``SingleAgentEnv`` options with no counterpart here (``make_vector_env`` refuses them by name)
_SINGLE_AGENT_ONLY = ("render_mode", "env_fn", "shaping", "shaping_gamma", "potential", "features_options")


def make_vector_env(num_envs: int = 1, env_id: str = "gemenvs/MegaGem-v0", **kwargs: Any) -> BatchedVectorEnv:
    """Gymnasium's ``vector_entry_point`` of MegaGem: ``gymnasium.make_vec("gemenvs/MegaGem-v0", num_envs=B,
    ...)`` returns B games of the batched engine as one :class:`BatchedVectorEnv`.

    The keyword arguments are :class:`BatchedSelfPlay`'s (``opponents``, ``learner_seat``, ``reward``,
    ``seed``, ``features``, MegaGem's options, ...). An illegal action always raises a ValueError here
    (``illegal_action="raise"``); the ``SingleAgentEnv`` options that have no batched counterpart
    (rendering, shaping, another ``illegal_action``) are refused with the way to get them:
    ``vectorization_mode="sync"`` (copies of ``SingleAgentEnv``).
    """
    refused = [k for k in _SINGLE_AGENT_ONLY if k in kwargs]
    illegal = kwargs.pop("illegal_action", "raise")
    if illegal != "raise":
        refused.append(f"illegal_action={illegal!r}")
    if refused:
        raise ValueError(f"the batched MegaGem vector env does not take {', '.join(refused)} (an illegal action "
                         "raises there); gymnasium.make_vec(..., vectorization_mode='sync') builds SingleAgentEnv "
                         "copies that do")
    return BatchedVectorEnv(check_int("num_envs", num_envs, 1, 1 << 24), env_id=env_id, **kwargs)


__all__ = ["BatchedSelfPlay", "BatchedVectorEnv", "Finished", "make_vector_env"]
