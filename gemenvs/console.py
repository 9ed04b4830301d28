"""Helpers shared by the console scripts (``gemenvs``, ``gemenvs-train``, ``gemenvs-tournament``,
``gemenvs-benchmark``): the ``--version`` option, and the one-line error for a command run without
the optional extra it needs (``pip install "gemenvs[train]"``) instead of a ModuleNotFoundError traceback.
"""
from __future__ import annotations

import argparse

#: the package whose version ``--version`` prints (pyproject.toml's ``version``, read from the installed metadata)
DISTRIBUTION = "gemenvs"

#: top-level module -> (extra, distribution): the third-party modules the optional extras of
#: pyproject.toml's ``[project.optional-dependencies]`` install (tests/test_console.py checks the two agree)
EXTRA_MODULES: dict[str, tuple[str, str]] = {
    "torch": ("train", "torch"),
    "stable_baselines3": ("train", "stable-baselines3"),
    "sb3_contrib": ("train", "sb3-contrib"),
    "yaml": ("train", "pyyaml"),
    "matplotlib": ("train", "matplotlib"),
    "tensorboard": ("train", "tensorboard"),
    "openskill": ("train", "openskill"),
    "rlcard": ("bench", "rlcard"),
    "pygame": ("bench", "pygame"),
    "cma": ("bench", "cma"),
    "pyspiel": ("openspiel", "open-spiel"),
    "ray": ("rllib", "ray"),
    "pandas": ("rllib", "pandas"),
    "tensorboardX": ("rllib", "tensorboardX"),
    "requests": ("rllib", "requests"),
    "pyarrow": ("rllib", "pyarrow"),
    "fsspec": ("rllib", "fsspec"),
    "pydantic": ("rllib", "pydantic"),
    "tree": ("rllib", "dm-tree"),
    "lz4": ("rllib", "lz4"),
    "ormsgpack": ("rllib", "ormsgpack"),
    "scipy": ("rllib", "scipy"),
}


def package_version() -> str:
    """The installed gemenvs version (``importlib.metadata``); ``gemenvs.__version__`` for a tree not installed."""
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        from gemenvs.version import __version__

        return __version__


def add_version_argument(parser: argparse.ArgumentParser) -> None:
    """Give ``parser`` a ``--version`` option that prints ``<prog> <version>`` and exits 0."""
    parser.add_argument("--version", action="version", version=f"{parser.prog} {package_version()}",
                        help="print the program's name and the gemenvs version, then exit")


def missing_module(error: BaseException) -> ModuleNotFoundError | None:
    """The ModuleNotFoundError behind ``error`` (itself, or an exception it was raised from or while
    handling, unless raised ``from None``), or None."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, ModuleNotFoundError):
            return error
        error = error.__cause__ if error.__cause__ is not None else (
            None if error.__suppress_context__ else error.__context__)
    return None


def missing_extra(error: BaseException) -> tuple[str, str] | None:
    """``(extra, package)`` when ``error`` comes from importing a third-party module of an optional
    extra that is not installed (``package``: its top-level name, ``openskill`` for ``openskill.models``);
    None for anything else (a missing module of gemenvs itself is a bug)."""
    found = missing_module(error)
    if found is None or not found.name:
        return None
    top = found.name.split(".")[0]
    if top not in EXTRA_MODULES:
        return None
    return EXTRA_MODULES[top][0], top


def extra_hint(error: BaseException) -> str | None:
    """The one-line message for a command that needs a missing extra (see :func:`missing_extra`), or None."""
    found = missing_extra(error)
    if found is None:
        return None
    extra, module = found
    return f'this command needs the {extra} extra: pip install "gemenvs[{extra}]" (missing module: {module})'


__all__ = ["EXTRA_MODULES", "add_version_argument", "extra_hint", "missing_extra", "missing_module",
           "package_version"]
