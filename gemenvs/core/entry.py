"""A game declared once: its :class:`GameEntry` and the registry of entries.

An entry holds every fact about a game that a tool needs (env id, title, player counts,
renderers, docs page, baselines, default opponent, batched engine), as OpenSpiel's
``_GAME_TYPE``/``_GAME_INFO`` do. Each game package exports ``ENTRY``; ``import gemenvs``
registers the suite's own, and :func:`register` (``gemenvs.register_game``) adds a user's game::

    import gemenvs
    from mygame import MyGame

    gemenvs.register_game(gemenvs.GameEntry(MyGame, env_id="mine/MyGame-v0", title="My Game"))
    env = pettingzoo.make("aec", "mine/MyGame-v0")         # or gymnasium.make("mine/MyGame-v0")

Registering builds the game's AEC and Parallel environments (:func:`env_functions`) and
registers them with PettingZoo, and the single-learner view with Gymnasium. Agents, pictures
and modules above the games are named by import strings ("module:attr"), loaded when used.
"""
from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType, SimpleNamespace
from typing import Any

from gemenvs.core.engine import Game
from gemenvs.core.envbase import TEXT_PAINTER

#: the baseline every game has: a uniformly random legal action
RANDOM_AGENT = "gemenvs.agents.random_agent:RandomAgent"
#: Gymnasium's entry point of every game: the single-learner view
SINGLE_LEARNER_ENTRY_POINT = "gemenvs.arena.single_agent:SingleAgentEnv"

_ENV_ID = re.compile(r"(?P<namespace>[\w.-]+/)?(?P<name>[\w.-]+)-v(?P<version>\d+)")
_IMPORT = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")
_MODULE = re.compile(r"[A-Za-z_][\w.]*")


@dataclass(frozen=True)
class GameEntry:
    """Everything the suite's tools know about one game, declared in one place.

    Args:
        game_class: the :class:`~gemenvs.core.engine.Game` subclass (its ``name`` is the game's
            short name, e.g. ``"megagem"``, and its ``version`` the env version).
        env_id: the PettingZoo and Gymnasium id, ``"namespace/Name-vN"`` with N the game's version.
        title: the game's name on screens and pictures (``"Gem Jam"``).
        env_name: the PettingZoo module-style name (default ``<name>_v<version>``, e.g. ``"megagem_v0"``):
            ``env.metadata["name"]`` and the ``env`` of saved games.
        player_counts: every supported number of seats (default: the game class's ``player_counts``).
        text_renderer: ``(game, state, viewer) -> str``, the text picture (default: the game's ``render``).
        painter: import string of the module drawing the game's ``rgb_array`` pictures (functions
            ``size(game)``, ``draw(game, state, viewer)`` and ``scores(game, state)``, see
            :mod:`gemenvs.pictures`), or None for the picture of its text render.
        docs_page: the page of ``docs/`` with the game's rules and generated tables, or None.
        baselines: agent name -> ``"module:Class"`` of the baseline agents; ``"random"`` is added first
            when missing.
        families: name prefix -> ``"module:function(env, name, seed)"`` of agents named ``"prefix:args"``
            (built by name, not baselines); the module's ``parse_member(name)`` checks a name.
        state_families: the families whose agents read the engine state (played where the match
            runner hands it over, never as training opponents).
        default_opponent: the baseline that plays the other seats of ``gemenvs play``.
        rollout_baseline: the baseline search agents use as their ``"heuristic"`` rollout policy
            (default: ``default_opponent``).
        vector_entry_point: ``"module:function"`` of a natively batched Gymnasium vector env, or None.
        simultaneous: whether several seats decide at once (sealed bids), so the Parallel view steps
            several agents together.
    """

    game_class: type[Game]
    env_id: str
    title: str
    env_name: str = ""
    player_counts: tuple[int, ...] = ()
    text_renderer: Callable[[Game, Any, int | None], str] | None = None
    painter: str | None = None
    docs_page: str | None = None
    baselines: Mapping[str, str] = field(default_factory=lambda: {"random": RANDOM_AGENT})
    families: Mapping[str, str] = field(default_factory=dict)
    state_families: tuple[str, ...] = ()
    default_opponent: str = "random"
    rollout_baseline: str | None = None
    vector_entry_point: str | None = None
    simultaneous: bool = False

    def __post_init__(self) -> None:
        cls = self.game_class
        if not (isinstance(cls, type) and issubclass(cls, Game)):
            raise TypeError(f"game_class must be a subclass of gemenvs.core.Game; got {cls!r}")
        if not isinstance(cls.name, str) or not cls.name.isidentifier():
            raise ValueError(f"{cls.__name__}.name must be a short identifier (e.g. 'megagem'); got {cls.name!r}")
        m = _ENV_ID.fullmatch(self.env_id) if isinstance(self.env_id, str) else None
        if m is None or int(m["version"]) != cls.version:
            raise ValueError(f"env_id must be 'namespace/Name-v{cls.version}' (the game's version); got {self.env_id!r}")
        set_ = object.__setattr__
        set_(self, "env_name", self.env_name or f"{cls.name}_v{cls.version}")
        if not self.env_name.isidentifier():
            raise ValueError(f"env_name must be an identifier such as 'megagem_v0'; got {self.env_name!r}")
        counts = tuple(self.player_counts or cls.player_counts)
        if not counts or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in counts):
            raise ValueError(f"{self.env_id}: player_counts must be seat counts >= 1; got {counts!r}")
        set_(self, "player_counts", counts)
        if self.painter is not None and not (isinstance(self.painter, str) and _MODULE.fullmatch(self.painter)):
            raise ValueError(f"{self.env_id}: painter must be a module name such as 'gemenvs.pictures.megagem' or None")
        baselines = {"random": RANDOM_AGENT, **dict(self.baselines)}
        families = dict(self.families)
        for what, table in (("baselines", baselines), ("families", families)):
            for name, target in table.items():
                if not isinstance(name, str) or not name or ":" in name:
                    raise ValueError(f"{self.env_id}: {what} names are words without ':'; got {name!r}")
                if not (isinstance(target, str) and _IMPORT.fullmatch(target)):
                    raise ValueError(f"{self.env_id}: {what}[{name!r}] must be 'module:attr'; got {target!r}")
        set_(self, "baselines", MappingProxyType(baselines))
        set_(self, "families", MappingProxyType(families))
        set_(self, "state_families", tuple(self.state_families))
        unknown = [f for f in self.state_families if f not in families]
        if unknown:
            raise ValueError(f"{self.env_id}: state_families {unknown} are not families ({', '.join(families)})")
        for what, name in (("default_opponent", self.default_opponent), ("rollout_baseline", self.rollout_baseline)):
            if name is not None and name not in baselines:
                raise ValueError(f"{self.env_id}: {what} {name!r} is not a baseline ({', '.join(baselines)})")
        if self.vector_entry_point is not None and not _IMPORT.fullmatch(str(self.vector_entry_point)):
            raise ValueError(f"{self.env_id}: vector_entry_point must be 'module:function' or None")

    def __hash__(self) -> int:
        return hash(self.env_id)

    def __reduce__(self):
        """Pickled as a registry look-up when registered, else field by field."""
        if _REGISTRY.get(self.name) is self:
            return entry, (self.env_id,)
        return _rebuild, (_fields(self),)

    @property
    def name(self) -> str:
        """The game's short name (``Game.name``, e.g. ``"megagem"``): agents, configs and CLIs use it."""
        return self.game_class.name

    @property
    def version(self) -> int:
        """The env version (``Game.version``), bumped when behaviour changes."""
        return self.game_class.version

    @property
    def heuristic_baseline(self) -> str:
        """The baseline a search agent's ``"heuristic"`` rollout policy is."""
        return self.rollout_baseline or self.default_opponent

    @property
    def painter_module(self) -> str:
        """The module that draws this game's pictures (its painter, else the text picture)."""
        return self.painter or TEXT_PAINTER

    def render_text(self, game: Game, state, viewer: int | None = None) -> str:
        """The game's text picture of ``state`` as ``viewer`` sees it."""
        if self.text_renderer is None:
            return game.render(state, viewer)
        return self.text_renderer(game, state, viewer)

    def load_painter(self):
        """The painter module, imported now (Pillow with it); a missing Pillow is an ImportError saying so."""
        try:
            return importlib.import_module(self.painter_module)
        except ImportError as e:
            if (e.name or "").partition(".")[0] == "PIL":
                raise ImportError("pictures (render_mode='rgb_array', GIF replays) need Pillow: "
                                  "pip install pillow") from None
            raise

    def env_functions(self) -> SimpleNamespace:
        """The game's environments: ``raw_env``, ``env``, ``parallel_raw_env``, ``parallel_env`` (see :func:`env_functions`)."""
        return env_functions(self)


def _fields(e: GameEntry) -> dict:
    """The fields of ``e`` as picklable plain values (its read-only mappings as dicts)."""
    fields = {f: getattr(e, f) for f in e.__dataclass_fields__}
    fields["baselines"], fields["families"] = dict(e.baselines), dict(e.families)
    return fields


def _rebuild(fields: dict) -> GameEntry:
    """A GameEntry from its fields (unpickling an unregistered entry)."""
    return GameEntry(**fields)


# ----------------------------------------------------------------------------- the environments of an entry

_ENV_FUNCTIONS: dict[str, SimpleNamespace] = {}


def env_functions(entry: GameEntry) -> SimpleNamespace:
    """The PettingZoo environments of ``entry``, built once per entry: ``raw_env`` (AEC),
    ``env`` (AEC with the order-enforcing wrapper), ``parallel_raw_env`` and ``parallel_env``
    (options: the env's ``render_mode``, ``illegal_action``, ``reward``, then the game's own).

    The classes are reachable as ``gemenvs.core.entry.<env_name>.raw_env``, so environments
    pickle by reference wherever the entry is registered."""
    made = _ENV_FUNCTIONS.get(entry.env_name)
    if made is not None and made.entry is entry:
        return made
    from gemenvs.core.aec import GameAECEnv, wrap_aec
    from gemenvs.core.envbase import RENDER_FPS, RENDER_MODES
    from gemenvs.core.parallel import GameParallelEnv

    meta = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS, "name": entry.env_name}
    where = {"__module__": __name__, "entry": entry, "game_class": entry.game_class}
    many = "bidders act one after another, never seeing earlier sealed bids" if entry.simultaneous \
        else "one seat decides at a time"
    raw_env = type("raw_env", (GameAECEnv,), {
        **where, "__qualname__": f"{entry.env_name}.raw_env", "metadata": {**meta, "is_parallelizable": False},
        "__doc__": f"{entry.title} as an AEC environment: {many}."})
    parallel_raw_env = type("parallel_raw_env", (GameParallelEnv,), {
        **where, "__qualname__": f"{entry.env_name}.parallel_raw_env", "metadata": dict(meta),
        "__doc__": f"{entry.title} as a Parallel environment: each step carries the action of every seat to decide."})

    def env(**options):
        """The AEC environment with PettingZoo's order-enforcing wrapper (options: see the game's env module)."""
        return wrap_aec(raw_env(**options))

    def parallel_env(**options):
        """The Parallel environment (options: see the game's env module)."""
        return parallel_raw_env(**options)

    for fn in (env, parallel_env):
        fn.__module__, fn.__qualname__ = __name__, f"{entry.env_name}.{fn.__name__}"
    made = SimpleNamespace(entry=entry, raw_env=raw_env, env=env, parallel_raw_env=parallel_raw_env,
                           parallel_env=parallel_env)
    _ENV_FUNCTIONS[entry.env_name] = made
    return made


def __getattr__(name: str):
    """``gemenvs.core.entry.<env_name>``: the environments of a registered game (for pickling by reference)."""
    for e in _REGISTRY.values():
        if e.env_name == name:
            return env_functions(e)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ----------------------------------------------------------------------------- the registry

#: game name -> entry, in the order registered
_REGISTRY: dict[str, GameEntry] = {}


def register(entry: GameEntry) -> GameEntry:
    """Register a game: its entry, its PettingZoo AEC and Parallel ids and its Gymnasium id.

    Registering the same entry again does nothing; another entry with the name, env id or env
    name of a registered one is a ValueError naming it."""
    if not isinstance(entry, GameEntry):
        raise TypeError(f"register takes a GameEntry; got {type(entry).__name__}")
    if _REGISTRY.get(entry.name) is entry:
        return entry
    for other in _REGISTRY.values():
        for what in ("name", "env_id", "env_name"):
            if getattr(other, what) == getattr(entry, what):
                raise ValueError(f"a game with {what} {getattr(entry, what)!r} is already registered "
                                 f"({other.env_id}, {other.game_class.__name__})")
    _REGISTRY[entry.name] = entry
    _register_ids(entry)
    return entry


def _register_ids(entry: GameEntry) -> None:
    """PettingZoo's AEC and Parallel ids and Gymnasium's single-learner id of ``entry``."""
    import gymnasium
    import pettingzoo

    made = env_functions(entry)
    if entry.env_id not in pettingzoo.aec_registry:
        pettingzoo.register("aec", entry.env_id, entry_point=made.env)
    if entry.env_id not in pettingzoo.parallel_registry:
        pettingzoo.register("parallel", entry.env_id, entry_point=made.parallel_env)
    if entry.env_id not in gymnasium.registry:
        gymnasium.register(id=entry.env_id, entry_point=SINGLE_LEARNER_ENTRY_POINT, kwargs={"env_id": entry.env_id},
                           vector_entry_point=entry.vector_entry_point)


def entries() -> tuple[GameEntry, ...]:
    """Every registered game's entry, in the order registered."""
    return tuple(_REGISTRY.values())


def entry(name_or_id: str) -> GameEntry:
    """The entry of a game by its name (``"megagem"``), env name (``"megagem_v0"``) or env id
    (``"gemenvs/MegaGem-v0"``); an unknown one is a one-line ValueError naming the known games."""
    if isinstance(name_or_id, str):
        found = _REGISTRY.get(name_or_id)
        if found is not None:
            return found
        for e in _REGISTRY.values():
            if name_or_id in (e.env_name, e.env_id):
                return e
    raise ValueError(f"unknown game {name_or_id!r}; known games: {', '.join(_REGISTRY) or 'none'}")


def entry_of(game: Game | type[Game]) -> GameEntry:
    """The entry of a game object or class (its class or nearest registered base class); a game
    without one is a ValueError naming the known games."""
    cls = game if isinstance(game, type) else type(game)
    for base in cls.__mro__:
        for e in _REGISTRY.values():
            if e.game_class is base:
                return e
    raise ValueError(f"{cls.__name__} (game {getattr(game, 'name', None)!r}) has no registered entry; "
                     f"known games: {', '.join(_REGISTRY) or 'none'}")


# ----------------------------------------------------------------------------- worker processes

def registry_state() -> tuple[dict, ...]:
    """The fields of every registered entry, picklable (classes and functions by reference): what a worker
    process started fresh (spawn, forkserver, a Ray actor) hands to :func:`restore_registry`."""
    return tuple(_fields(e) for e in _REGISTRY.values())


def restore_registry(state: tuple[dict, ...]) -> None:
    """Register the entries of ``state`` (:func:`registry_state`) that this process has not registered yet,
    so a worker knows the games its parent knew, a user's own among them."""
    for fields in state:
        if fields["game_class"].name not in _REGISTRY:
            register(GameEntry(**fields))


def game_pool(workers: int, context: str = "forkserver"):
    """A :func:`gemenvs.workers.process_pool` whose workers first register the games registered here (a
    user's own among them): the pool of every tool that plays games in other processes."""
    from gemenvs.workers import process_pool

    return process_pool(workers, context, setup=(restore_registry, (registry_state(),)))


__all__ = ["RANDOM_AGENT", "TEXT_PAINTER", "GameEntry", "entries", "entry", "entry_of",
           "env_functions", "game_pool", "register", "registry_state", "restore_registry"]
