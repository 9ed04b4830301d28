"""Every notebook in notebooks/ runs top to bottom without error (executed with nbclient).

The training and tournament notebooks run with tiny budgets: the test inserts a cell after the
cell tagged ``parameters`` that sets them (what papermill's ``-p NAME VALUE`` does), so the whole
check stays well under three minutes on two cores.
"""
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from gemenvs.agents.registry import baseline_names

NOTEBOOK_DIR = Path(__file__).parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))

#: a training run of two tiny rollouts (a snapshot after the first, one point of the curve)
TINY_TRAINING = dict(TOTAL_TIMESTEPS=128, N_ENVS=1, SNAPSHOT_EVERY=64, EVAL_EVERY=128, EVAL_GAMES=4,
                     FINAL_GAMES=4, WORKERS=1, GIF_FRAMES=3, PRETRAIN_GAMES=3,
                     EXTRA=["ppo.n_steps=64", "ppo.batch_size=64", "ppo.n_epochs=1", "ppo.net_arch=[16]"])
#: one balanced cycle of games
TINY_TOURNAMENT = dict(GAMES=1, WORKERS=1, MODEL=None)


def parameter_cell(nb) -> int:
    """Index of the cell tagged ``parameters`` (there must be exactly one)."""
    found = [i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]
    assert len(found) == 1, f"{len(found)} cells tagged 'parameters'"
    return found[0]


def run_notebook(path: Path, **params) -> nbformat.NotebookNode:
    """Execute the notebook at ``path`` with ``params`` set after its parameter cell; the executed notebook."""
    nb = nbformat.read(path, as_version=4)
    if params:
        at = parameter_cell(nb)
        source = "\n".join(f"{name} = {value!r}" for name, value in params.items())
        nb.cells.insert(at + 1, nbformat.v4.new_code_cell(source, metadata={"tags": ["injected-parameters"]}))
        nb.cells[at + 1].pop("id", None)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs if o.output_type == "error"]
    assert not errors
    return nb


def output_text(nb) -> str:
    """Everything the notebook printed or displayed as text."""
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            out.append(o.get("text", "") if o.output_type == "stream" else o.get("data", {}).get("text/plain", ""))
            out.append(o.get("data", {}).get("text/markdown", ""))
    return "\n".join(out)


def images(nb) -> list[str]:
    """The image types of every displayed output, in order (a figure that did not show is missing)."""
    return [m for c in nb.cells for o in c.get("outputs", []) for m in o.get("data", {}) if m.startswith("image/")]


def test_there_are_notebooks():
    assert {p.name for p in NOTEBOOKS} >= {"megagem_quickstart.ipynb", "selfplay_training.ipynb",
                                           "bidding_benchmark.ipynb"}


@pytest.mark.parametrize("name", ["selfplay_training.ipynb", "bidding_benchmark.ipynb"])
def test_committed_notebooks_have_a_game_parameter_and_no_outputs(name):
    nb = nbformat.read(NOTEBOOK_DIR / name, as_version=4)
    nbformat.validate(nb)
    assert nb.cells[parameter_cell(nb)].source.startswith('GAME = "megagem"')
    assert not [c for c in nb.cells if c.cell_type == "code" and (c.outputs or c.execution_count)]


def test_quickstart_runs():
    run_notebook(NOTEBOOK_DIR / "megagem_quickstart.ipynb")


def test_selfplay_training_then_its_policy_in_the_tournament(tmp_path):
    nb = run_notebook(NOTEBOOK_DIR / "selfplay_training.ipynb", GAME="megagem", RUN_ROOT=str(tmp_path),
                      **TINY_TRAINING)
    run = tmp_path / "megagem_notebook"
    for name in ("eval.csv", "results.md", "best_model.npz", "example_game.jsonl", "example_game.gif"):
        assert (run / name).exists(), name
    # learning curve, final table, the game's last frame, its GIF
    assert images(nb) == ["image/png"] * 3 + ["image/gif"] and "in seat 0 against tuned" in output_text(nb)

    model = str(run / "best_model.npz")
    nb = run_notebook(NOTEBOOK_DIR / "bidding_benchmark.ipynb", GAME="megagem", OUT=str(tmp_path / "tournament"),
                      **{**TINY_TOURNAMENT, "MODEL": model})
    assert (tmp_path / "tournament" / "head_to_head.png").exists()
    text = output_text(nb)
    assert "best_model.npz" in text and "heuristic" in text and "| # | agent |" in text
    # every baseline of the game plus the model, at four seats: whole cycles of the balanced schedule
    field = len(baseline_names("megagem")) + 1
    agents = re.search(r"agents: (.*); (\d+) games = 1 cycles of (\d+)", text)
    assert agents and len(agents.group(1).split(", ")) == field and agents.group(2) == agents.group(3), text[:600]
    assert images(nb) == ["image/png"] * 4  # leaderboard, heatmap, decisions and bids, the replayed game


def test_selfplay_training_for_another_game(tmp_path):
    nb = run_notebook(NOTEBOOK_DIR / "selfplay_training.ipynb", GAME="gemjam", RUN_ROOT=str(tmp_path),
                      **TINY_TRAINING)
    assert "gemenvs/GemJam-v0, 3 players" in output_text(nb) and "in seat 0 against rule" in output_text(nb)
    assert (tmp_path / "gemjam_notebook" / "best_model.npz").exists()


@pytest.mark.parametrize("game", ["gem", "gemjam"])
def test_bidding_benchmark_for_another_game(game, tmp_path):
    nb = run_notebook(NOTEBOOK_DIR / "bidding_benchmark.ipynb", GAME=game, OUT=str(tmp_path), **TINY_TOURNAMENT)
    assert (tmp_path / "leaderboard.md").exists() and f"{game}, 3 players" in output_text(nb)
    assert len(images(nb)) == 4
