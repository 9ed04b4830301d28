"""The Gem Jam engine's tables (``gemenvs.gemjam.steps``): every step the engine can schedule and
every decision it can ask has its handler, every handler is reachable, every spell effect has its
function; and the state's JSON form is pinned over seeded random games."""
from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from gemenvs.gemjam import GemJam, steps
from gemenvs.gemjam.data import SPELL_EFFECTS
from gemenvs.gemjam.encode import DECISIONS

ENGINE = Path(steps.__file__).parent
ENGINE_MODULES = sorted(ENGINE.glob("*.py"))


def scheduled_and_asked() -> tuple[set[str], set[str]]:
    """Step names the engine's sources schedule (a list literal starting with a string, pushed on
    ``tasks`` or given as the state's first tasks) and decision kinds they ask (``ask``'s 4th
    argument, or a name passed on to the timer question)."""
    steps_named, asked = set(), set()
    for path in ENGINE_MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if name == "append" and isinstance(f.value, ast.Attribute) and f.value.attr == "tasks":
                    first = node.args[0].elts[0] if isinstance(node.args[0], ast.List) else None
                    if isinstance(first, ast.Constant):
                        steps_named.add(first.value)
                elif name == "ask" and isinstance(node.args[3], ast.Constant):
                    asked.add(node.args[3].value)
                elif name == "timer_due":  # re-schedules the step it interrupts
                    steps_named.add(node.args[2].value)
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "tasks"
                                                       for t in node.targets):
                for item in ast.walk(node.value):
                    if isinstance(item, ast.List) and item.elts and isinstance(item.elts[0], ast.Constant):
                        steps_named.add(item.elts[0].value)
    return steps_named, asked


def test_every_scheduled_step_and_asked_decision_has_exactly_one_handler():
    named, asked = scheduled_and_asked()
    assert named == set(steps.STEPS), "steps scheduled without a handler, or handlers nothing schedules"
    assert asked == set(steps.FINISH), "decisions asked without a finishing handler, or handlers nothing asks"
    assert set(steps.CANDIDATES) <= set(steps.FINISH)
    assert set(DECISIONS) == set(steps.FINISH)  # the observation's decision one-hot names every kind
    assert set(steps.EFFECTS) == set(SPELL_EFFECTS)  # a manifest may name exactly these


def test_handlers_are_plain_functions_named_after_their_entry():
    for name, fn in steps.STEPS.items():
        assert fn.__name__ == f"{name}_step", name
    for why, fn in steps.FINISH.items():
        assert fn.__name__ == f"finish_{why}", why
    for effect, fn in steps.EFFECTS.items():
        assert fn.__name__ == effect and fn.__doc__, effect


def test_no_module_registers_handlers_or_looks_them_up_by_name():
    for path in ENGINE_MODULES:
        text = path.read_text()
        assert "globals()" not in text and "noqa: F401" not in text, path.name
        for node in ast.parse(text).body:  # module-level functions: none is registered by a decorator
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert not node.decorator_list, f"{path.name}: {node.name} is decorated"
        if path.name in ("rules.py", "stack.py", "spells.py", "targets.py"):  # they name steps; steps.py runs them
            for table in ("STEPS", "FINISH", "CANDIDATES", "EFFECTS"):
                assert f"{table}[" not in text, f"{path.name} dispatches through {table}"


def _random_game(g: GemJam, seed: int, on_state) -> int:
    s = g.new_state(seed)
    rng = np.random.default_rng(seed)
    k = 0
    while not g.is_over(s):
        p = g.to_act(s)[0]
        legal = g.legal_actions(s, p)
        g.apply(s, p, int(legal[rng.integers(legal.size)]))
        k += 1
        on_state(s, p, k)
    return k


def test_random_games_run_only_steps_and_decisions_of_the_tables(monkeypatch):
    """Every step popped and decision finished in random games (every option) is in the tables, and
    random play reaches most of them."""
    ran, finished = set(), set()
    monkeypatch.setattr(steps, "STEPS", {name: (lambda fn, name: lambda s, c, t: (ran.add(name), fn(s, c, t)))(fn, name)
                                         for name, fn in steps.STEPS.items()})
    monkeypatch.setattr(steps, "FINISH", {why: (lambda fn, why: lambda *a: (finished.add(why), fn(*a)))(fn, why)
                                          for why, fn in steps.FINISH.items()})
    for n, opts in ((2, {}), (3, {"sirens_call": True, "turn_decision_limit": 4}), (4, {})):
        for seed in range(3):
            _random_game(GemJam(num_players=n, **opts), seed, lambda s, p, k: None)
    assert ran <= set(steps.STEPS) and finished <= set(steps.FINISH)
    assert len(ran) >= 10 and len(finished) >= 10


#: sha256 (first 16 hex digits) of the JSON of states along seeded random games and of states
#: resampled from them; pinned: the state's serialized form and the engine's play do not change
STATE_FORM = {
    (2, 1): "765f0d6526aa71f4",
    (3, 3): "fb36bf61100b0c95",
    (4, 2): "cf8448e57003c060",
}


@pytest.mark.parametrize("players, seed", sorted(STATE_FORM))
def test_state_json_form_is_pinned(players, seed):
    opts = {"sirens_call": True, "turn_decision_limit": 6} if players == 3 else {}
    g = GemJam(num_players=players, **opts)
    h = hashlib.sha256()

    def record(s, p, k):
        if k % 7 == 0 or s.stack or s.aside is not None:
            h.update(json.dumps(s.to_dict()).encode())
            h.update(json.dumps(g.resample_hidden(s, (p + 1) % players, np.random.default_rng(k)).to_dict()).encode())

    s_last = []
    _random_game(g, seed, lambda s, p, k: (record(s, p, k), s_last[:1] or s_last.append(s)))
    h.update(json.dumps(s_last[0].to_dict()).encode())
    assert h.hexdigest()[:16] == STATE_FORM[players, seed]


def test_rule_comments_cite_existing_sections_of_the_rules_page():
    """The engine's comments and docstrings cite ``docs/gemjam.md`` by heading (no outside rule
    numbers), and every heading they cite exists."""
    import re

    page = ENGINE.parents[1] / "docs" / "gemjam.md"
    headings = {line.lstrip("#").strip() for line in page.read_text().splitlines() if line.startswith("#")}
    cited = set()
    for path in ENGINE_MODULES:
        text = path.read_text()
        outside = re.search(r"§\d|\bS-\d|\bC-\d|SETTLED|CLARIFICATIONS", text)
        assert not outside, f"{path.name} cites an outside document"
        flat = re.sub(r"\n\s*(?:#:? ?)?", " ", text)  # comments and docstrings as one line
        for m in re.finditer(r'docs/gemjam\.md,? ((?:"[^"]+"(?:, )?)+)', flat):
            cited |= set(re.findall(r'"([^"]+)"', m.group(1)))
    assert cited, "no citation found"
    assert cited <= headings, f"cited sections missing from docs/gemjam.md: {sorted(cited - headings)}"
