"""The self-play opponent pool: baseline agents plus frozen snapshots of the learner.

The trainer keeps an :class:`OpponentPool` (members, recent results, sampling weights; its baselines
from :func:`pool_baselines`, which adds members of the tuned MegaGem bidder family) and
pushes its members and weights to every environment worker, where a :class:`PoolOpponents`
draws each episode's opponents and builds (and caches) the agents. Snapshots are ``.npz``
files played by :class:`~gemenvs.agents.policy.PolicyAgent` with sampled actions.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gemenvs.agents.base import Agent
from gemenvs.arena.resolve import agent_label, resolve_agent

#: separates member names in the label of an episode whose seats hold different members
LABEL_SEPARATOR = " + "


@dataclass
class Member:
    """One pool entry: a name for tables, and what plays it (a baseline name or a policy file)."""

    name: str
    source: str
    kind: str  # "baseline" or "snapshot"


def pool_baselines(pool_cfg) -> list[str]:
    """The baseline members of a pool config (``PoolConfig``): ``baselines``, then the ``family.members``
    members of the tuned MegaGem bidder family (``tuned_family:0`` ..., see gemenvs.agents.megagem.family)."""
    names = list(pool_cfg.baselines or [])
    if pool_cfg.family.members:
        from gemenvs.agents.megagem.family import member_name

        names += [member_name(k, pool_cfg.family.spread) for k in range(pool_cfg.family.members)]
    return names


class OpponentPool:
    """Pool bookkeeping in the trainer: members, each member's recent results, sampling weights."""

    def __init__(self, baselines: list[str], max_snapshots: int, sampling: str = "uniform",
                 priority_power: float = 2.0, window: int = 200, num_players: int = 4, root: Path | None = None,
                 baseline_share: float | None = None):
        self.members = [Member(name=agent_label(b), source=b, kind="baseline")
                        for b in baselines]
        self.max_snapshots = max_snapshots
        self.sampling = sampling
        self.priority_power = priority_power
        self.window = window
        self.num_players = num_players
        self.baseline_share = baseline_share
        self.results: dict[str, deque] = {m.name: deque(maxlen=window) for m in self.members}
        self.root = root  # snapshot paths are stored relative to it (the run folder), so runs can move

    @property
    def snapshots(self) -> list[Member]:
        """The frozen learner copies now in the pool, oldest first."""
        return [m for m in self.members if m.kind == "snapshot"]

    def add_snapshot(self, name: str, path: str) -> None:
        """Add a frozen copy of the learner; drop the oldest snapshot beyond ``max_snapshots``."""
        self.members.append(Member(name=name, source=str(path), kind="snapshot"))
        self.results[name] = deque(maxlen=self.window)
        while len(self.snapshots) > self.max_snapshots:
            old = self.snapshots[0]
            self.members.remove(old)
            self.results.pop(old.name, None)

    def record(self, label: str, win_share: float) -> None:
        """Count one finished training game against the member(s) named in ``label``."""
        for name in set(label.split(LABEL_SEPARATOR)):
            if name in self.results:
                self.results[name].append(float(win_share))

    def win_rate(self, name: str) -> float | None:
        """The learner's win rate over the recent games against ``name`` (None before any game)."""
        games = self.results.get(name)
        return float(np.mean(games)) if games else None

    def weights(self) -> list[float]:
        """Sampling probability of each member: uniform, or (1 - win rate) ** power, normalised;
        with ``baseline_share`` the baselines together get that share and the snapshots the rest."""
        if self.sampling == "uniform":
            w = np.ones(len(self.members))
        else:
            chance = 1.0 / self.num_players
            # a member never played yet counts at chance level, so it is tried soon
            rates = [self.win_rate(m.name) for m in self.members]
            w = np.array([(1.0 - (chance if r is None else r)) ** self.priority_power for r in rates])
            w = np.maximum(w, 1e-3)  # every member keeps a little weight
        baseline = np.array([m.kind == "baseline" for m in self.members])
        if self.baseline_share is not None and baseline.any() and (~baseline).any():
            w = np.where(baseline, self.baseline_share * w / w[baseline].sum(),
                         (1.0 - self.baseline_share) * w / w[~baseline].sum())
            w = np.maximum(w, 1e-12)
        return list(w / w.sum())

    def broadcast(self) -> tuple[list[tuple[str, str]], list[float]]:
        """What the environment workers need: (name, source) of every member, and the weights."""
        def where(m: Member) -> str:
            return str(self.root / m.source) if m.kind == "snapshot" and self.root is not None else m.source

        return [(m.name, where(m)) for m in self.members], self.weights()

    def to_dict(self) -> dict:
        """JSON-safe state, saved with every checkpoint."""
        return {
            "members": [vars(m).copy() for m in self.members],
            "results": {k: list(v) for k, v in self.results.items()},
        }

    def load_dict(self, data: dict) -> None:
        """Restore the snapshots and the recent results written by :meth:`to_dict`. The baselines stay
        those of the current config (so ``pool.baselines`` can change on resume); snapshots beyond
        ``max_snapshots`` are dropped oldest first. A checkpoint's ``pool.json`` is checked by
        :func:`gemenvs.training.checkpoint.check_pool_dict` (snapshot paths inside the run folder) first."""
        baselines = [m for m in self.members if m.kind == "baseline"]
        snapshots = [Member(**m) for m in data["members"] if m["kind"] == "snapshot"]
        self.members = baselines + snapshots[max(0, len(snapshots) - self.max_snapshots):]
        results = data.get("results", {})
        self.results = {m.name: deque(results.get(m.name, []), maxlen=self.window) for m in self.members}


class PoolOpponents:
    """The environment-side sampler: draws each episode's opponents from the members it was sent."""

    def __init__(self, members: list[tuple[str, str]] | None = None, weights: list[float] | None = None,
                 seat_mix: str = "same"):
        self.seat_mix = seat_mix
        self._cache: dict[tuple[str, int], Agent] = {}
        self.members: list[tuple[str, str]] = []
        self.weights = np.ones(0)
        if members:
            self.update(members, weights)

    def update(self, members: list[tuple[str, str]], weights: list[float] | None = None) -> None:
        """Replace the members and their weights (called by the trainer through ``env_method``)."""
        self.members = [tuple(m) for m in members]
        w = np.ones(len(members)) if weights is None else np.asarray(weights, dtype=np.float64)
        self.weights = w / w.sum()
        names = {m[0] for m in self.members}
        self._cache = {k: v for k, v in self._cache.items() if k[0] in names}

    def _agent(self, env, name: str, source: str, seat: int) -> Agent:
        key = (name, seat)
        if key not in self._cache:
            self._cache[key] = resolve_agent(env.unwrapped.game.name, source, env)
        return self._cache[key]

    def sample(self, env, rng: np.random.Generator, num_opponents: int) -> tuple[str, list[Agent]]:
        if not self.members:
            raise RuntimeError("the opponent pool is empty: the trainer has not sent any member yet")
        if self.seat_mix == "same":
            picks = [int(rng.choice(len(self.members), p=self.weights))] * num_opponents
        else:
            picks = [int(i) for i in rng.choice(len(self.members), size=num_opponents, p=self.weights)]
        agents = [self._agent(env, *self.members[i], seat=k) for k, i in enumerate(picks)]
        label = LABEL_SEPARATOR.join(dict.fromkeys(self.members[i][0] for i in picks))
        return label, agents
