"""The console scripts (gemenvs, gemenvs-train, gemenvs-tournament, gemenvs-benchmark): ``--version``,
one line naming the extra when a command runs without it (never a ModuleNotFoundError traceback,
but a missing module of gemenvs itself still is one), and help texts that name real files."""
from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from gemenvs.console import EXTRA_MODULES, extra_hint, missing_extra, package_version

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = {  # program -> module of its main
    "gemenvs": "gemenvs.cli",
    "gemenvs-train": "gemenvs.training.cli",
    "gemenvs-tournament": "gemenvs.arena.tournament",
    "gemenvs-benchmark": "gemenvs.training.benchmark_cli",
}


def pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _dist(requirement: str) -> str:
    """``"torch>=2.2"`` -> ``"torch"`` (the distribution name, normalised)."""
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


@pytest.mark.parametrize("prog", sorted(PROGRAMS))
def test_version_prints_the_program_and_the_package_version(prog, capsys):
    import importlib

    main = importlib.import_module(PROGRAMS[prog]).main
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"{prog} {package_version()}\n"


def test_the_version_is_pyproject_s():
    import gemenvs

    version = pyproject()["project"]["version"]
    assert package_version() == version
    assert gemenvs.__version__ == version  # the fallback of a source tree that is not installed agrees


def test_installed_scripts_print_the_version():
    bin_dir = Path(sys.executable).parent
    for prog in PROGRAMS:
        script = bin_dir / prog
        if not script.exists():
            pytest.skip(f"{prog} is not installed next to {sys.executable}")
        proc = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=120)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"{prog} {package_version()}\n", "")


def test_the_extra_modules_are_pyproject_s_extras():
    extras = pyproject()["project"]["optional-dependencies"]
    for extra in ("train", "bench", "openspiel", "rllib"):
        listed = {_dist(r) for r in extras[extra]}
        mapped = {dist.lower() for e, dist in EXTRA_MODULES.values() if e == extra}
        assert listed == mapped, (extra, listed ^ mapped)


def _raised(error: BaseException, cause: BaseException | None = None, suppress: bool = False) -> BaseException:
    """``error`` as raised (from ``cause``, or ``from None`` with ``suppress``), caught."""
    try:
        try:
            if cause is not None:
                raise cause
        except BaseException as inner:
            raise error from (None if suppress else inner)
        raise error
    except BaseException as e:
        return e


def test_the_hint_is_only_for_a_missing_module_of_an_extra():
    hint = extra_hint(ModuleNotFoundError("No module named 'torch'", name="torch"))
    assert hint == 'this command needs the train extra: pip install "gemenvs[train]" (missing module: torch)'
    assert missing_extra(ModuleNotFoundError(name="ray.rllib.core")) == ("rllib", "ray")
    assert missing_extra(ModuleNotFoundError(name="pyspiel")) == ("openspiel", "pyspiel")
    # an ImportError raised on account of a missing torch (a .zip policy's loader) still names the extra
    wrapped = _raised(ImportError("loading a .zip policy needs torch"), ModuleNotFoundError(name="torch"))
    assert missing_extra(wrapped) == ("train", "torch")
    for error in (ModuleNotFoundError(name="gemenvs.training.no_such_module"),  # our own code: a bug
                  ModuleNotFoundError(name="no_such_package"), ModuleNotFoundError("no name"),
                  ImportError("cannot import name 'X' from 'torch'", name="torch"),  # torch is there
                  _raised(ImportError("unrelated"), ModuleNotFoundError(name="torch"), suppress=True),
                  RuntimeError("torch")):
        assert extra_hint(error) is None, error


def _run_blocked(tmp_path, prog: str, blocked: list[str], argv: list[str]) -> subprocess.CompletedProcess:
    """Run ``prog``'s main with ``argv`` in a fresh interpreter where the ``blocked`` modules cannot be imported."""
    code = (f"import sys\nfor name in {blocked!r}:\n    sys.modules[name] = None\n"
            f"from {PROGRAMS[prog]} import main\nsys.exit(main({argv!r}))\n")
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)


def _policy_zip(tmp_path) -> str:
    path = tmp_path / "model.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", "{}")
    return str(path)


CASES = {  # name: program, modules blocked, argv (tmp: the test's folder), the modules it may name
    "train-yaml": ("gemenvs-train", ["yaml"], [str(ROOT / "configs/megagem/selfplay.yaml")], ["yaml"]),
    "train-lean-torch": ("gemenvs-train", ["torch"], [str(ROOT / "configs/megagem/selfplay.yaml"),
                                                      "run_root=TMP"], ["torch"]),
    "train-sb3": ("gemenvs-train", ["sb3_contrib", "stable_baselines3"],
                  [str(ROOT / "configs/megagem/selfplay_sb3.yaml"), "run_root=TMP"], ["sb3_contrib",
                                                                                      "stable_baselines3"]),
    "tournament": ("gemenvs-tournament", ["openskill", "matplotlib"],
                   ["--game", "megagem", "--players", "3", "--agents", "random", "truthful", "--games", "6",
                    "--no-progress"], ["openskill", "matplotlib"]),
    "benchmark-exploit": ("gemenvs-benchmark", ["torch"], ["exploit", "random", "--timesteps", "64", "--config",
                                                           str(ROOT / "configs/benchmark/exploitability-v1.yaml"),
                                                           "--out", "TMP"], ["torch"]),
    "play-zip-policy": ("gemenvs", ["torch"], ["play", "megagem", "--opponents", "ZIP"], ["torch"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_missing_extra_is_one_line_naming_it(case, tmp_path):
    prog, blocked, argv, names = CASES[case]
    argv = [_policy_zip(tmp_path) if a == "ZIP" else a.replace("TMP", str(tmp_path / "out")) for a in argv]
    proc = _run_blocked(tmp_path, prog, blocked, argv)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and proc.stderr.endswith("\n"), proc.stderr
    found = re.fullmatch(rf'{prog}: error: this command needs the train extra: pip install "gemenvs\[train\]" '
                         r'\(missing module: ([\w.]+)\)', lines[0])
    assert found and found.group(1) in names, lines[0]
    assert not (tmp_path / "out").exists()  # nothing written before the failing import


def test_a_missing_module_of_gemenvs_itself_stays_a_traceback(tmp_path):
    proc = _run_blocked(tmp_path, "gemenvs-train", ["gemenvs.training.lean_ppo"],
                        [str(ROOT / "configs/megagem/selfplay.yaml"), f"run_root={tmp_path / 'out'}"])
    assert proc.returncode == 1
    assert "Traceback" in proc.stderr and "ModuleNotFoundError" in proc.stderr and "extra" not in proc.stderr


# ----------------------------------------------------------------------------- help texts


def _run_names() -> dict[str, str]:
    """Run folder name -> backend, for every shipped training config (the folder ``runs/NAME`` it writes)."""
    yaml = pytest.importorskip("yaml")
    out = {}
    for path in (ROOT / "configs").glob("*/*.yaml"):
        cfg = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(cfg, dict) and "env" in cfg:
            out[cfg["name"]] = cfg.get("backend", "sb3")
    return out


#: the model files each backend writes into its run folder (training/lean_ppo.py, selfplay.py, rllib_backend.py)
MODELS = {"lean": {"best_model.npz", "final_model.npz"}, "rllib": {"best_model.npz", "final_model.npz"},
          "sb3": {"best_model.zip", "best_model.npz", "final_model.zip", "final_model.npz"}}


def check_paths(text: str) -> list[str]:
    """Every file or folder the example commands of ``text`` name that neither exists in the
    repository nor is written by a documented command (a config's run, an earlier --save/--gif/--out)."""
    runs = _run_names()
    written, bad, run = set(), [], None
    for line in text.splitlines():
        words = line.replace("(", " ").replace(")", " ").split()
        for k, word in enumerate(words):
            word = word.rstrip(",;:")
            before = words[k - 1] if k else ""
            if before in ("--save", "--gif", "--mp4", "--out"):
                written.add(word)
                continue
            if word.startswith("configs/"):
                if not (ROOT / word).is_file():
                    bad.append(word)
            elif word.startswith("runs/"):
                parts = word.split("/")
                run = parts[1] if parts[1] in runs else None
                if run is None or (len(parts) > 2 and parts[2] not in MODELS[runs[run]]):
                    bad.append(word)
            elif word.endswith((".jsonl", ".gif", ".mp4", ".npz", ".zip", ".yaml")) and word not in written:
                if not (run is not None and word in MODELS[runs[run]]):  # "(... also as best_model.npz)"
                    bad.append(word)
    return bad


def _help(prog: str, argv: list[str], capsys) -> str:
    import importlib

    assert importlib.import_module(PROGRAMS[prog]).main([*argv, "--help"]) == 0
    return capsys.readouterr().out


def test_the_example_checker_catches_a_file_nothing_writes():
    assert check_paths("  gemenvs play gemjam --opponents runs/gemjam/best_model.zip") == ["runs/gemjam/best_model.zip"]
    assert check_paths("  gemenvs play megagem --opponents runs/megagem_selfplay/best_model.zip") == \
        ["runs/megagem_selfplay/best_model.zip"]  # the lean backend writes .npz models only
    assert check_paths("  gemenvs replay game.jsonl") == ["game.jsonl"]
    assert check_paths("  runs/megagem_selfplay/best_model.npz\n  (also best_model.zip)") == ["best_model.zip"]
    assert check_paths("  gemenvs-train configs/megagem/none.yaml") == ["configs/megagem/none.yaml"]


@pytest.mark.parametrize("prog,argv", [("gemenvs", []), ("gemenvs", ["play"]), ("gemenvs", ["replay"]),
                                       ("gemenvs-train", []), ("gemenvs-benchmark", []),
                                       ("gemenvs-tournament", [])])
def test_help_examples_name_only_files_that_exist_or_are_written(prog, argv, capsys):
    text = _help(prog, argv, capsys)
    examples = text[text.index("examples:"):]
    if argv == ["replay"]:  # its game.jsonl is what the play examples save
        examples = _help("gemenvs", ["play"], capsys).split("examples:")[1] + examples
    assert "runs/" in examples or prog in ("gemenvs-tournament",) or argv == ["replay"]
    assert check_paths(examples) == []


def test_the_module_docstring_of_gemenvs_names_only_written_files():
    import gemenvs.cli

    assert check_paths(gemenvs.cli.__doc__.split("Every usage")[0]) == []
    assert "runs/gemjam_selfplay/best_model.zip" in gemenvs.cli.__doc__
    assert "gemenvs-train configs/gemjam/selfplay.yaml" in gemenvs.cli.__doc__


def test_the_train_help_names_the_backends_and_the_default_config_s(capsys):
    yaml = pytest.importorskip("yaml")
    text = _help("gemenvs-train", [], capsys)
    default = yaml.safe_load((ROOT / "configs/megagem/selfplay.yaml").read_text(encoding="utf-8"))
    assert default["backend"] == "lean"
    intro = " ".join(text.split("positional arguments")[0].split())
    assert "MaskablePPO training" not in intro
    for words in ("lean", "the default config's, configs/megagem/selfplay.yaml", "sb3", "MaskablePPO", "rllib",
                  "best_model.npz", "runs/NAME"):
        assert words in intro, words
    assert "gemenvs-train configs/megagem/selfplay.yaml\n      (backend lean" in text


def test_play_help_says_how_to_type_a_bid(capsys):
    text = _help("gemenvs", ["play"], capsys)
    assert "type the amount to bid (5 bids 5)" in text and "help NAME" in text
