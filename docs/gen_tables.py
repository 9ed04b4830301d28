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
