"""``gemenvs-train`` on bad input: one ``gemenvs-train: error: ...`` line on stderr, exit status 2,
no traceback, and no run folder made. Also the per-game config defaults and the shipped configs."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("yaml")

from gemenvs.agents.registry import baseline_names  # noqa: E402
from gemenvs.training.cli import main  # noqa: E402
from gemenvs.training.config import TrainConfig, load_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "megagem" / "selfplay_sb3.yaml"  # the SB3 path's config


def run_cli(capsys, *args: str) -> tuple[int, str]:
    """Exit status and stderr of ``gemenvs-train args``."""
    code = main([str(a) for a in args])
    return code, capsys.readouterr().err


def assert_one_line_error(code: int, err: str, *parts: str) -> None:
    """Status 2 and exactly one error line containing every part (no traceback)."""
    assert code == 2, err
    assert err.startswith("gemenvs-train: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for part in parts:
        assert part in err, (part, err)


@pytest.mark.parametrize("override, message", [
    ("ppo.gamma=1.5", "ppo.gamma must be in [0, 1]; got 1.5"),
    ("ppo.gamma=-0.1", "ppo.gamma must be in [0, 1]; got -0.1"),
    ("ppo.gae_lambda=2", "ppo.gae_lambda must be in [0, 1]; got 2.0"),
    ("ppo.clip_range=0", "ppo.clip_range must be greater than 0; got 0.0"),
    ("ppo.ent_coef=-0.01", "ppo.ent_coef must be at least 0; got -0.01"),
    ("ppo.vf_coef=-1", "ppo.vf_coef must be at least 0; got -1.0"),
    ("ppo.max_grad_norm=0", "ppo.max_grad_norm must be greater than 0; got 0.0"),
    ("ppo.target_kl=-0.5", "ppo.target_kl must be greater than 0 or null; got -0.5"),
    ("ppo.learning_rate=0", "ppo.learning_rate must be greater than 0; got 0.0"),
    ("ppo.learning_rate=.inf", "ppo.learning_rate must be a finite number; got inf"),
    ("ppo.n_epochs=0", "ppo.n_epochs must be at least 1; got 0"),
    ("ppo.n_steps=0", "ppo.n_steps must be at least 1; got 0"),
    ("ppo.batch_size=1", "ppo.batch_size must be at least 2; got 1"),
    ("ppo.batch_size=300", "ppo.batch_size (300) must divide one rollout, ppo.n_steps * n_envs = 32 * 64 = 2048"),
    ("ppo.batch_size=4096", "ppo.batch_size (4096) must divide one rollout"),
    ("ppo.net_arch=[64, 0]", "ppo.net_arch[1] must be a positive layer size; got 0"),
    ("ppo.net_arch=[64, 1.5]", "ppo.net_arch[1] must be an integer; got 1.5"),
    ("ppo.activation=gelu", "ppo.activation must be one of 'tanh', 'relu'; got 'gelu'"),
    ("pool.priority_power=-1", "pool.priority_power must be at least 0; got -1.0"),
    ("pool.max_snapshots=0", "pool.max_snapshots must be at least 1; got 0"),
    ("pool.window=0", "pool.window must be at least 1; got 0"),
    ("pool.snapshot_every=-5", "pool.snapshot_every must be at least 0; got -5"),
    ("pool.baseline_share=-0.1", "pool.baseline_share must be in [0, 1] or null; got -0.1"),
    ("seed=-1", "seed must be at least 0; got -1"),
    ("total_timesteps=0", "total_timesteps must be at least 1; got 0"),
    ("n_envs=0", "n_envs must be at least 1; got 0"),
    ("checkpoint_every=-1", "checkpoint_every must be at least 0; got -1"),
    ("eval.games=0", "eval.games must be at least 1; got 0"),
    ("eval.workers=0", "eval.workers must be at least 1; got 0"),
    ("eval.best_by=champion", "eval.best_by must be 'mean', one of eval.opponents"),
    ("eval.best_by=[heuristic,champion]", "eval.best_by as a list must name distinct opponents of eval.opponents"),
    ("eval.best_by=[]", "eval.best_by as a list must name distinct opponents"),
    ("eval.best_by=[tuned,tuned]", "eval.best_by as a list must name distinct opponents"),
    ("env.learner_seat=true", "env.learner_seat must be int or null; got True"),
    ("env.learner_seat=4", "env.learner_seat must be in 0..3 or null; got 4"),
    ("overwrite=3", "overwrite must be true or false; got 3"),
    ("ppo.clip_rnage=0.1", "unknown config key 'ppo.clip_rnage' (did you mean 'clip_range'?)"),
    ("ppo=3", "ppo must be a mapping; got 3"),
    ("n_envs", "one CONFIG file at most"),
])
def test_bad_values_are_one_line_errors_before_any_run_folder(tmp_path, capsys, override, message):
    runs = tmp_path / "runs"
    code, err = run_cli(capsys, CONFIG, f"run_root={runs}", override)
    if message == "one CONFIG file at most":  # an argparse usage error: usage line, then the error line
        assert code == 2 and err.rstrip().endswith("error: one CONFIG file at most; got ['" + str(CONFIG) + "', 'n_envs']")
    else:
        assert_one_line_error(code, err, message)
    assert not runs.exists()


def test_config_file_problems(tmp_path, capsys):
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes("name: r\u00e9sum\u00e9\n".encode("latin-1"))
    assert_one_line_error(*run_cli(capsys, latin1), f"{latin1} is not UTF-8 text")
    broken = tmp_path / "broken.yaml"
    broken.write_text("ppo: {learning_rate: 0.1\n")
    assert_one_line_error(*run_cli(capsys, broken), f"{broken} is not valid YAML: ")
    listed = tmp_path / "listed.yaml"
    listed.write_text("- 1\n- 2\n")
    assert_one_line_error(*run_cli(capsys, listed), "the config must be a mapping; got [1, 2]")
    assert_one_line_error(*run_cli(capsys, tmp_path / "absent.yaml"), f"no config file at {tmp_path / 'absent.yaml'}")
    assert_one_line_error(*run_cli(capsys, CONFIG, "ppo.net_arch=[1"), "cannot parse the value of ppo.net_arch")
    code, err = run_cli(capsys)
    assert code == 2 and "give a CONFIG file" in err


def test_resume_problems(tmp_path, capsys):
    from gemenvs.training.checkpoint import RUN_MARKER

    assert_one_line_error(*run_cli(capsys, "--resume", tmp_path / "nowhere"), "no run or checkpoint folder at")
    run = tmp_path / "run"
    ckpt = run / "checkpoints" / "step_000000100"
    ckpt.mkdir(parents=True)
    assert_one_line_error(*run_cli(capsys, "--resume", run), f"{run} is not a gemenvs-train run folder")
    (run / RUN_MARKER).write_text("")
    assert_one_line_error(*run_cli(capsys, "--resume", run), f"no checkpoint in {run}")
    (ckpt / "model.zip").write_bytes(b"PK\x03\x04 truncated, not a zip")
    assert_one_line_error(*run_cli(capsys, "--resume", run), f"{ckpt / 'config.yaml'} is missing")
    (ckpt / "config.yaml").write_text("ppo: [unclosed\n")
    assert_one_line_error(*run_cli(capsys, "--resume", run), f"{ckpt / 'config.yaml'} is not valid YAML")
    (ckpt / "config.yaml").write_text("ppo: {gamma: 7}\n")
    assert_one_line_error(*run_cli(capsys, "--resume", run), f"{ckpt / 'config.yaml'}: ppo.gamma must be in [0, 1]")
    (ckpt / "config.yaml").write_text(f"run_root: {tmp_path}\nname: run\n")
    assert_one_line_error(*run_cli(capsys, "--resume", run, "ppo.gamma=7"), "ppo.gamma must be in [0, 1]")
    assert_one_line_error(*run_cli(capsys, "--resume", run), f"{ckpt / 'model.zip'} is not a zip archive")
    with zipfile.ZipFile(ckpt / "model.zip", "w") as z:
        z.writestr("data", b"\xff\xfe not json")
    assert_one_line_error(*run_cli(capsys, "--resume", run), f"{ckpt / 'model.zip'} could not be read as a saved "
                                                             f"MaskablePPO model (UnicodeDecodeError")
    with zipfile.ZipFile(ckpt / "model.zip", "w") as z:
        z.writestr("data", "{}")
        z.writestr("policy.pth", b"garbage")
    assert_one_line_error(*run_cli(capsys, "--resume", run), "policy.pth is not a plain state dict of tensors")
    assert sorted(p.name for p in run.iterdir()) == [RUN_MARKER, "checkpoints"], "nothing was written"


def test_resume_with_another_network_is_a_clear_error(tmp_path, capsys):
    from test_security import make_checkpoint, make_model

    model, cfg = make_model(tmp_path, ["name=run"])
    run = make_checkpoint(tmp_path, model, cfg)
    code, err = run_cli(capsys, "--resume", run, "ppo.net_arch=[8]")
    assert_one_line_error(code, err, "model.zip does not fit the network of the config (ppo.net_arch")


# ----------------------------------------------------------------------------- defaults per game

def test_defaults_follow_the_game():
    assert TrainConfig().name is None and TrainConfig().env.options == {}
    assert TrainConfig().pool.baselines is None and TrainConfig().eval.opponents is None
    mega = load_config(None)
    assert mega.name == "megagem_selfplay" and mega.env.options == {}
    assert mega.pool.baselines == mega.eval.opponents == baseline_names("megagem") == ["random", "truthful", "heuristic", "tuned"]
    gem = load_config(None, ["env.id=gemenvs/GEM-v0"])
    assert gem.name == "gem_selfplay" and gem.env.options == {}
    assert gem.pool.baselines == gem.eval.opponents == baseline_names("gem") == ["random", "greedy"]
    assert load_config(None, ["env.id=gemenvs/GEM-v0", "eval.best_by=greedy"]).eval.best_by == "greedy"
    pair = load_config(None, ["eval.best_by=[heuristic, tuned]"]).eval
    assert pair.best_by == ["heuristic", "tuned"]
    rates = {"random": 1.0, "truthful": 0.9, "heuristic": 0.5, "tuned": 0.3}
    assert pair.best_score(rates) == pytest.approx(0.4)
    assert load_config(None, ["eval.best_by=tuned"]).eval.best_score(rates) == 0.3
    assert load_config(None).eval.best_score(rates) == pytest.approx(0.675)
    named = load_config(None, ["name=mine", "pool.baselines=[random]"])
    assert named.name == "mine" and named.pool.baselines == ["random"] and named.eval.opponents == baseline_names("megagem")


@pytest.mark.parametrize("path, expected", [
    ("configs/megagem/selfplay.yaml", {"name": "megagem_selfplay", "options": {"num_players": 4, "value_chart": "random"},
                                       "baselines": ["heuristic", "tuned"],
                                       "opponents": ["random", "truthful", "heuristic", "tuned"]}),
    ("configs/megagem/selfplay_sb3.yaml", {"name": "megagem_selfplay_sb3",
                                           "options": {"num_players": 4, "value_chart": "random"},
                                           "baselines": ["heuristic", "tuned"],
                                           "opponents": ["random", "truthful", "heuristic", "tuned"]}),
    ("configs/megagem/selfplay_long.yaml", {"name": "megagem_selfplay_long",
                                            "options": {"num_players": 4, "value_chart": "random"},
                                            "baselines": ["heuristic", "tuned"],
                                            "opponents": ["random", "truthful", "heuristic", "tuned"]}),
    ("configs/gem/selfplay.yaml", {"name": "gem_selfplay", "options": {"num_players": 3},
                                   "baselines": ["random", "greedy"], "opponents": ["random", "greedy"]}),
    ("configs/gemjam/selfplay.yaml", {"name": "gemjam_selfplay", "options": {"num_players": 3},
                                      "baselines": ["random", "rule"], "opponents": ["random", "rule"]}),
    ("configs/gemjam/selfplay_policy_only.yaml", {"name": "gemjam_selfplay_policy_only",
                                                  "options": {"num_players": 3}, "baselines": ["random", "rule"],
                                                  "opponents": ["random", "rule"]}),
])
def test_shipped_configs_load_unchanged(path, expected):
    cfg = load_config(ROOT / path)
    assert cfg.name == expected["name"] and cfg.env.options == expected["options"]
    assert cfg.pool.baselines == expected["baselines"] and cfg.eval.opponents == expected["opponents"]
    assert (cfg.ppo.n_steps * cfg.n_envs) % cfg.ppo.batch_size == 0
