"""A game is one entry: the registry, the tables read from the entries, the environments built for an
entry, the text picture of a game without a painter, and the toy game (tests/toy_game.py, registered by
tests/conftest.py) played through every tool: Gymnasium, PettingZoo, ``gemenvs play``, saved games and
their replay, rgb_array, a tournament, a search agent and a tiny SB3 run."""
from __future__ import annotations

import ast
import io
import json
import pickle
from pathlib import Path

import gymnasium
import numpy as np
import pettingzoo
import pytest

import gemenvs
from gemenvs import GameEntry, entries, entry, entry_of, gem_v0, gemjam_v0, megagem_v0
from gemenvs.core.entry import RANDOM_AGENT, TEXT_PAINTER, env_functions

import toy_game
from toy_game import SealedLots

ROOT = Path(__file__).resolve().parent.parent
TOY = toy_game.ENTRY
BUILTIN = [megagem_v0.ENTRY, gem_v0.ENTRY, gemjam_v0.ENTRY]


# ----------------------------------------------------------------------------- the registry


def test_the_suite_registers_its_three_games_and_the_tests_their_toy():
    assert [e.name for e in entries()][:3] == ["megagem", "gem", "gemjam"]
    assert TOY in entries()
    for e in entries():
        assert entry(e.name) is entry(e.env_name) is entry(e.env_id) is e
        assert entry_of(e.game_class) is e and entry_of(e.game_class(num_players=e.player_counts[0])) is e


def test_an_unknown_game_is_one_line_naming_the_known_games():
    with pytest.raises(ValueError) as err:
        entry("chess")
    text = str(err.value)
    assert "\n" not in text and text.startswith("unknown game 'chess'; known games: megagem, gem, gemjam")
    with pytest.raises(ValueError, match="no registered entry"):
        entry_of(object())


def test_registering_twice_is_harmless_and_a_clash_is_refused():
    assert gemenvs.register_game(TOY) is TOY
    clash = GameEntry(SealedLots, env_id="other/SealedLots-v0", title="Again")
    with pytest.raises(ValueError, match="name 'sealedlots' is already registered"):
        gemenvs.register_game(clash)
    with pytest.raises(TypeError, match="GameEntry"):
        gemenvs.register_game("toy_game:ENTRY")


@pytest.mark.parametrize("fields, words", [
    ({"env_id": "toy/SealedLots-v1"}, "the game's version"),
    ({"env_id": "SealedLots"}, "env_id must be"),
    ({"default_opponent": "grandmaster"}, "default_opponent 'grandmaster' is not a baseline"),
    ({"rollout_baseline": "nope"}, "rollout_baseline 'nope'"),
    ({"baselines": {"value": "toy_game.ValueBidder"}}, "must be 'module:attr'"),
    ({"state_families": ("deep",)}, "are not families"),
    ({"painter": "gemenvs.pictures:draw"}, "painter must be a module"),
    ({"player_counts": (0,)}, "player_counts"),
])
def test_entries_are_checked_when_declared(fields, words):
    with pytest.raises(ValueError, match=words):
        GameEntry(SealedLots, **{"env_id": "toy/SealedLots-v0", "title": "Sealed Lots", **fields})
    with pytest.raises(TypeError, match="subclass of gemenvs.core.Game"):
        GameEntry(dict, env_id="toy/X-v0", title="X")


def test_an_entry_fills_its_defaults_and_is_read_only():
    e = GameEntry(SealedLots, env_id="elsewhere/Lots-v0", title="Lots")
    assert e.env_name == "sealedlots_v0" and e.player_counts == SealedLots.player_counts
    assert dict(e.baselines) == {"random": RANDOM_AGENT} and e.default_opponent == "random"
    assert e.painter_module == TEXT_PAINTER and e.heuristic_baseline == "random"
    assert list(TOY.baselines) == ["random", "value"]  # "random" first, then the entry's own
    with pytest.raises(TypeError):
        TOY.baselines["mine"] = "x:y"
    with pytest.raises(AttributeError):
        TOY.title = "other"
    assert pickle.loads(pickle.dumps(TOY)) is TOY  # a registered entry pickles as its look-up
    copy = pickle.loads(pickle.dumps(e))
    assert copy == e and copy is not e


def test_every_table_is_read_from_the_entries():
    from gemenvs import cli, recording
    from gemenvs.agents import registry
    from gemenvs.play import game_title
    from gemenvs.arena import tournament

    assert cli.game_envs() == {e.name: e.env_id for e in entries()}
    for e in entries():
        assert registry.baseline_names(e.name) == list(e.baselines)
        assert registry.families(e.name) == dict(e.families)
        assert recording.game_class(e.env_name) is e.game_class
        assert tournament.make_raw_env(e.name, {}).metadata["name"] == e.env_name
        game = e.game_class(num_players=e.player_counts[0])
        assert game_title(game).startswith(e.title + " (") and recording.env_name_of(game) == e.env_name
    assert registry.reads_state("gemjam", "lookahead:8") and not registry.reads_state("megagem", "tuned_family:1")
    assert [e.default_opponent for e in BUILTIN] == ["heuristic", "greedy", "rule"]
    import gen_tables_loader

    gen = gen_tables_loader.load()
    assert gen.GAME_PAGES == {e.docs_page: e for e in BUILTIN}  # the toy has no page
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import throughput
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    labels = [label for label, _ in throughput.game_entries()]
    assert labels[:4] == ["MegaGem env()", "MegaGem parallel_env()", "GEM env()", "Gem Jam env()"]
    assert "Sealed Lots env()" in labels and "Sealed Lots parallel_env()" in labels


def test_the_core_imports_nothing_above_it():
    """gemenvs.core names the layers above it only in strings (entry points), never in an import."""
    above = ("gemenvs.pictures", "gemenvs.arena", "gemenvs.agents", "gemenvs.training", "gemenvs.megagem",
             "gemenvs.gem", "gemenvs.gemjam", "gemenvs.cli", "gemenvs.play")
    for path in sorted((ROOT / "gemenvs" / "core").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            bad = [n for n in names if n == "gemenvs" or any(n == a or n.startswith(a + ".") for a in above)]
            assert not bad, f"{path.name} imports {bad}"


# ----------------------------------------------------------------------------- the environments of an entry


def test_env_functions_are_built_once_and_named_by_the_entry():
    made = env_functions(TOY)
    assert env_functions(TOY) is made and TOY.env_functions() is made
    for e in BUILTIN:
        module = {"megagem_v0": megagem_v0, "gem_v0": gem_v0, "gemjam_v0": gemjam_v0}[e.env_name]
        assert module.raw_env is e.env_functions().raw_env and module.parallel_env is e.env_functions().parallel_env
        assert module.raw_env.game_class is e.game_class and module.raw_env.entry is e
    env = made.env(num_players=2)
    assert env.metadata["name"] == "sealedlots_v0" and str(env) == "sealedlots_v0"
    assert made.parallel_env(num_players=4).metadata["name"] == "sealedlots_v0"
    raw = megagem_v0.raw_env(num_players=3)
    raw.reset(seed=4)
    back = pickle.loads(pickle.dumps(raw))  # the class pickles by reference
    assert type(back) is type(raw) and back.game_state == raw.game_state


def test_the_toy_game_through_gymnasium_and_pettingzoo():
    env = gymnasium.make("toy/SealedLots-v0", num_players=3, opponents="value", learner_seat=1)
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    done, steps = False, 0
    while not done:
        obs, _reward, done, _truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        steps += 1
    assert steps == 3 and info["learner_seat"] == 1 and info["opponent"] == "value+value"
    aec = pettingzoo.make("aec", "toy/SealedLots-v0", num_players=4)
    aec.reset(seed=1)
    assert aec.possible_agents == [f"player_{i}" for i in range(4)]
    par = pettingzoo.make("parallel", "toy/SealedLots-v0", num_players=2, lots=2)
    obs, _ = par.reset(seed=1)
    assert all(o["action_mask"].any() for o in obs.values()), "every seat bids at once"
    par.step({a: 1 for a in par.agents})
    assert par.unwrapped.game_state.winners == [0] and par.unwrapped.game_state.prices == [1]  # a tie: the opener


# ----------------------------------------------------------------------------- the text picture


def test_a_game_without_a_painter_gets_its_text_render_as_a_fixed_size_picture():
    from gemenvs import pictures
    from gemenvs.pictures import text

    game = SealedLots(num_players=3)
    size = pictures.frame_size(game)
    assert size == text.size(game) and pictures.frame_size(SealedLots(num_players=3)) == size
    raw = TOY.env_functions().raw_env(num_players=3, render_mode="rgb_array")
    assert raw.render().shape == (*size, 3)  # before reset: a notice of the same size
    raw.reset(seed=2)
    frames, texts = [], []
    while not any(raw.terminations.values()):
        frames.append(raw.render())
        texts.append(raw.game.render(raw.game_state, raw.agent_name_mapping[raw.agent_selection]))
        raw.step(int(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"])[-1]))
    assert all(f.shape == (*size, 3) and f.dtype == np.uint8 for f in frames)
    for a, b, ta, tb in zip(frames, frames[1:], texts, texts[1:]):
        assert np.array_equal(a, b) == (ta == tb), "the picture changes exactly when the text does"
    s = raw.game_state
    assert np.array_equal(pictures.draw(game, s, 1), pictures.draw(game, s.copy(), 1)), "same state, same pixels"
    final = pictures.score_frame(raw.game, raw.game_state)
    assert final.shape == (*size, 3)
    table = text.scores(raw.game, raw.game_state)
    assert table.columns == ["player", "score", "lots", "coins_left"] and len(table.rows) == 3


def test_the_text_picture_hides_what_the_text_hides():
    from gemenvs import pictures

    game = SealedLots(num_players=3)
    s = game.new_state(5)
    game.apply(s, 0, 4)  # player_0's sealed bid
    rng = np.random.default_rng(1)
    other = game.resample_hidden(s, 1, rng)
    assert other.bids[0] != s.bids[0] or other.values != s.values
    assert np.array_equal(pictures.draw(game, s, 1), pictures.draw(game, other, 1))
    assert not np.array_equal(pictures.draw(game, s, 0), pictures.draw(game, s, 1))


def test_the_text_grid_cuts_long_renders_to_its_size():
    from gemenvs.pictures import text

    class Wordy(SealedLots):
        def render(self, state, viewer=None):
            lines = super().render(state, viewer)
            return lines if state.lot == 0 else lines + "\n" + "x" * 500 + "\n" * 200 + "end"

    game = Wordy(num_players=2)
    columns, rows = text.grid(game)
    assert text._fit(["x" * 500] + ["y"] * 300, columns, rows)[0].endswith("~")
    assert text._fit(["y"] * 300, columns, rows)[-1] == f"~ {300 - rows + 1} more lines"


# ----------------------------------------------------------------------------- the toy game in every tool


def test_gemenvs_play_the_toy_game_by_scripted_input_then_replay_it(tmp_path):
    from gemenvs.cli import main
    from gemenvs.recording import load_game

    path = tmp_path / "lots.jsonl"
    out = io.StringIO()
    code = main(["play", "sealedlots", "--players", "2", "--seed", "4", "--save", str(path)],
                stdin=io.StringIO("?\n99\n2\nbid 1\n0\n"), stdout=out)
    text = out.getvalue()
    assert code == 0, text
    assert "Sealed Lots (2 players)" in text and "player_1: value" in text  # the entry's title and default opponent
    assert "is not allowed now" in text  # 99 coins: more than the 8 the seat has
    saved = load_game(path)
    assert saved.env == "sealedlots_v0" and saved.players == ["human", "value"]
    assert [a for p, a, f in saved.log if p == 0] == [2, 1, 0]
    out = io.StringIO()
    assert main(["replay", str(path), "--no-pause"], stdout=out) == 0 and "result" in out.getvalue()
    gif = tmp_path / "lots.gif"
    assert main(["replay", str(path), "--gif", str(gif)], stdout=io.StringIO()) == 0
    assert gif.read_bytes()[:4] == b"GIF8"


def test_a_tournament_of_the_toy_game(tmp_path):
    from gemenvs.arena.tournament import main, make_spec, run_tournament

    spec, size = make_spec("sealedlots", ["random", "value", "ismcts:8"], games=6, options={"num_players": 3})
    rows, h2h, records = run_tournament(spec, progress=False)
    assert len(records) == spec.games == 2 * size and {r.agent for r in rows} == {"random", "value", "ismcts:8"}
    assert h2h.shape == (3, 3)
    out = tmp_path / "t"
    assert main(["--game", "sealedlots", "--players", "2", "--agents", "random", "value", "--games", "4",
                 "--out", str(out)]) == 0
    assert json.loads((out / "tournament.json").read_text())["game"] == "sealedlots"


def test_worker_processes_know_the_games_registered_in_this_one():
    """A pool's workers start from a fresh interpreter (spawn, forkserver): the registry goes with them."""
    from gemenvs.arena.tournament import make_spec, run_tournament

    spec, _ = make_spec("sealedlots", ["random", "value"], games=8, options={"num_players": 2})
    one, _, _ = run_tournament(spec, progress=False)
    two, _, _ = run_tournament(spec, progress=False, workers=2)
    assert [(r.agent, r.wins, r.games) for r in two] == [(r.agent, r.wins, r.games) for r in one]


def test_search_agents_use_the_entrys_rollout_baseline():
    from gemenvs.agents.search import _rollout_policy

    assert type(_rollout_policy(SealedLots(), "heuristic")).__name__ == "ValueBidder"
    assert type(_rollout_policy(gem_v0.ENTRY.game_class(), "heuristic")).__name__ == "GemGreedyAgent"


def test_a_tiny_sb3_run_of_the_toy_game(tmp_path):
    pytest.importorskip("sb3_contrib")
    from gemenvs.training.config import load_config
    from gemenvs.training.run import train

    cfg = load_config(None, [
        f"run_root={tmp_path}", "name=toy", "backend=sb3", "env.id=toy/SealedLots-v0", "env.options={}", "seed=1",
        "total_timesteps=512", "n_envs=2", "vec_env=subproc", "checkpoint_every=0", "progress_bar=false", "ppo.n_steps=256",
        "ppo.batch_size=128", "ppo.n_epochs=1", "ppo.net_arch=[16]", "pool.snapshot_every=0", "eval.every=0",
        "eval.final_games=4", "eval.workers=2", "pretrain.teacher=null"])
    assert cfg.pool.baselines == ["random", "value"]  # the entry's baselines
    run = train(cfg)
    results = json.loads((run / "results.json").read_text())["results"]
    assert set(results) == {"random", "value"} and (run / "final_model.zip").exists()
