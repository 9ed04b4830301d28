"""Baseline agents by name, per game, so configs and CLIs can say ``opponents: heuristic``.

A game's baselines and agent families are declared in its entry (``GameEntry.baselines``,
``families``, ``state_families``; :mod:`gemenvs.core.entry`); the search agents serve every game.
"""
from __future__ import annotations

import importlib

def _entry(game: str):
    """The registered entry of ``game``; an unknown game is a ValueError naming the known ones."""
    from gemenvs.core.entry import entry

    return entry(game)


def baselines(game: str) -> dict[str, str]:
    """Agent name -> "module:Class" of the baselines of ``game`` (its entry's ``baselines``; "random" in every game)."""
    return dict(_entry(game).baselines)


def families(game: str) -> dict[str, str]:
    """Name prefix -> "module:function(env, name, seed)" of the agent families of ``game`` (its entry's
    ``families``): agents named "<prefix>:<args>" (e.g. the tuned bidder family's "tuned_family:3"), built by
    make_agent but not listed among the baselines; the module's parse_member(name) raises a ValueError for a
    bad name (check_agent_name calls it)."""
    return dict(_entry(game).families)


#: agent name -> "module:Class" of the search agents, for every game: built by make_agent (keyword arguments
#: go to the agent, e.g. ``make_agent("megagem", "ismcts", env, simulations=64)``) but not baselines, since
#: they play only where the match runner hands them the engine state (gemenvs/arena/match.py: decide). A name may
#: carry the budget, ``"ismcts:64"`` (64 simulations per decision): the module's parse_name(name) gives the
#: keyword arguments of a name, or a ValueError for a bad one (check_agent_name calls it)
SEARCH_AGENTS: dict[str, str] = {"ismcts": "gemenvs.agents.search:ISMCTSAgent"}


def reads_state(game: str, name) -> bool:
    """Whether agent ``name`` of ``game`` decides from the engine state (``needs_state``: a search agent, or a
    family such as Gem Jam's ``lookahead``), so that it plays only where the match runner hands the state over."""
    if not isinstance(name, str):
        return False
    return _search_agent(name) is not None or name.partition(":")[0] in _entry(game).state_families


def _search_agent(name) -> str | None:
    """The "module:Class" of search agent ``name`` (``"ismcts"``, ``"ismcts:64"``), or None."""
    return SEARCH_AGENTS.get(name.partition(":")[0]) if isinstance(name, str) else None


def _named_extras(game: str) -> str:
    """The agent names beyond the baselines, for error messages: ``", tuned_family:K, ismcts, ismcts:N"``."""
    return "".join(f", {prefix}:K" for prefix in families(game)) + \
        "".join(f", {name}, {name}:N" for name in SEARCH_AGENTS)


def baseline_names(game: str) -> list[str]:
    """Names of the baseline agents available for ``game``."""
    return list(_entry(game).baselines)


def make_agent(game: str, name: str, env, seed: int | None = None, **kwargs):
    """Build baseline ``name`` of ``game`` for ``env`` (e.g. ``make_agent("megagem", "heuristic", env)``),
    or a search agent (:data:`SEARCH_AGENTS`) with its ``kwargs``."""
    names = baseline_names(game)
    search = _search_agent(name)
    if search is not None:
        module, cls = search.split(":")
        module = importlib.import_module(module)
        named = module.parse_name(name)
        twice = sorted(set(named) & set(kwargs))
        if twice:
            raise TypeError(f"agent {name!r} already sets {', '.join(twice)}; give it once")
        agent = getattr(module, cls).for_env(env, seed=seed, **named, **kwargs)
        agent.name = name  # tables and saved games tell budgets apart
        return agent
    if kwargs:
        raise TypeError(f"agent {name!r} takes no keyword arguments; got {', '.join(kwargs)}")
    family = families(game).get(name.partition(":")[0]) if isinstance(name, str) else None
    if family is not None:
        module, fn = family.split(":")
        return getattr(importlib.import_module(module), fn)(env, name, seed=seed)
    if name not in names:
        raise ValueError(f"unknown agent {name!r} for {game}; known: {', '.join(names)}{_named_extras(game)}")
    module, cls = baselines(game)[name].split(":")
    return getattr(importlib.import_module(module), cls).for_env(env, seed=seed)


def check_agent_name(game: str, name: str) -> None:
    """A ``ValueError`` naming the problem unless ``make_agent(game, name, ...)`` knows ``name`` (a baseline,
    a family member or a search agent whose name parses), without building anything."""
    names = baseline_names(game)
    family = families(game).get(name.partition(":")[0])
    search = _search_agent(name)
    if family is not None:
        module = family.split(":")[0]
        importlib.import_module(module).parse_member(name)
    elif search is not None:
        importlib.import_module(search.split(":")[0]).parse_name(name)
    elif name not in names:
        raise ValueError(f"unknown opponent {name!r} for {game}; known: {', '.join(names)}{_named_extras(game)}")
