"""Load ``docs/gen_tables.py`` (a script, not a package module) for the tests that check the docs."""
from __future__ import annotations

import importlib.util
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"


def load():
    """The ``docs/gen_tables.py`` module, loaded from its file."""
    spec = importlib.util.spec_from_file_location("gen_tables", DOCS / "gen_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
