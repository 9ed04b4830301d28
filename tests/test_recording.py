"""Saved games (gemenvs.recording): round trips for every game, strict one-line errors on corrupt
files, terminal replays from a seat and from the table, and games saved by matches and evaluate()."""
from __future__ import annotations

import io
import json
import re
import sys

import pytest

import gemenvs
from gemenvs.arena.match import play_engine_game, run_match
from gemenvs.agents.random_agent import RandomAgent
from gemenvs.cli import main
from gemenvs.gem.game import Gem
from gemenvs.gemjam.game import GemJam
from gemenvs.megagem.game import MegaGem
from gemenvs.play import Screen, replay_saved_game
from gemenvs.recording import FORMAT, RecordingError, SavedGame, load_game, parse_game, save_game
from gemenvs.arena.single_agent import make_aec_env

#: a short game of each title: (env name, game)
SHORT = {
    "megagem_v0": lambda: MegaGem(num_players=3),
    "gem_v0": lambda: Gem(num_players=2),
    "gemjam_v0": lambda: GemJam(num_players=2, max_rounds=2),
}


def finished(env_name: str, seed: int = 5):
    """A finished game of ``env_name`` between random agents: (game, final state)."""
    game = SHORT[env_name]()
    agents = [RandomAgent(num_actions=game.num_actions) for _ in range(game.num_players)]
    return game, play_engine_game(game, agents, seed)


@pytest.fixture(scope="module")
def megagem_file(tmp_path_factory):
    """A saved MegaGem game and its final state."""
    game, state = finished("megagem_v0")
    path = tmp_path_factory.mktemp("saved") / "megagem.jsonl"
    save_game(path, game, state, players=["me", "random", "random"])
    return path, state


@pytest.mark.parametrize("entry", gemenvs.entries(), ids=lambda e: e.env_name)
def test_round_trip_replays_to_the_same_end(entry, tmp_path):
    """Every registered game (the fewest seats, default options) saves and replays."""
    env_name = entry.env_name
    if env_name in SHORT:
        game, state = finished(env_name)
    else:
        game = entry.game_class(num_players=min(entry.player_counts))
        state = play_engine_game(game, [RandomAgent(num_actions=game.num_actions) for _ in range(game.num_players)], 5)
    path = save_game(tmp_path / "g.jsonl", game, state, players=[f"bot{p}" for p in range(game.num_players)])
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["format"] == FORMAT and header["version"] == 1 and header["env"] == env_name
    assert header["seed"] == state.to_dict()["seed"] and header["options"] == game.options()
    assert [json.loads(x) for x in lines[1:-1]] == state.log
    saved = load_game(path)
    assert isinstance(saved, SavedGame) and saved.log == state.log and saved.players[0] == "bot0"
    final = saved.replay()
    assert final == state
    assert saved.result["scores"] == list(game.results(state).scores)
    assert saved.result["winners"] == list(game.results(state).winners)
    states = list(saved.states())
    assert len(states) == len(state.log) and states[-1] == state
    assert states[0].log == state.log[:1]


def test_unfinished_games_are_not_saved(tmp_path):
    game = MegaGem(num_players=3)
    with pytest.raises(ValueError, match="not over"):
        save_game(tmp_path / "x.jsonl", game, game.new_state(1))
    assert not (tmp_path / "x.jsonl").exists()


def _corrupt(path, edit):
    """The lines of a saved game after ``edit(lines)`` (a list of parsed lines, edited in place)."""
    data = [json.loads(x) for x in path.read_text().splitlines()]
    edit(data)
    return "\n".join(json.dumps(x) for x in data) + "\n"


def _set(index, key, value):
    def edit(data):
        data[index][key] = value
    return edit


def _first_choice(data):
    """Index of the first log line that is not forced."""
    return next(k for k in range(1, len(data) - 1) if data[k][2] == 0)


CORRUPTIONS = {
    "format": (_set(0, "format", "chess-pgn"), 1, "not a saved gemenvs game"),
    "version": (_set(0, "version", 2), 1, "version 2 is not supported"),
    "env": (_set(0, "env", "os_v0"), 1, "unknown env 'os_v0'"),
    "option": (_set(0, "options", {"num_players": 9}), 1, "options: num_players"),
    "unknown option": (_set(0, "options", {"colour": "red"}), 1, "options:"),
    "seed": (_set(0, "seed", -1), 1, "seed"),
    "players": (_set(0, "players", ["a"]), 1, "1 player names for a 3-player game"),
    "extra key": (_set(0, "code", "import os"), 1, "unknown ['code']"),
    "manifest path": (_set(0, "options", {"manifest": "/etc/passwd"}), 1, "inline"),
    "illegal": (lambda d: d.__setitem__(_first_choice(d), [d[_first_choice(d)][0], 95, 0]), None, "illegal decision"),
    "seat": (lambda d: d.__setitem__(1, [7, 0, 0]), 2, "no seat 7"),
    "bool": (lambda d: d.__setitem__(1, [True, 0, 0]), 2, "expected a decision"),
    "float": (lambda d: d.__setitem__(1, [0, 1.0, 0]), 2, "expected a decision"),
    "forced flag": (lambda d: d.__setitem__(1, d[1][:2] + [1 - d[1][2]]), 2, "forced"),
    "truncated": (lambda d: d.__delitem__(slice(3, -1)), 4, "ends before the game does"),
    "header only": (lambda d: d.__delitem__(slice(1, None)), 2, "the file ends after the header"),
    "no result": (lambda d: d.pop(), None, "the last line must be"),
    "wrong score": (lambda d: d[-1]["result"]["scores"].__setitem__(0, 999), None, "are not the replay's"),
    "wrong winner": (lambda d: d[-1]["result"].__setitem__("winners", [0, 1, 2]), None, "winners"),
}


@pytest.mark.parametrize("case", sorted(CORRUPTIONS))
def test_corrupt_files_give_one_line_errors_naming_the_line(case, megagem_file):
    edit, line, words = CORRUPTIONS[case]
    text = _corrupt(megagem_file[0], edit)
    with pytest.raises(RecordingError) as err:
        parse_game(text, "bad.jsonl")
    message = str(err.value)
    assert "\n" not in message and words in message, message
    assert message.startswith("bad.jsonl: line " if line is None else f"bad.jsonl: line {line}: "), message


@pytest.mark.parametrize("text,words", [
    ("", "empty file"),
    ("not json\n", "line 1: not JSON"),
    ('{"format": "gemenvs-game", "version": 1, "seed": NaN}\n[0, 1, 0]\n', "line 1: not JSON"),
    ('{"format": "gemenvs-game"}\n', "line 1: format version None is not supported"),
    ("[1, 2, 3]\n{}\n", "line 1: not a saved gemenvs game"),
])
def test_malformed_text(text, words):
    with pytest.raises(RecordingError, match=words):
        parse_game(text, "x.jsonl")


def test_unreadable_files(tmp_path):
    with pytest.raises(RecordingError, match="cannot read the file"):
        load_game(tmp_path / "missing.jsonl")
    (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(RecordingError, match="cannot read the file"):
        load_game(tmp_path / "bin.jsonl")
    with pytest.raises(RecordingError, match="cannot read the file"):
        load_game(tmp_path)


def test_blank_line_inside_and_at_the_end(megagem_file):
    text = megagem_file[0].read_text()
    assert parse_game(text + "\n\n").log == megagem_file[1].log  # trailing blank lines are fine
    lines = text.splitlines()
    with pytest.raises(RecordingError, match="line 3: empty line"):
        parse_game("\n".join(lines[:2] + [""] + lines[2:]))


def test_cli_replay_errors_are_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "gemenvs-game", "version": 1}\n[0, 0, 0]\n')
    assert main(["replay", str(bad)], stdout=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gemenvs: error: ") and "line 1" in err
    assert main(["replay", str(tmp_path / "nothing.jsonl")], stdout=io.StringIO()) == 2
    assert "cannot read the file" in capsys.readouterr().err


def _replay_text(path, args, stdin=""):
    out = io.StringIO()
    assert main(["replay", str(path), *args], stdin=io.StringIO(stdin), stdout=out) == 0
    return out.getvalue()


def test_replay_from_a_seat_shows_only_that_seat(megagem_file):
    path, state = megagem_file
    seat0 = _replay_text(path, ["--seat", "0"])
    table = _replay_text(path, ["--table"])
    assert seat0.count("== step ") == len(state.log) == table.count("== step ")
    assert "player_0's hand" in seat0 and "player_1's hand" not in seat0 and "player_2's hand" not in seat0
    assert "a hidden decision" in seat0 and "a hidden decision" not in table  # sealed bids of the others
    assert "Seen from player_0's view" in seat0 and "Seen from the whole table" in table
    scores = MegaGem(num_players=3).results(state).scores
    for text in (seat0, table):
        assert "== result ==" in text
        assert all(f"{s:>7g}" in text for s in scores)


def test_replay_of_gemjam_shows_the_game_log(tmp_path):
    game, state = finished("gemjam_v0", seed=3)
    path = save_game(tmp_path / "gj.jsonl", game, state)
    text = _replay_text(path, ["--seat", "1"])
    assert "round 1: player_0's turn" in text and "== result ==" in text
    assert len(game.game_log(state, 1)) > 0
    assert all(line in text for line in game.game_log(state, 1))
    hidden = set(game.game_log(state, None)) - set(game.game_log(state, 1))
    assert not any(f"\n{line}\n" in text for line in hidden)


def test_interactive_replay_steps_skips_and_quits(megagem_file):
    path, state = megagem_file
    saved = load_game(path)
    out = io.StringIO()
    # Enter twice, skip 3, a bad answer, then quit
    screen = Screen(io.StringIO("\n\n3\nwhat\nq\n"), out, color=False, interactive=True)
    assert replay_saved_game(saved, 0, screen, pause=True) is False
    text = out.getvalue()
    assert re.findall(r"== step (\d+)/(\d+)", text) == [("1", str(len(state.log))), ("2", str(len(state.log))),
                                                       ("5", str(len(state.log)))]
    assert "press Enter for the next step" in text and "== result ==" not in text
    out = io.StringIO()
    screen = Screen(io.StringIO("e\n"), out, color=False, interactive=True)
    assert replay_saved_game(saved, None, screen, pause=True) is True
    assert out.getvalue().count("== step") == 1 and "== result ==" in out.getvalue()
    screen = Screen(io.StringIO(""), io.StringIO(), color=False, interactive=True)
    assert replay_saved_game(saved, None, screen, pause=True) is False  # end of input stops cleanly


def test_replay_seat_out_of_range(megagem_file, capsys):
    assert main(["replay", str(megagem_file[0]), "--seat", "3"], stdout=io.StringIO()) == 2
    assert "--seat must be in 0..2" in capsys.readouterr().err
    assert main(["play", "--replay", str(megagem_file[0]), "--seat", "1"], stdout=io.StringIO()) == 0


def test_run_match_saves_every_game(tmp_path):
    def env_fn():
        return make_aec_env("gemenvs/MegaGem-v0", num_players=3)
    game = MegaGem(num_players=3)
    agents = [RandomAgent(num_actions=game.num_actions, seed=k) for k in range(3)]
    result = run_match(env_fn, agents[0], agents[1:], games=3, seed=40, save_dir=tmp_path / "games")
    files = sorted((tmp_path / "games").iterdir())
    assert [f.name for f in files] == ["game_40.jsonl", "game_41.jsonl", "game_42.jsonl"]
    for g, f in enumerate(files):
        saved = load_game(f)
        assert saved.env == "megagem_v0" and saved.players == ["random"] * 3
        seat = g % 3  # the focal agent rotates through the seats
        assert saved.result["scores"][seat] == result.scores[g]


def test_evaluate_writes_loadable_files_per_opponent(tmp_path):
    from gemenvs.arena.evaluate import evaluate

    class Focal(RandomAgent):
        name = "focal"

    focal = Focal(num_actions=MegaGem(num_players=3).num_actions, seed=0)
    results = evaluate(focal, "gemenvs/MegaGem-v0", {"num_players": 3}, ["random", "heuristic"], games=3, seed=9,
                       save_dir=tmp_path / "eval")
    for opp in ("random", "heuristic"):
        files = sorted((tmp_path / "eval" / opp).glob("*.jsonl"))
        assert len(files) == results[opp].games == 3
        saved = [load_game(f) for f in files]
        assert [f.name for f in files] == ["game_10.jsonl", "game_11.jsonl", "game_9.jsonl"]
        assert all(sorted(s.players) == sorted(["focal", opp, opp]) for s in saved)
    assert sorted(p.name for p in (tmp_path / "eval").iterdir()) == ["heuristic", "random"]


def test_loading_runs_no_code(tmp_path):
    """A header that names a module outside the suite is refused before anything is imported."""
    game, state = finished("gem_v0")
    path = save_game(tmp_path / "g.jsonl", game, state)
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["env"] = "antigravity"
    text = "\n".join([json.dumps(header)] + lines[1:])
    with pytest.raises(RecordingError, match="unknown env 'antigravity'"):
        parse_game(text)
    assert "antigravity" not in sys.modules


def test_animation_without_pictures_is_a_one_line_error(megagem_file, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "gemenvs.pictures", None)  # as if the module could not be imported
    out = megagem_file[0].parent / "none.gif"
    assert main(["replay", str(megagem_file[0]), "--gif", str(out)], stdout=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err.startswith("gemenvs: error: animations need gemenvs.pictures") and err.count("\n") == 1
    assert not out.exists()


def test_animation_as_gif(tmp_path, capsys):
    pictures = pytest.importorskip("gemenvs.pictures")
    if not hasattr(pictures, "replay_frames"):
        pytest.skip("gemenvs.pictures has no replay_frames yet")
    pytest.importorskip("PIL")
    game, state = finished("gemjam_v0", seed=3)
    path = save_game(tmp_path / "gj.jsonl", game, state)
    out = tmp_path / "gj.gif"
    stdout = io.StringIO()
    assert main(["replay", str(path), "--seat", "0", "--gif", str(out)], stdout=stdout) == 0, capsys.readouterr().err
    said = stdout.getvalue()
    assert out.read_bytes()[:4] == b"GIF8" and f"wrote {out}: " in said
    assert re.search(r"\d+ frames \(1 start \+ \d+ decisions with a choice \+ 1 final-score frame", said), said
    assert main(["replay", str(path), "--gif", str(tmp_path / "gj.png")], stdout=io.StringIO()) == 2
    assert capsys.readouterr().err.count("\n") == 1
