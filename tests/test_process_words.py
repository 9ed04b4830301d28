"""User-facing text speaks of the software, not of the process that built it.

Pages, config comments, docstrings, comments, ``--help`` texts and notebook text say what the
software does and how to use it. Words that belong to the project's own history (work sessions,
issue numbers, a journal, what was tried, acceptance targets, dated runs, internal run names) and
pointers to files outside the repository are kept out of them; history belongs in CHANGELOG.md,
which is not checked. Each test fails with a list of ``file:line: offending text`` hits.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import io
import json
import re
import sys
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: (pattern, why it is a process word). Matched case-insensitively; ``\s+`` lets a phrase wrap over
#: lines. Each pattern is narrow enough that the ordinary sense of a word stays allowed ("a known
#: issue", "the target player", "stop quietly", ``tie_break="rulebook"``).
PATTERNS: list[tuple[str, str]] = [
    # a work session of the project ("session 15 on"); the package has no user-facing sessions
    (r"\bsessions?\b", "a work session"),
    # an issue of the project's tracker by number ("issue 12", "issues 8 and 9", "issue #3"); "a known
    # issue" stays allowed, and an upstream bug is cited by its URL (".../PettingZoo/issues/1147")
    (r"\bissues?\s+#?\d+", "an issue number"),
    # the project's work journal
    (r"\bjournal\b", "the work journal"),
    # reports of what was tried ("was tried", "we tried", "tried and dropped", "(tried; it did not
    # help)", "by any method tried"); "every action is tried" in a search agent is the algorithm's own
    # word and stays allowed
    (r"\b(?:was|were|we|I)\s+tried\b|\(tried\b|\btried\s*;|\bmethods?\s+tried\b"
     r"|\btried\s+and\s+(?:dropped|rejected|abandoned|reverted|removed|failed|found|did)\b", "what was tried"),
    # a numbered stop of a work plan ("stop 4")
    (r"\bstop\s+\d+\b", "a work-plan stop"),
    # acceptance criteria of a task ("the acceptance run", "Acceptance: met")
    (r"\bacceptance\b", "acceptance criteria"),
    # a target and whether it was met ("target >= 45%: met", "targets not met"); a threshold a script
    # checks is called a threshold
    (r"\btargets?\b[^.\n]{0,60}?\b(?:not\s+)?met\b|(?-i:\bNOT\s+met\b)", "a target met or not met"),
    # an earlier state of the project ("an earlier version did", "before the change")
    (r"\b(?:an?|the)\s+earlier\s+version\b|\bbefore\s+the\s+change\b|\bprevious\s+version\s+of\s+(?:this|the)\s+"
     r"(?:page|project|code)\b", "an earlier version of the project"),
    # a date of a run ("2026-12-01"): measured blocks carry their stamp, the prose does not
    (r"\b20\d\d-[01]\d-[0-3]\d\b", "a dated run"),
    # internal run names: the project's own runs were named with short game prefixes (name=mg_uni10,
    # name=gj_advice); user examples use full names (name=megagem_3p)
    (r"\bname=(?:mg|gj|gm)_\w+", "an internal run name"),
    # files outside the repository: the clarifications file and the shared rule texts ("CLARIFICATIONS
    # C7", "../shared/rules.md", "clarification GEM 6")
    (r"\bclarifications?\b", "the clarifications file outside the repository"),
    (r"(?:\.\./)+shared\b|\bshared/\w+\.(?:md|txt|pdf)\b", "a file outside the repository"),
    # rulebook rule numbers ("rulebook Setup 3", "rulebook Auction Phase 3", "rule 4.2", "§12"); the
    # docs cite their own sections instead
    (r"\brulebook\s+(?:[A-Z][a-z]+\s+){0,3}\d+|\brules?\s+\d+(?:\.\d+)*\b|§\s*\d+", "a rulebook rule number"),
]
COMPILED = [(re.compile(p, re.IGNORECASE), why) for p, why in PATTERNS]


def hits_in(text: str, where: str, first_line: int = 1) -> list[str]:
    """``where:line: text`` for every pattern match in ``text`` (whose first line is ``first_line``)."""
    out = []
    for rx, why in COMPILED:
        for m in rx.finditer(text):
            line = first_line + text.count("\n", 0, m.start())
            out.append(f"{where}:{line}: {' '.join(m.group(0).split())!r} ({why})")
    return out


def report(hits: list[str]) -> str:
    return f"{len(hits)} process word(s) in user-facing text:\n" + "\n".join(sorted(set(hits)))


# ----------------------------------------------------------------------------- the patterns themselves

PLANTED = [
    "The lead ran it in session 15.",
    "Targets (issue 12, 4 players)",
    "see issues\n8 and 9",
    "as the journal says",
    "shaping: 1.0  # (tried; it did not help)",
    "by any method tried",
    "OmegaConf was tried and dropped",
    "done at stop 4",
    "# the acceptance run",
    "target >= 45%: NOT met",
    "both targets met",
    "an earlier version did this",
    "gemenvs-train ... name=gj_advice, 2026-12-01",
    "clarification GEM 6",
    "CLARIFICATIONS C7",
    "see ../shared/rules.md",
    "deal the stacks (rulebook Setup 3)",
    "as in rule 4.2",
]
CLEAN = [
    "A known issue of Ray: it retries for minutes.",
    "the target player and the target set",
    "the reader went away: stop quietly",
    'tie_break="rulebook" (default)',
    "Every action is tried on the same sampled states.",
    "a member never played yet counts at chance level, so it is tried soon",
    "0 for the rule agent's choice, for actions not tried and on decisions that are not searched",
    "compare https://github.com/Farama-Foundation/PettingZoo/issues/1147",
    "gemenvs-train configs/megagem/selfplay_3p.yaml name=megagem_3p",
    "each met by the first set that meets it",
    "the script's own threshold: at least 70% wins; it prints PASS or FAIL",
    "docs/gem.md \"Reinvestment phase\"",
    "a shared win counts 1/winners",
    "2,000 games per cell, seeds from 500000",
]


@pytest.mark.parametrize("text", PLANTED)
def test_the_patterns_catch_planted_process_words(text):
    assert hits_in(text, "planted"), f"no pattern matches {text!r}"


@pytest.mark.parametrize("text", CLEAN)
def test_the_patterns_pass_ordinary_words(text):
    assert not hits_in(text, "clean"), hits_in(text, "clean")


# ----------------------------------------------------------------------------- pages

#: the stamp line of a report block (benchmarks/report.py): the command, commit, date and machine of a measurement
STAMP_LINE = re.compile(r"^\*Measured by `python -m benchmarks\.report .*$", re.MULTILINE)


def pages() -> list[Path]:
    """README.md, CITATION.cff and the docs pages (mkdocs); CHANGELOG.md holds the history."""
    found = [ROOT / "README.md", ROOT / "CITATION.cff", *sorted((ROOT / "docs").rglob("*.md"))]
    return [p for p in found if p.is_file() and p.name != "CHANGELOG.md"]


def test_pages_speak_of_the_software():
    hits = []
    for page in pages():
        # a report block's stamp names the date and commit of its measurement; the rest of the page may not
        text = STAMP_LINE.sub("", page.read_text(encoding="utf-8"))
        hits += hits_in(text, str(page.relative_to(ROOT)))
    assert not hits, report(hits)


def test_config_files_speak_of_the_software():
    hits = []
    for path in sorted((ROOT / "configs").rglob("*.yaml")):
        hits += hits_in(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not hits, report(hits)


# ----------------------------------------------------------------------------- source text

#: the source folders of the installed packages (gemenvs, gemenvs.agents, gemenvs.training)
SOURCE_DIRS = ("gemenvs", "agents", "training")


def source_files() -> list[Path]:
    files = [p for d in SOURCE_DIRS for p in sorted((ROOT / d).rglob("*.py"))]
    return files + sorted((ROOT / "benchmarks").glob("*.py"))


def docstrings(tree: ast.AST):
    """(first line, text) of every docstring: module, class and function docstrings, and the bare
    string statements that document an attribute or a field (``x: int = 0`` then ``\"\"\"...\"\"\"``)."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for stmt in body:
            if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                    and isinstance(stmt.value.value, str)):
                yield stmt.lineno, stmt.value.value


def comment_blocks(source: str):
    """(first line, text) of every run of comments on consecutive lines (so a phrase may wrap)."""
    block: list[str] = []
    start = last = 0
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.COMMENT:
            continue
        row = tok.start[0]
        if block and row != last + 1:
            yield start, "\n".join(block)
            block = []
        if not block:
            start = row
        block.append(tok.string)
        last = row
    if block:
        yield start, "\n".join(block)


def test_docstrings_and_comments_speak_of_the_software():
    hits = []
    for path in source_files():
        source = path.read_text(encoding="utf-8")
        where = str(path.relative_to(ROOT))
        for line, text in docstrings(ast.parse(source)):
            hits += hits_in(text, where, line)
        for line, text in comment_blocks(source):
            hits += hits_in(text, where, line)
    assert not hits, report(hits)


# ----------------------------------------------------------------------------- --help texts

class _Parser(BaseException):
    """Raised from ``parse_known_args`` to hand the entry point's parser out (not a SystemExit, which
    the entry points catch)."""

    def __init__(self, parser: argparse.ArgumentParser):
        super().__init__()
        self.parser = parser


def console_scripts() -> dict[str, str]:
    tomllib = pytest.importorskip("tomllib")
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["scripts"]


def parser_of(target: str, monkeypatch) -> argparse.ArgumentParser:
    """The argparse parser the entry point ``module:function`` builds when run with ``--help``."""
    module, _, func = target.partition(":")
    main = getattr(importlib.import_module(module), func)

    def grab(self, args=None, namespace=None):
        raise _Parser(self)

    with monkeypatch.context() as m:
        m.setattr(argparse.ArgumentParser, "parse_known_args", grab)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                main(["--help"])
        except _Parser as got:
            return got.parser
    raise AssertionError(f"{target} returned without parsing its arguments")


def help_texts(parser: argparse.ArgumentParser, prog: str):
    """(name, text) of the parser's help and of every subcommand's, recursively."""
    yield prog, parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from help_texts(sub, f"{prog} {name}")


@pytest.mark.parametrize("script", sorted(console_scripts()))
def test_help_texts_speak_of_the_software(script, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # wide lines: a phrase is not cut by the formatter's wrapping
    monkeypatch.setattr(sys, "argv", [script, "--help"])
    parser = parser_of(console_scripts()[script], monkeypatch)
    hits = []
    for prog, text in help_texts(parser, script):
        assert text.strip(), f"{prog} --help is empty"
        hits += hits_in(text, f"{prog} --help")
    assert not hits, report(hits)


# ----------------------------------------------------------------------------- notebooks

def test_notebook_text_speaks_of_the_software():
    hits = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        for i, cell in enumerate(nb["cells"]):
            if cell["cell_type"] == "markdown":
                text = "".join(cell["source"])
                hits += hits_in(text, f"{path.relative_to(ROOT)} cell {i}")
    assert not hits, report(hits)
