"""The scripts of benchmarks/: they import and build their environments without deprecation warnings
(PettingZoo's classic games through its registry), and their progress bars go to stderr, only when
asked (``--progress``) or when stderr is a terminal."""
from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
SCRIPTS = sorted(p.stem for p in BENCHMARKS.glob("*.py"))


def _script(name: str):
    """A benchmarks/ script loaded as a module (``main`` not run)."""
    spec = importlib.util.spec_from_file_location(f"benchmark_script_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (dataclasses of the script look their module up)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", SCRIPTS)
def test_scripts_import_without_deprecation_warnings(name):
    if name == "training_throughput":
        pytest.importorskip("sb3_contrib")
    with warnings.catch_warnings():
        for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
            warnings.simplefilter("error", category)
        _script(name)


def test_throughput_builds_every_environment_through_the_current_api():
    """Every entry of benchmarks/throughput.py, PettingZoo's texas_holdem_v4 and connect_four_v3 too, is
    made, reset and played through one game with deprecation warnings as errors."""
    pytest.importorskip("rlcard")
    pytest.importorskip("pygame")
    throughput = _script("throughput")
    with warnings.catch_warnings():
        for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
            warnings.simplefilter("error", category)
        for label, make in throughput.ENTRIES:
            player = throughput.Player(make(3), seed=1)
            assert player.play_game() > 0, label
            player.env.close()


def test_script_bars_go_to_stderr_when_asked(capsys):
    agents = _script("gemjam_agents")
    assert agents.main(["--games", "3", "--players", "2", "--progress"]) == 0
    captured = capsys.readouterr()
    assert "2 players:" in captured.err and "| 0/3 [" in captured.err
    assert "| 2 | rule | 1 x random | 3 |" in captured.out
    tuned = _script("megagem_tuned_eval")
    assert tuned.main(["--games", "1", "--charts", "A", "--workers", "1", "--progress"]) == 0
    assert "games:" in capsys.readouterr().err  # (a bar of the 2 games: one per chart and matchup)
    assert tuned.main(["--games", "1", "--charts", "A", "--workers", "1", "--no-progress"]) == 0
    assert capsys.readouterr().err == ""
