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


def test_rllib_scaling_reads_the_rate_from_the_progress_a_run_writes(tmp_path):
    """benchmarks/rllib_scaling.py's rate comes from the progress.csv a training run writes (a row per update)."""
    pytest.importorskip("sb3_contrib")
    from gemenvs.training.cli import main

    scaling = _script("rllib_scaling")
    config = str(BENCHMARKS.parent / "configs" / "megagem" / "selfplay_sb3.yaml")
    overrides = [o for o in scaling.COMMON if not o.startswith("total_timesteps")]
    assert main([config, f"run_root={tmp_path}", "name=sb3", *overrides, "total_timesteps=1024", "n_envs=4",
                 "ppo.n_steps=64", "ppo.batch_size=64", "ppo.n_epochs=1", "ppo.net_arch=[16]"]) == 0
    rate, updates, steps = scaling.progress_rate(tmp_path / "sb3" / "progress.csv", rllib=False)
    assert updates == 4 and steps == 1024 and rate > 0


def test_protocol_overhead_measures_the_example_clients_beside_the_in_process_agent(capsys):
    overhead = _script("protocol_overhead")
    assert overhead.main(["--seconds", "0.1", "--games", "gem"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| gem |")]
    assert [row.split(" | ")[1] for row in rows] == ["RandomAgent, in process", "python client, stdin/stdout",
                                                     "sh + awk client, stdin/stdout"]
    assert all(float(row.split(" | ")[2].replace(",", "")) > 0 for row in rows)
