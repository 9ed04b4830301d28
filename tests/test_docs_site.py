"""The documentation site builds in strict mode: every page in the nav, every link and heading anchor found,
every API reference resolved (``mkdocs build --strict``, mkdocs.yml). Needs the docs extra."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^(```|~~~)")


def pages() -> list[Path]:
    """Every Markdown page of the site."""
    return sorted(DOCS.rglob("*.md"))


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_every_page_starts_with_one_title(page):
    lines = page.read_text(encoding="utf-8").splitlines()
    first = next((line for line in lines if line.strip()), "")
    assert first.startswith("# "), f"docs/{page.relative_to(DOCS)} must start with a '# Title' line; got {first!r}"
    titles, fenced = [], False
    for number, line in enumerate(lines, 1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and line.startswith("# "):
            titles.append(f"line {number}: {line}")
    assert len(titles) == 1, f"docs/{page.relative_to(DOCS)} has more than one '# ' title: {titles}"


def test_the_site_builds_in_strict_mode(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install -e '.[docs]')")
    pytest.importorskip("mkdocstrings", reason="the docs extra is not installed")
    pytest.importorskip("material", reason="the docs extra is not installed")
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # (Material's banner about MkDocs 2.0, not a build problem)
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    problems = [line for line in done.stderr.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert done.returncode == 0, "mkdocs build --strict failed:\n" + "\n".join(problems or done.stderr.splitlines()[-30:])
    assert not problems, "\n".join(problems)
    # the API pages were rendered from the docstrings
    core = (site / "api" / "core" / "index.html").read_text(encoding="utf-8")
    assert "GameEntry" in core and "register" in core
    training = (site / "api" / "training" / "index.html").read_text(encoding="utf-8")
    assert "TrainConfig" in training
    # the Sphinx roles of the docstrings became code (docs/griffe_roles.py)
    assert ":class:" not in core and ":func:" not in training
