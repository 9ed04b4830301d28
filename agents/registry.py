"""Baseline agents by name, per game, so configs and CLIs can say ``opponents: heuristic``."""
from __future__ import annotations

import importlib

#: game name -> agent name -> "module:Class"; "random" works for every game
BASELINES: dict[str, dict[str, str]] = {
    "megagem": {
        "random": "gemenvs.agents.random_agent:RandomAgent",
        "truthful": "gemenvs.agents.megagem:TruthfulAgent",
        "heuristic": "gemenvs.agents.megagem:HeuristicBidder",
        "tuned": "gemenvs.agents.megagem:TunedBidder",
    },
    "gem": {
        "random": "gemenvs.agents.random_agent:RandomAgent",
        "greedy": "gemenvs.agents.gem:GemGreedyAgent",
    },
    "gemjam": {
        "random": "gemenvs.agents.random_agent:RandomAgent",
        "rule": "gemenvs.agents.gemjam:GemJamRuleAgent",
    },
}

#: game name -> name prefix -> "module:function(env, name, seed)": agents named "<prefix>:<args>" (e.g. the
#: tuned bidder family's "tuned_family:3"), built by make_agent but not listed among the baselines; the
#: module's parse_member(name) raises a ValueError for a bad name (check_agent_name calls it)
FAMILIES: dict[str, dict[str, str]] = {
    "megagem": {"tuned_family": "gemenvs.agents.megagem.family:make_member"},
    # the one-turn lookahead (lookahead or lookahead:SAMPLES) reads the engine state (needs_state): it plays
    # where the match runner's decide() hands it over (evaluations, tournaments), not as a training opponent
    "gemjam": {"lookahead": "gemenvs.agents.gemjam:make_lookahead"},
}


#: agent name -> "module:Class" of the search agents, for every game: built by make_agent (keyword arguments
#: go to the agent, e.g. ``make_agent("megagem", "ismcts", env, simulations=64)``) but not baselines, since
#: they play only where the match runner hands them the engine state (agents/match.py: decide). A name may
#: carry the budget, ``"ismcts:64"`` (64 simulations per decision): the module's parse_name(name) gives the
#: keyword arguments of a name, or a ValueError for a bad one (check_agent_name calls it)
SEARCH_AGENTS: dict[str, str] = {"ismcts": "gemenvs.agents.search:ISMCTSAgent"}


def reads_state(game: str, name) -> bool:
    """Whether agent ``name`` of ``game`` decides from the engine state (``needs_state``: a search agent, or a
    family such as Gem Jam's ``lookahead``), so that it plays only where the match runner hands the state over."""
    if not isinstance(name, str):
        return False
    return _search_agent(name) is not None or name.partition(":")[0] in STATE_FAMILIES.get(game, ())


#: the families of :data:`FAMILIES` whose agents read the engine state (see :func:`reads_state`)
STATE_FAMILIES: dict[str, tuple[str, ...]] = {"gemjam": ("lookahead",)}


def _search_agent(name) -> str | None:
    """The "module:Class" of search agent ``name`` (``"ismcts"``, ``"ismcts:64"``), or None."""
    return SEARCH_AGENTS.get(name.partition(":")[0]) if isinstance(name, str) else None


def _named_extras(game: str) -> str:
    """The agent names beyond the baselines, for error messages: ``", tuned_family:K, ismcts, ismcts:N"``."""
    return "".join(f", {prefix}:K" for prefix in FAMILIES.get(game, {})) + \
        "".join(f", {name}, {name}:N" for name in SEARCH_AGENTS)


def baseline_names(game: str) -> list[str]:
    """Names of the baseline agents available for ``game``."""
    if game not in BASELINES:
        raise ValueError(f"unknown game {game!r}; known: {', '.join(sorted(BASELINES))}")
    return list(BASELINES[game])


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
    family = FAMILIES.get(game, {}).get(name.partition(":")[0]) if isinstance(name, str) else None
    if family is not None:
        module, fn = family.split(":")
        return getattr(importlib.import_module(module), fn)(env, name, seed=seed)
    if name not in BASELINES[game]:
        raise ValueError(f"unknown agent {name!r} for {game}; known: {', '.join(names)}{_named_extras(game)}")
    module, cls = BASELINES[game][name].split(":")
    return getattr(importlib.import_module(module), cls).for_env(env, seed=seed)


def check_agent_name(game: str, name: str) -> None:
    """A ``ValueError`` naming the problem unless ``make_agent(game, name, ...)`` knows ``name`` (a baseline,
    a family member or a search agent whose name parses), without building anything."""
    names = baseline_names(game)
    family = FAMILIES.get(game, {}).get(name.partition(":")[0])
    search = _search_agent(name)
    if family is not None:
        module = family.split(":")[0]
        importlib.import_module(module).parse_member(name)
    elif search is not None:
        importlib.import_module(search.split(":")[0]).parse_name(name)
    elif name not in names:
        raise ValueError(f"unknown opponent {name!r} for {game}; known: {', '.join(names)}{_named_extras(game)}")
