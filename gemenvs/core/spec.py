"""Observation specs: every slot of a flat observation vector has a name, a shape and a meaning."""
from __future__ import annotations

import math
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
        return math.prod(self.shape)  # plain ints (np.prod costs more than the rule agents' decisions)

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
        if isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
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


@dataclass(frozen=True)
class ActionRange:
    """One named block of action ids: ``start .. start+size-1`` are ``name[label]`` for each label."""

    name: str
    start: int
    size: int
    meaning: str
    labels: tuple[str, ...]

    @property
    def stop(self) -> int:
        """The id one past the block's last action."""
        return self.start + self.size

    def __contains__(self, action: int) -> bool:
        return self.start <= action < self.stop

    def __getitem__(self, arg: int) -> int:
        """The action id of argument ``arg`` (0-based within the block)."""
        if not 0 <= arg < self.size:
            raise IndexError(f"{self.name} takes arguments 0..{self.size - 1}; got {arg}")
        return self.start + int(arg)


@dataclass
class ActionSpec:
    """An ordered list of named action ranges, the counterpart of :class:`ObservationSpec`.

    Every id of a game's single ``Discrete`` space belongs to exactly one range, e.g. ``bid``
    (ids 0..90, labels "0".."90") then ``reveal`` (labels the colours). Engines, agents and docs
    all read the layout from here: ``spec["reveal"][2]`` is the id of "reveal[Pink]",
    ``spec.decode(a)`` gives ``(name, arg)`` and ``spec.label(a)`` the text "reveal[Pink]".
    """

    ranges: list[ActionRange] = field(default_factory=list)

    def add(self, name: str, size: int | None = None, meaning: str = "", labels=None) -> ActionRange:
        """Append a block of ``size`` ids (or one per label) after the previous one and return it."""
        if name in self.names:
            raise ValueError(f"duplicate action range name {name!r}")
        if labels is None:
            if size is None:
                raise ValueError("an action range needs a size or labels")
            labels = tuple(str(k) for k in range(size)) if size > 1 else ("",)
        labels = tuple(str(x) for x in labels)
        if size is not None and size != len(labels):
            raise ValueError(f"action range {name!r}: {size} ids but {len(labels)} labels")
        r = ActionRange(name, self.size, len(labels), meaning, labels)
        self.ranges.append(r)
        self._lookup = None
        return r

    @property
    def names(self) -> list[str]:
        """Range names in id order."""
        return [r.name for r in self.ranges]

    @property
    def size(self) -> int:
        """Number of action ids (the size of the Discrete space)."""
        return self.ranges[-1].stop if self.ranges else 0

    def __getitem__(self, name: str) -> ActionRange:
        for r in self.ranges:
            if r.name == name:
                return r
        raise KeyError(f"no action range named {name!r}; known: {', '.join(self.names)}")

    def _table(self) -> tuple[np.ndarray, np.ndarray]:
        if getattr(self, "_lookup", None) is None or self._lookup[0].size != self.size:
            which = np.empty(self.size, np.int32)
            arg = np.empty(self.size, np.int32)
            for k, r in enumerate(self.ranges):
                which[r.start:r.stop] = k
                arg[r.start:r.stop] = np.arange(r.size)
            self._lookup = (which, arg)
        return self._lookup

    def decode(self, action: int) -> tuple[str, int]:
        """``(range name, argument)`` of an action id."""
        a = int(action)
        if not 0 <= a < self.size:
            raise ValueError(f"action {a} is outside 0..{self.size - 1}")
        which, arg = self._table()
        return self.ranges[int(which[a])].name, int(arg[a])

    def encode(self, name: str, arg: int = 0) -> int:
        """The action id of range ``name`` with argument ``arg`` (inverse of :meth:`decode`)."""
        return self[name][arg]

    def label(self, action: int) -> str:
        """A readable name of an action id, e.g. ``bid[12]``, ``reveal[Blue]`` or ``pass``."""
        name, arg = self.decode(action)
        lab = self[name].labels[arg]
        return f"{name}[{lab}]" if lab else name

    def markdown_table(self) -> str:
        """A Markdown table of every range (ids, name, meaning, labels)."""
        rows = ["| ids | name | meaning | arguments |", "|---|---|---|---|"]
        for r in self.ranges:
            ids = f"{r.start}" if r.size == 1 else f"{r.start}..{r.stop - 1}"
            if r.size == 1:
                args = "-"
            elif r.labels == tuple(str(k) for k in range(r.size)):
                args = f"0..{r.size - 1}"
            else:
                args = ", ".join(f"{r.start + k}: {lab}" for k, lab in enumerate(r.labels))
            rows.append(f"| {ids} | `{r.name}` | {r.meaning} | {args} |")
        return "\n".join(rows)
