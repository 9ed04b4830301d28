"""The griffe extension of the API pages (mkdocs.yml): the package's layout and its docstrings' Sphinx roles.

**Layout.** pyproject.toml installs the top-level folders ``agents/`` and ``training/`` as the subpackages
``gemenvs.agents`` and ``gemenvs.training`` (``[tool.setuptools] package-dir``). Griffe reads a package from
its folder, so when it loads ``gemenvs`` it is also handed the modules of those folders, under their
installed names (read from the same table of pyproject.toml).

**Roles.** The docstrings cross-reference with Sphinx roles (``:class:`~gemenvs.core.engine.Game```,
``:func:`train```) and end a paragraph before a literal block with ``::``. Markdown knows neither, so every
role becomes inline code of its target (the last part of the name for a ``~`` target, the text of
``text <target>``) and a closing ``::`` becomes ``:``.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import griffe

ROOT = Path(__file__).resolve().parents[1]

#: ``:role:`target``` (also ``:py:role:``), the target possibly ``~name`` or ``text <name>``
ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const|ref|term):`([^`]+)`")
#: a paragraph's closing ``::`` (reST's "literal block follows")
LITERAL = re.compile(r"(?<=\S)::$", re.M)


def mapped_subpackages() -> dict[str, dict[str, Path]]:
    """Package -> {subpackage name -> folder} of the subpackages pyproject.toml installs from elsewhere."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib  # Python 3.11 on
    except ImportError:  # Python 3.10: the one inline table, `package-dir = { "a" = "b", ... }`
        line = re.search(r"^package-dir\s*=\s*\{(.*)\}\s*$", text, re.M)
        dirs = ast.literal_eval("{" + line.group(1).replace(" = ", ": ") + "}") if line else {}
    else:
        dirs = tomllib.loads(text)["tool"]["setuptools"].get("package-dir", {})
    mapped: dict[str, dict[str, Path]] = {}
    for name, folder in dirs.items():
        parent, _, sub = name.rpartition(".")
        if parent and (ROOT / folder) != ROOT / parent.replace(".", "/") / sub:
            mapped.setdefault(parent, {})[sub] = ROOT / folder
    return mapped


MAPPED = mapped_subpackages()
_submodules = griffe.ModuleFinder.submodules


def _submodules_with_mapped(self, module):
    """Griffe's submodules of ``module``, plus those of the subpackages installed from other folders."""
    found = list(_submodules(self, module))
    if module.parent is None:
        for sub, folder in MAPPED.get(module.name, {}).items():
            init = folder / "__init__.py"
            found.append(((sub,), init))
            found += [((sub, *parts), path) for parts, path in self.iter_submodules(init)]
    return sorted(found, key=lambda item: len(item[0]))


griffe.ModuleFinder.submodules = _submodules_with_mapped


def _target(m: re.Match) -> str:
    text = m.group(1).strip()
    titled = re.fullmatch(r"(.*?)\s*<([^>]+)>", text)
    if titled:
        return f"`{titled.group(1)}`"
    if text.startswith("~"):
        return f"`{text[1:].rsplit('.', 1)[-1]}`"
    return f"`{text}`"


def markdown(text: str) -> str:
    """A docstring's text with its Sphinx roles and ``::`` markers in Markdown."""
    return LITERAL.sub(":", ROLE.sub(_target, text))


def _convert(obj) -> None:
    """Convert the docstrings of ``obj`` and of every member it defines (aliases are left alone)."""
    if obj.is_alias:
        return
    if obj.docstring is not None:
        obj.docstring.value = markdown(obj.docstring.value)
    for member in obj.members.values():
        _convert(member)


class SphinxRoles(griffe.Extension):
    """Rewrites every docstring of a loaded package (see the module docstring)."""

    def on_package(self, *, pkg, **kwargs) -> None:
        _convert(pkg)
