"""The game-independent core: observation specs, reward schemes, option checks, registration."""
import numpy as np
import pytest

import gemenvs
from gemenvs.core.engine import check_bool, check_choice, check_int
from gemenvs.core.rewards import terminal_rewards
from gemenvs.core.spec import ObservationSpec


def test_spec_slices_are_contiguous_and_decode_in_game_units():
    sp = ObservationSpec()
    sp.add("a", 2, "first", scale=10)
    sp.add("b", (2, 3), "second")
    assert [s.offset for s in sp.slices] == [0, 2]
    assert sp.size == 8
    obs = np.arange(8, dtype=np.float32) / 10
    dec = sp.decode(obs)
    np.testing.assert_allclose(dec["a"], [0.0, 1.0], atol=1e-6)
    assert dec["b"].shape == (2, 3)
    np.testing.assert_allclose(sp.view(obs, "b").ravel(), obs[2:])
    with pytest.raises(ValueError, match="shape"):
        sp.decode(np.zeros(7))
    with pytest.raises(KeyError, match="no observation slice named 'c'"):
        sp["c"]
    with pytest.raises(ValueError, match="duplicate"):
        sp.add("a", 1, "again")
    assert "| 2 | 6 | 2x3 | `b` | second | 1 |" in sp.markdown_table()


@pytest.mark.parametrize(
    "mode, scores, expected",
    [
        ("win", [10, 30, 30, 5], [-1, 1, 1, -1]),
        ("score", [10, -20, 30], [0.1, -0.2, 0.3]),
        ("rank", [10, 30, 20], [-1, 1, 0]),
        ("rank", [30, 30, 10, 0], [2 / 3, 2 / 3, -1 / 3, -1]),  # tied firsts share mean rank 0.5
        ("margin", [10, 30, 20], [-0.2, 0.1, -0.1]),
    ],
)
def test_terminal_rewards(mode, scores, expected):
    np.testing.assert_allclose(terminal_rewards(mode, scores, 100.0), expected)


def test_option_checks_name_the_option():
    with pytest.raises(ValueError, match="colour must be one of 'red', 'blue'; got 'green'"):
        check_choice("colour", "green", ("red", "blue"))
    with pytest.raises(ValueError, match=r"num_players must be an integer in 3..5; got 7"):
        check_int("num_players", 7, 3, 5)
    with pytest.raises(ValueError, match="num_players"):
        check_int("num_players", True, 0, 5)
    with pytest.raises(ValueError, match="public_bids must be True or False"):
        check_bool("public_bids", "yes")


def test_every_environment_is_registered_with_pettingzoo():
    import pettingzoo

    for e in gemenvs.entries():
        assert e.env_id in pettingzoo.aec_registry
        assert e.env_id in pettingzoo.parallel_registry


def test_reward_and_illegal_options_are_validated():
    from gemenvs import megagem_v0

    with pytest.raises(ValueError, match="reward must be one of"):
        megagem_v0.env(reward="points")
    with pytest.raises(ValueError, match="illegal_action must be one of"):
        megagem_v0.env(illegal_action="ignore")
    with pytest.raises(ValueError, match="render_mode must be one of"):
        megagem_v0.env(render_mode="rgb")


def test_rank_keys_break_score_ties_for_win_and_rank():
    # equal scores, the second player wins the rulebook's tiebreak (e.g. GEM: more gems)
    scores, keys = [10, 10, 4], [(10, 3), (10, 5), (4, 9)]
    assert terminal_rewards("win", scores, 1.0, keys) == [-1.0, 1.0, -1.0]
    assert terminal_rewards("rank", scores, 1.0, keys) == [0.0, 1.0, -1.0]
    assert terminal_rewards("score", scores, 1.0, keys) == [10.0, 10.0, 4.0]


def test_import_registers_gymnasium_ids_without_loading_torch():
    import subprocess
    import sys

    code = (
        "import sys, gemenvs, gymnasium\n"
        "assert 'torch' not in sys.modules and 'stable_baselines3' not in sys.modules\n"
        "for e in gemenvs.entries():\n"
        "    assert e.env_id in gymnasium.registry, e.env_id\n"
        "env = gymnasium.make('gemenvs/MegaGem-v0', num_players=4, opponents='heuristic')\n"
        "obs, info = env.reset(seed=0)\n"
        "assert obs.shape == (244,) and info['action_mask'].any()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("module", ["gemenvs.gem_v0", "gemenvs.gemjam_v0"])
def test_bad_manifest_files_are_one_line_errors(module, tmp_path):
    import importlib

    make = importlib.import_module(module).env
    (tmp_path / "latin1.json").write_bytes(b'{"format": "\xe9"}')
    (tmp_path / "broken.json").write_text('{"format": ')
    cases = [(tmp_path / "missing.json", "cannot read"), (tmp_path / "latin1.json", "not UTF-8"),
             (tmp_path / "broken.json", "not valid JSON"), (42, "None, a path or a dict"),
             ({"format": "nope"}, "manifest")]
    for source, words in cases:
        with pytest.raises(ValueError, match=words) as err:
            make(manifest=source)
        assert "\n" not in str(err.value) and len(str(err.value)) < 200
