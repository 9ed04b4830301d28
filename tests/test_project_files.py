"""The project's own files agree with each other: the license, the citation, the version and the changelog's
table of environment versions."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

import gemenvs
from gemenvs import entries

ROOT = Path(__file__).resolve().parent.parent


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_license_file_is_the_license_pyproject_declares():
    assert _pyproject()["license"] == {"text": "MIT"}
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text


def test_the_citation_is_valid_cff_with_the_release_version():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert cff["title"] and cff["authors"] and all("name" in a or "family-names" in a for a in cff["authors"])
    assert str(cff["version"]) == _pyproject()["version"] == gemenvs.__version__
    assert cff["license"] == "MIT"


def test_the_changelog_is_by_version_and_lists_every_environment_version():
    text = (ROOT / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## (\d+\.\d+\.\d+)\b", text, re.M)
    assert releases and releases[0] == gemenvs.__version__, "the newest release section is the current version"
    table = dict(re.findall(r"^\| `(gemenvs/[A-Za-z]+)-v\d+` \| (\d+) \|$", text, re.M))
    assert table == {e.env_id.rsplit("-v", 1)[0]: str(e.version) for e in entries()
                     if e.env_id.startswith("gemenvs/")}
