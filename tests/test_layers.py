"""The layers of the library, as contracts of import-linter (``[tool.importlinter]`` in pyproject.toml).

``core <- games <- agents <- arena <- training <- command-line tools``: a module imports only from its own
layer's package and the layers below it, and the modules of one package never import each other in a circle.
import-linter reads the package from the file system, so the check runs over a copy of the sources laid out as
pyproject's ``package-dir`` installs them (``agents/`` as ``gemenvs/agents``, ``training/`` as ``gemenvs/training``).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def installed_layout(dest: Path) -> Path:
    """Copy the package's sources into ``dest`` as they are installed (pyproject's ``package-dir``)."""
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for package, folder in sorted(package_dir.items(), key=lambda item: item[0].count(".")):
        shutil.copytree(ROOT / folder, dest / package.replace(".", "/"), dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "data"))
    return dest


def lint_imports(tree: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` with the project's contracts over the package in ``tree``."""
    if not LINT_IMPORTS.exists():
        pytest.fail(f"{LINT_IMPORTS} is missing: install the test extra (pip install -e '.[test]')")
    return subprocess.run([str(LINT_IMPORTS), str(ROOT / "pyproject.toml"), "--no-cache"], cwd=tree, text=True,
                          capture_output=True, env={**os.environ, "PYTHONPATH": str(tree)}, timeout=300)


def test_every_layer_imports_only_the_layers_below_it_and_no_package_has_a_circle(tmp_path):
    result = lint_imports(installed_layout(tmp_path))
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "Contracts: 2 kept, 0 broken." in result.stdout


def test_an_import_up_the_layers_breaks_the_contract(tmp_path):
    """The check can fail: an engine module that imports the training package is reported."""
    tree = installed_layout(tmp_path)
    engine = tree / "gemenvs" / "core" / "engine.py"
    engine.write_text(engine.read_text() + "\n\ndef _up():\n    import gemenvs.training.budget  # noqa: F401\n")
    result = lint_imports(tree)
    assert result.returncode != 0
    assert "gemenvs.core is not allowed to import gemenvs.training" in result.stdout


def test_the_contracts_declare_no_exceptions():
    """Every import between the modules of a package follows the contracts: none is waived in pyproject.toml."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert contracts and all(not c.get("ignore_imports") for c in contracts)


def test_a_circle_between_two_modules_of_a_package_breaks_the_contract(tmp_path):
    """The acyclic-siblings contract can fail: a batched twin that imports its scalar bidder back is reported."""
    tree = installed_layout(tmp_path)
    twins = tree / "gemenvs" / "agents" / "megagem" / "batched.py"
    twins.write_text(twins.read_text() + "\n\ndef _back():\n    import gemenvs.agents.megagem.bidders  # noqa: F401\n")
    result = lint_imports(tree)
    assert result.returncode != 0 and "no circles" in result.stdout, result.stdout[-2000:]
