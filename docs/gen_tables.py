"""Regenerate the tables of the docs pages from the code, between their marker comments.

A block is written between ``<!-- BEGIN name -->`` and ``<!-- END name -->``; everything else in
the page is left alone. ``tests/test_docs.py`` fails when a committed table differs from what
this script writes now.

    python docs/gen_tables.py           # rewrite the tables in place
    python docs/gen_tables.py --check   # exit 1 (and name the blocks) when a page is out of date
"""
from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

import gemenvs
from gemenvs import GameEntry
from gemenvs.gem import Gem
from gemenvs.megagem import ENTRY as MEGAGEM
from gemenvs.megagem.data import (
    AUCTION_KINDS, CHART_NAMES, COLOURS, GEMS_PER_COLOUR, MISSIONS, SETUP, TOTAL_INVEST, TOTAL_LOANS, VALUE_CHARTS,
)
from gemenvs.megagem.game import MegaGem

DOCS = Path(__file__).resolve().parent
PLAYER_COUNTS = MEGAGEM.player_counts
_BLOCK = re.compile(r"(<!-- BEGIN (?P<name>[^>]*?) -->\n)(?P<body>.*?)(<!-- END (?P=name) -->)", re.S)


def _table(head: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def megagem_setup_table() -> str:
    """Starting coins, hand size and derived figures for every player count."""
    rows = []
    for n in PLAYER_COUNTS:
        coins, hand = SETUP[n]
        game = MegaGem(num_players=n)
        deck = len(COLOURS) * GEMS_PER_COLOUR - n * hand
        rows.append([n, coins, hand, n * hand, deck, deck - 2, game.max_bid, game.num_actions, game.spec.size])
    return _table(["players", "starting coins", "gem cards per hand", "cards in hands", "gems for sale",
                   "face-down after the first 2", "largest possible bid", "actions", "observation size"], rows)


def megagem_auction_table() -> str:
    """The 25 auction cards by kind."""
    what = {("treasure", 1): "winner buys the gem in slot 0 of the row",
            ("treasure", 2): "winner buys both gems of the row (the last gem, if only one is left)",
            "loan": "winner receives {a} coins, owes {a} at the end",
            "invest": "winner's bid is locked on the card; returned at the end plus {a}"}
    rows = [[i, label, kind, copies, what.get((kind, amount), what.get(kind, "")).format(a=amount)]
            for i, (label, kind, amount, copies) in enumerate(AUCTION_KINDS)]
    return _table(["id", "card", "type", "copies", "effect"], rows)


def megagem_missions_table() -> str:
    """All 30 mission cards: id (as in the observation's one-hot), label and coin value."""
    return _table(["id", "mission", "value"], [[i, label, value] for i, (label, value, _, _) in enumerate(MISSIONS)])


def megagem_charts_table() -> str:
    """Coins one Collection gem is worth, by Display count of its colour, for every chart."""
    rows = []
    for k in range(len(VALUE_CHARTS["A"])):
        count = f"{k}+" if k == len(VALUE_CHARTS["A"]) - 1 else str(k)
        rows.append([count] + [VALUE_CHARTS[c][k] for c in CHART_NAMES])
    return _table(["gems of the colour in the Display"] + list(CHART_NAMES), rows)


def megagem_scales_note() -> str:
    """The constants the observation scales come from."""
    return (f"Scales: coins 100; gem counts {GEMS_PER_COLOUR}; loans {TOTAL_LOANS} (all Loan cards); "
            f"investments {TOTAL_INVEST} (all Invest cards); gem values 20 (the largest chart entry).")


def gem_card_table() -> str:
    """The 18 gem cards of the standard manifest with their INVESTED value and reinvestment cost."""
    m = Gem().manifest
    rows = [[c, m.label(c), m.card_value[c], m.card_cost[c], m.card_value[c]] for c in range(m.num_cards)]
    return _table(["id", "gems", "INVESTED value", "reinvestment cost, `value_minus_one` (default)",
                   "reinvestment cost, `value`"], rows)


def obs_table(game_class, players: int) -> str:
    """Every observation slice of a game for ``players`` seats (from its ObservationSpec)."""
    spec = game_class(num_players=players).spec
    return f"Total size: {spec.size} float32 values.\n\n" + spec.markdown_table()


def action_table(game_class, players: int) -> str:
    """Every action range of a game for ``players`` seats (from its ActionSpec)."""
    spec = game_class(num_players=players).action_spec
    return f"Total: {spec.size} action ids (one Discrete space).\n\n" + spec.markdown_table()


def game_pages() -> dict[str, GameEntry]:
    """Docs page -> entry of every registered game with a page (``GameEntry.docs_page``)."""
    return {e.docs_page: e for e in gemenvs.entries() if e.docs_page is not None}


#: page -> entry: each page gets generated blocks ``obs-table players=N`` and ``action-table players=N``
#: for every player count of its game
GAME_PAGES: dict[str, GameEntry] = game_pages()


def _game_blocks(entry: GameEntry) -> dict[str, Callable[[], str]]:
    """The generated observation and action table blocks of a game page, one per player count."""
    cls = entry.game_class
    blocks = {f"obs-table players={n}": (lambda n=n: obs_table(cls, n)) for n in entry.player_counts}
    blocks.update({f"action-table players={n}": (lambda n=n: action_table(cls, n)) for n in entry.player_counts})
    return blocks


#: the blocks a page has beyond its game's observation and action tables: page -> block name -> generator
PAGE_BLOCKS: dict[str, dict[str, Callable[[], str]]] = {
    "megagem.md": {
        "setup-table": megagem_setup_table,
        "auction-table": megagem_auction_table,
        "missions-table": megagem_missions_table,
        "charts-table": megagem_charts_table,
        "scales-note": megagem_scales_note,
    },
    "gem.md": {"gem-card-table": gem_card_table},
}

#: page -> block name -> generator
BLOCKS: dict[str, dict[str, Callable[[], str]]] = {
    page: {**PAGE_BLOCKS.get(page, {}), **_game_blocks(entry)} for page, entry in GAME_PAGES.items()
}


# ----------------------------------------------------------------------------- pages beyond the games

def _type_text(tp) -> str:
    """A config field's type in YAML words: ``"win" or "score"``, ``integer or null``, ``list of strings``."""
    import types
    import typing

    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Literal:
        return " or ".join(f'`"{a}"`' if isinstance(a, str) else f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join("null" if a is type(None) else _type_text(a) for a in args)
    if origin is list:
        return f"list of {_type_text(args[0]).replace('integer', 'integers').replace('string', 'strings')}"
    if origin is dict:
        return "mapping"
    return {bool: "boolean", int: "integer", float: "number", str: "string"}.get(tp, getattr(tp, "__name__", str(tp)))


def _yaml_text(value) -> str:
    """A default value as it is written in a YAML config."""
    if value is None:
        return "`null`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, list):
        return "`[" + ", ".join(str(v) for v in value) + "]`"
    if isinstance(value, dict):
        return "`{}`" if not value else "`{" + ", ".join(f"{k}: {v}" for k, v in value.items()) + "}`"
    if isinstance(value, float) and value.is_integer():
        return f"`{value:.1f}`"
    return f"`{value}`"


def _field_docs(cls) -> dict[str, str]:
    """Field name -> the docstring written under the field in the dataclass's source (one line)."""
    import ast
    import inspect
    import textwrap

    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body
    docs = {}
    for node, after in zip(body, body[1:]):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(after, ast.Expr) \
                and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str):
            docs[node.target.id] = " ".join(after.value.value.split())
    return docs


def _cell_text(text: str) -> str:
    """``text`` safe in a Markdown table cell: pipes, ``*`` and ``<`` escaped outside its code spans."""
    parts = text.replace("``", "`").split("`")
    for k in range(0, len(parts), 2):
        parts[k] = parts[k].replace("|", "\\|").replace("*", "\\*").replace("<", "&lt;")
    return "`".join(parts)


def _config_rows(cls, prefix: str = "") -> list[list[str]]:
    """Key, type, default and meaning of every field of config dataclass ``cls`` (sections flattened)."""
    import dataclasses
    import typing

    hints, docs, rows = typing.get_type_hints(cls), _field_docs(cls), []
    for f in dataclasses.fields(cls):
        key = prefix + f.name
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        if dataclasses.is_dataclass(default):
            rows += _config_rows(type(default), key + ".")
            continue
        meaning = _cell_text(docs.get(f.name, ""))
        rows.append([f"`{key}`", _type_text(hints[f.name]), _yaml_text(default), meaning])
    return rows


def config_fields_table() -> str:
    """Every field of a training config (``gemenvs.training.config.TrainConfig``): one table per section."""
    import dataclasses

    from gemenvs.training.config import TrainConfig

    head = ["key", "type", "default", "meaning"]
    top = [f for f in dataclasses.fields(TrainConfig) if not dataclasses.is_dataclass(f.default_factory)]
    sections = [f for f in dataclasses.fields(TrainConfig) if f not in top]
    rows = [r for r in _config_rows(TrainConfig) if r[0].strip("`").partition(".")[0] in {f.name for f in top}]
    parts = ["**Top level**\n", _table(head, rows)]
    for f in sections:
        cls = f.default_factory
        about = " ".join((cls.__doc__ or "").split())
        parts += [f"\n**`{f.name}`**: {_cell_text(about)}\n", _table(head, _config_rows(cls, f.name + "."))]
    return "\n".join(parts)


def agent_names_table() -> str:
    """Every agent name of the suite's games: the baselines, the agent families and the search agents."""
    import importlib
    import inspect

    from gemenvs.agents.registry import SEARCH_AGENTS

    rows = []
    for e in GAME_PAGES.values():
        for name, target in e.baselines.items():
            kind = "baseline (default opponent)" if name == e.default_opponent else "baseline"
            rows.append([e.title, f"`{name}`", f"`{target.rpartition(':')[2]}`", kind])
        for prefix, target in e.families.items():
            kind = "family member, reads the engine state" if prefix in e.state_families else "family member"
            module, _, builder = target.partition(":")
            module = importlib.import_module(module)
            try:  # a family whose bare prefix is a name too (lookahead: two samples)
                module.parse_member(prefix)
                names = f"`{prefix}`, `{prefix}:…`"
            except ValueError:
                names = f"`{prefix}:…`"
            made = inspect.signature(getattr(module, builder)).return_annotation
            rows.append([e.title, names, f"`{made if isinstance(made, str) else made.__name__}`", kind])
        for name, target in SEARCH_AGENTS.items():
            rows.append([e.title, f"`{name}`, `{name}:N`", f"`{target.rpartition(':')[2]}`",
                         "search, reads the engine state"])
    return _table(["game", "name", "agent", "kind"], rows)


def suite_table() -> str:
    """The games of the suite: ids, modules, player counts, action and observation sizes (from the entries)."""
    rows = []
    for e in GAME_PAGES.values():
        games = {n: e.game_class(num_players=n) for n in e.player_counts}
        counts = " / ".join(map(str, games))
        actions = {g.num_actions for g in games.values()}
        sizes = " / ".join(str(g.spec.size) for g in games.values())
        rows.append([f"[{e.title}]({e.docs_page})", f"`{e.env_id}`", f"`gemenvs.{e.env_name}`",
                     f"{min(games)}-{max(games)} (default {e.game_class().num_players})",
                     f"Discrete({actions.pop()})" if len(actions) == 1
                     else f"Discrete({' / '.join(str(g.num_actions) for g in games.values())}) for {counts} players",
                     f"float32 ({sizes},) for {counts} players + mask"])
    return _table(["environment", "PettingZoo / Gymnasium id", "module", "players", "actions", "observation"], rows)


#: pages that are not a game's, with their generated blocks
BLOCKS.update({
    "training.md": {"config-fields": config_fields_table},
    "agents.md": {"agent-names": agent_names_table},
    "index.md": {"suite-table": suite_table},
})


def render(page: str, text: str) -> str:
    """``text`` of docs page ``page`` with every generated block rewritten; a missing block raises."""
    blocks = BLOCKS[page]
    found = set()

    def fill(m: re.Match) -> str:
        name = m.group("name")
        if name not in blocks:
            raise ValueError(f"{page}: unknown generated block {name!r}; known: {', '.join(blocks)}")
        found.add(name)
        return f"{m.group(1)}{blocks[name]()}\n{m.group(4)}"

    out = _BLOCK.sub(fill, text)
    missing = [name for name in blocks if name not in found]
    if missing:
        raise ValueError(f"{page}: no markers for block(s) {', '.join(missing)}")
    return out


def out_of_date() -> list[str]:
    """Pages whose committed tables differ from what :func:`render` writes now."""
    return [page for page in BLOCKS if render(page, (DOCS / page).read_text()) != (DOCS / page).read_text()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report pages that are out of date")
    args = parser.parse_args(argv)
    stale = out_of_date()
    if args.check:
        for page in stale:
            print(f"docs/{page} is out of date: run python docs/gen_tables.py", file=sys.stderr)
        return 1 if stale else 0
    for page in stale:
        path = DOCS / page
        path.write_text(render(page, path.read_text()))
        print(f"rewrote docs/{page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
