"""Nothing outside the named folder: the writers of gemenvs.files never follow a symbolic link planted at a name
or at a folder, never replace what the suite did not write, and say so in one line; saved games, policies,
animations and benchmark tables are written through them."""
from __future__ import annotations

import os

import numpy as np
import pytest

from gemenvs import files
from gemenvs.files import FileProblem, WriteRefused


@pytest.fixture
def victim(tmp_path):
    """A file outside the folder written to, that no writer may change."""
    path = tmp_path / "victim.txt"
    path.write_text("keep me")
    return path


def one_line(e: BaseException) -> str:
    text = str(e)
    assert "\n" not in text and text, text
    return text


# ----------------------------------------------------------------------------- the primitives

@pytest.fixture(params=["dir_fd", "paths"])
def mode(request, monkeypatch):
    """Both ways the writers look names up: relative to the open folder (POSIX), or by path elsewhere."""
    if request.param == "paths":
        monkeypatch.setattr(files, "_AT", False)
    return request.param


def test_write_file_replaces_whole_files_and_never_writes_through_a_link(tmp_path, victim, mode):
    out = tmp_path / "out"
    out.mkdir()
    assert files.write_file(out, "a.txt", "one") == out / "a.txt"
    files.write_file(out, "a.txt", b"two")
    assert (out / "a.txt").read_text() == "two" and sorted(os.listdir(out)) == ["a.txt"], "no temporary file left"
    (out / "link.txt").symlink_to(victim)
    with pytest.raises(WriteRefused, match="is a symbolic link; refusing to write through it") as e:
        files.write_file(out, "link.txt", "pwned")
    one_line(e.value)
    assert victim.read_text() == "keep me" and (out / "link.txt").is_symlink()
    (out / "dangling").symlink_to(tmp_path / "created_elsewhere")
    with pytest.raises(WriteRefused):
        files.write_file(out, "dangling", "x")
    assert not (tmp_path / "created_elsewhere").exists()
    (out / "sub").mkdir()
    with pytest.raises(WriteRefused, match="is a folder, not a file"):
        files.write_file(out, "sub", "x")
    os.mkfifo(out / "fifo")
    with pytest.raises(WriteRefused, match="FIFO"):
        files.write_file(out, "fifo", "x")
    with pytest.raises(WriteRefused, match="exists; refusing to overwrite it"):
        files.write_file(out, "a.txt", "three", overwrite=False)
    os.link(victim, out / "hard.txt")  # a hard link is replaced (a new file), never written into
    files.write_file(out, "hard.txt", "new")
    assert victim.read_text() == "keep me" and (out / "hard.txt").read_text() == "new"
    assert isinstance(e.value, FileProblem) and isinstance(e.value, FileExistsError)


def test_the_folder_written_into_is_never_a_link(tmp_path, victim, mode):
    (tmp_path / "linked").symlink_to(tmp_path)
    with pytest.raises(WriteRefused, match="is a symbolic link, not a folder"):
        files.write_file(tmp_path / "linked", "victim.txt", "pwned")
    with pytest.raises(WriteRefused, match="is a symbolic link where a folder goes"):
        files.make_folder(tmp_path / "linked")
    with pytest.raises(WriteRefused, match="is a symbolic link where a folder goes"):
        files.make_folder(tmp_path / "linked" / "deeper", root=tmp_path)
    with pytest.raises(WriteRefused, match="exists and is not a folder"):
        files.make_folder(victim)
    assert files.make_folder(tmp_path / "a" / "b", root=tmp_path).is_dir()
    assert victim.read_text() == "keep me" and not (tmp_path / "deeper").exists()


def test_open_append_refuses_links_and_shared_files(tmp_path, victim, mode):
    with files.open_append(tmp_path, "log.csv") as f:
        f.write("a\n")
    with files.open_append(tmp_path, "log.csv") as f:
        f.write("b\n")
    assert (tmp_path / "log.csv").read_text() == "a\nb\n"
    (tmp_path / "link.csv").symlink_to(victim)
    with pytest.raises(WriteRefused, match="symbolic link"):
        files.open_append(tmp_path, "link.csv")
    os.link(victim, tmp_path / "hard.csv")
    with pytest.raises(WriteRefused, match="other hard link"):
        files.open_append(tmp_path, "hard.csv")
    assert victim.read_text() == "keep me"


def test_owned_folders_need_their_marker_or_an_explicit_overwrite(tmp_path):
    mine = tmp_path / "new"
    assert files.owned_folder(mine, ".mark", "made here\n") is True and (mine / ".mark").is_file()
    (mine / "result.txt").write_text("mine")
    assert files.owned_folder(mine, ".mark", "made here\n") is False  # marked: taken as it is
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "summary.json").write_text("the user's")
    with pytest.raises(WriteRefused, match="is not empty and has no .mark file, so it is not a folder this command "
                                           "made; pick one") as e:
        files.owned_folder(theirs, ".mark", "x", hint="pick one")
    one_line(e.value)
    assert sorted(os.listdir(theirs)) == ["summary.json"]
    assert files.owned_folder(theirs, ".mark", "x", overwrite=True) is False and (theirs / ".mark").is_file()
    (tmp_path / "link").symlink_to(mine)
    with pytest.raises(WriteRefused, match="symbolic link"):
        files.owned_folder(tmp_path / "link", ".mark", "x", overwrite=True)


def test_atomic_folders_appear_complete_or_not_at_all(tmp_path, victim, mode):
    with files.atomic_folder(tmp_path, "ck") as tmp:
        assert files.is_temp_name(tmp.name) and tmp.parent == tmp_path
        files.write_file(tmp, "a", "1")
        assert not (tmp_path / "ck").exists()
    assert (tmp_path / "ck" / "a").read_text() == "1"
    with files.atomic_folder(tmp_path, "ck") as tmp:  # an earlier folder of that name is replaced whole
        files.write_file(tmp, "b", "2")
    assert sorted(os.listdir(tmp_path / "ck")) == ["b"]
    with pytest.raises(RuntimeError):
        with files.atomic_folder(tmp_path, "ck") as tmp:
            files.write_file(tmp, "c", "3")
            raise RuntimeError("stop")
    assert sorted(os.listdir(tmp_path / "ck")) == ["b"] and not [n for n in os.listdir(tmp_path) if n.startswith(".")]
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "precious").write_text("keep")
    (tmp_path / "ln").symlink_to(tmp_path / "target")
    with pytest.raises(WriteRefused, match="ln is a symbolic link, not a folder this command wrote"):
        with files.atomic_folder(tmp_path, "ln") as tmp:
            files.write_file(tmp, "x", "y")
    assert sorted(os.listdir(tmp_path / "target")) == ["precious"] and (tmp_path / "ln").is_symlink()
    with pytest.raises(WriteRefused, match="exists; refusing to replace it"):
        with files.atomic_folder(tmp_path, "ck", replace=False):
            pass


# ----------------------------------------------------------------------------- saved games, policies, pictures

def finished_megagem(seed: int = 3):
    from gemenvs.arena.match import play_engine_game
    from gemenvs.agents.random_agent import RandomAgent
    from gemenvs.megagem.game import MegaGem

    game = MegaGem(num_players=3)
    return game, play_engine_game(game, [RandomAgent(num_actions=game.num_actions, seed=p) for p in range(3)], seed)


def test_save_game_never_writes_through_a_link_nor_over_another_file(tmp_path, victim):
    from gemenvs.recording import load_game, save_game

    game, state = finished_megagem()
    (tmp_path / "game.jsonl").symlink_to(victim)
    with pytest.raises(WriteRefused, match="game.jsonl is a symbolic link") as e:
        save_game(tmp_path / "game.jsonl", game, state)
    one_line(e.value)
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    with pytest.raises(WriteRefused, match="exists and is not a saved game; refusing to overwrite it"):
        save_game(notes, game, state)
    assert victim.read_text() == "keep me" and notes.read_text() == "my notes"
    path = save_game(tmp_path / "new.jsonl", game, state)
    save_game(path, game, state)  # a saved game may be replaced by another
    assert load_game(path).seed == 3 and sorted(p.name for p in tmp_path.iterdir()) == [
        "game.jsonl", "new.jsonl", "notes.txt", "victim.txt"]


def tiny_policy():
    from gemenvs.agents.policy import PolicyAgent

    return PolicyAgent([(np.zeros((4, 3), np.float32), np.zeros(3, np.float32))])


def test_policy_save_never_writes_through_a_link_nor_over_another_file(tmp_path, victim):
    from gemenvs.agents.policy import PolicyAgent

    agent = tiny_policy()
    (tmp_path / "p.npz.tmp.npz").symlink_to(victim)  # the temporary name an earlier version wrote through
    agent.save(tmp_path / "p.npz")
    assert victim.read_text() == "keep me" and PolicyAgent.load(tmp_path / "p.npz").layers[0][0].shape == (4, 3)
    before = (tmp_path / "p.npz").read_bytes()
    agent.save(tmp_path / "p.npz")  # a policy may be replaced by a policy, with the same bytes
    assert (tmp_path / "p.npz").read_bytes() == before
    (tmp_path / "link.npz").symlink_to(victim)
    with pytest.raises(WriteRefused, match="link.npz is a symbolic link"):
        agent.save(tmp_path / "link.npz")
    np.savez(tmp_path / "data.npz", x=np.arange(3))
    with pytest.raises(WriteRefused, match="data.npz exists and is not a policy file"):
        agent.save(tmp_path / "data.npz")
    assert victim.read_text() == "keep me" and np.load(tmp_path / "data.npz")["x"].tolist() == [0, 1, 2]


def test_write_animation_never_writes_through_a_link_nor_over_another_file(tmp_path, victim):
    pytest.importorskip("PIL")
    from gemenvs.pictures import write_animation

    frames = [np.full((8, 8, 3), k * 40, np.uint8) for k in range(3)]
    (tmp_path / "game.gif").symlink_to(victim)
    with pytest.raises(WriteRefused, match="game.gif is a symbolic link"):
        write_animation(frames, tmp_path / "game.gif", progress=False)
    (tmp_path / "essay.gif").write_text("not a picture")
    with pytest.raises(WriteRefused, match="essay.gif exists and is not a GIF file"):
        write_animation(frames, tmp_path / "essay.gif", progress=False)
    assert victim.read_text() == "keep me" and (tmp_path / "essay.gif").read_text() == "not a picture"
    made = write_animation(frames, tmp_path / "ok.gif", progress=False)
    assert made.frames == 3 and (tmp_path / "ok.gif").read_bytes()[:4] == b"GIF8"
    assert write_animation(frames[:2], tmp_path / "ok.gif", progress=False).frames == 2  # a GIF replaces a GIF


# ----------------------------------------------------------------------------- benchmark tables

def test_benchmark_tables_stay_in_their_own_folder(tmp_path, victim, capsys):
    from gemenvs.arena import benchmark as B

    argv = ["gem", "random", "greedy", "--deals", "1", "--no-progress", "--out"]
    out = tmp_path / "bench"
    assert B.main([*argv, str(out)]) == 0 and (out / B.BENCHMARK_MARKER).is_file()
    (out / "gem-bidding-v1.md").unlink()
    (out / "gem-bidding-v1.md").symlink_to(victim)
    capsys.readouterr()
    assert B.main([*argv, str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "gem-bidding-v1.md is a symbolic link" in err and victim.read_text() == "keep me"
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "gem-bidding-v1.csv").write_text("the user's own table")
    assert B.main([*argv, str(theirs)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"has no {B.BENCHMARK_MARKER} file" in err and "--overwrite" in err
    assert (theirs / "gem-bidding-v1.csv").read_text() == "the user's own table"
    assert B.main([*argv, str(theirs), "--overwrite"]) == 0
    assert "greedy" in (theirs / "gem-bidding-v1.csv").read_text()
