"""Observation specs: every slot of a flat observation vector has a name, a shape and a meaning."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Slice:
    """One named block of the observation vector (values stored divided by ``scale``)."""

    name: str
    offset: int
    shape: tuple[int, ...]
    meaning: str
    scale: float = 1.0
    low: float = 0.0
    high: float = 1.0

    @property
    def size(self) -> int:
        """Number of float slots the block occupies."""
        return int(np.prod(self.shape)) if self.shape else 1

    @property
    def stop(self) -> int:
        """Offset one past the block's last slot."""
        return self.offset + self.size


@dataclass
class ObservationSpec:
    """An ordered list of named slices; build it with :meth:`add`, then read it with :meth:`decode`."""

    slices: list[Slice] = field(default_factory=list)

    def add(self, name: str, shape: int | tuple[int, ...], meaning: str, scale: float = 1.0,
            low: float = 0.0, high: float = 1.0) -> Slice:
        """Append a block after the previous one and return it (stored values lie in ``low..high``)."""
        if isinstance(shape, int):
            shape = (shape,)
        if name in self.names:
            raise ValueError(f"duplicate observation slice name {name!r}")
        s = Slice(name, self.size, tuple(int(d) for d in shape), meaning, float(scale), float(low), float(high))
        self.slices.append(s)
        return s

    @property
    def names(self) -> list[str]:
        """Slice names in vector order."""
        return [s.name for s in self.slices]

    @property
    def size(self) -> int:
        """Total length of the observation vector."""
        return self.slices[-1].stop if self.slices else 0

    def __getitem__(self, name: str) -> Slice:
        for s in self.slices:
            if s.name == name:
                return s
        raise KeyError(f"no observation slice named {name!r}; known: {', '.join(self.names)}")

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-slot lower and upper bounds of the stored values (for a Box space)."""
        low = np.concatenate([np.full(s.size, s.low, np.float32) for s in self.slices])
        high = np.concatenate([np.full(s.size, s.high, np.float32) for s in self.slices])
        return low, high

    def view(self, obs: np.ndarray, name: str) -> np.ndarray:
        """The raw (scaled) block ``name`` of ``obs``, reshaped to its shape."""
        s = self[name]
        return np.asarray(obs)[s.offset:s.stop].reshape(s.shape)

    def decode(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Every block of ``obs`` in game units (multiplied back by its scale)."""
        obs = np.asarray(obs, dtype=np.float64)
        if obs.shape != (self.size,):
            raise ValueError(f"observation has shape {obs.shape}, spec expects ({self.size},)")
        return {s.name: obs[s.offset:s.stop].reshape(s.shape) * s.scale for s in self.slices}

    def markdown_table(self) -> str:
        """A Markdown table of every slice (offset, shape, name, meaning, scale)."""
        rows = ["| offset | size | shape | name | meaning | scale |", "|---|---|---|---|---|---|"]
        for s in self.slices:
            shape = "x".join(str(d) for d in s.shape)
            rows.append(f"| {s.offset} | {s.size} | {shape} | `{s.name}` | {s.meaning} | {s.scale:g} |")
        return "\n".join(rows)
