"""Bounded reading: every loader refuses a non-regular file at once, bounds the size and nesting of
what it reads, and reports bad input in one line (saved games, policy models, configs, game options)."""
from __future__ import annotations

import io
import json
import os
import threading
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from gemenvs import recording
from gemenvs.arena.match import play_engine_game
from gemenvs.agents.random_agent import RandomAgent
from gemenvs.cli import main
from gemenvs.megagem.game import MegaGem
from gemenvs.recording import RecordingError, load_game, parse_game, save_game

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")


def returns_at_once(fn, fifo: Path, seconds: float = 5.0):
    """``fn()`` run in a thread: its result, or the exception it raised, as ``("value" | "error", x)``; fails
    the test if it is still waiting after ``seconds`` (then unblocks it by opening and closing the FIFO)."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the test
            box["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
        thread.join(5)
        pytest.fail(f"the reader waited on the FIFO {fifo} for more than {seconds} s")
    return next(iter(box.items()))


def one_line(message: str) -> str:
    assert "\n" not in message and message.strip() == message, repr(message)
    return message


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A saved 3-player MegaGem game: (path, its lines)."""
    game = MegaGem(num_players=3)
    state = play_engine_game(game, [RandomAgent(num_actions=game.num_actions, seed=p) for p in range(3)], 5)
    path = save_game(tmp_path_factory.mktemp("saved") / "game.jsonl", game, state, players=["me", "a", "b"])
    return path, path.read_text().splitlines()


# ----------------------------------------------------------------------------- saved games

@needs_fifo
def test_saved_game_from_a_fifo_is_refused_at_once(tmp_path, capsys):
    fifo = tmp_path / "game.jsonl"
    os.mkfifo(fifo)
    kind, err = returns_at_once(lambda: load_game(fifo), fifo)
    assert kind == "error" and isinstance(err, RecordingError), err
    assert "not a regular file (a FIFO)" in one_line(str(err)) and str(fifo) in str(err)
    kind, code = returns_at_once(lambda: main(["replay", str(fifo)], stdout=io.StringIO()), fifo)
    assert (kind, code) == ("value", 2)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gemenvs: error: ") and "FIFO" in err


def test_saved_game_larger_than_the_cap_is_refused_before_reading(tmp_path):
    big = tmp_path / "big.jsonl"
    with open(big, "wb") as f:
        f.truncate(256 * 2**20)  # sparse: no disk, but 256 MiB to read
    start = time.perf_counter()
    with pytest.raises(RecordingError) as e:
        load_game(big)
    assert time.perf_counter() - start < 0.5
    assert f"more than the {recording.MAX_GAME_BYTES:,}" in one_line(str(e.value))


@pytest.mark.parametrize("where", ["before the result", "after the result"])
def test_a_million_extra_entries_fail_fast_naming_the_line(saved, tmp_path, where):
    path, lines = saved
    extra = ["[0, 0, 0]"] * 1_000_000
    body = lines[:-1] + extra + lines[-1:] if where == "before the result" else lines + extra
    bad = tmp_path / "long.jsonl"
    bad.write_text("\n".join(body) + "\n")
    first = len(lines) if where == "before the result" else len(lines) + 1  # 1-based number of the first extra
    for read in (lambda: load_game(bad), lambda: parse_game(bad.read_text(), str(bad))):
        start = time.perf_counter()
        with pytest.raises(RecordingError) as e:
            read()
        assert time.perf_counter() - start < 0.5
        assert one_line(str(e.value)).startswith(f"{bad}: line {first}: "), str(e.value)


def test_line_count_and_line_length_caps(saved, tmp_path):
    path, lines = saved
    text = "\n".join(lines) + "\n"
    cap = recording.MAX_GAME_LINES
    blanks = text + "\n" * (cap + 10 - len(lines))  # trailing blank lines: fine, but they count
    with pytest.raises(RecordingError, match=f"line {cap + 1}: more than the {cap:,} lines"):
        parse_game(blanks, "blanks.jsonl")
    (tmp_path / "blanks.jsonl").write_text(blanks)
    with pytest.raises(RecordingError, match=f"line {cap + 1}: more than the {cap:,} lines"):
        load_game(tmp_path / "blanks.jsonl")
    header = json.loads(lines[0])
    header["players"][0] = "x" * (recording.MAX_LINE_BYTES + 1)
    wide = "\n".join([json.dumps(header)] + lines[1:]) + "\n"
    with pytest.raises(RecordingError, match="line 1: longer than the"):
        parse_game(wide, "wide.jsonl")
    (tmp_path / "wide.jsonl").write_text(wide)
    with pytest.raises(RecordingError, match="line 1: cannot read the file: longer than the"):
        load_game(tmp_path / "wide.jsonl")
    assert parse_game(text + "\n\n").log == parse_game(text).log  # a few trailing blank lines stay fine


@pytest.mark.parametrize("line", [0, 1, -1])
def test_deeply_nested_json_is_a_one_line_error(saved, tmp_path, line):
    path, lines = saved
    lines = list(lines)
    lines[line] = "[" * 100_000 + "]" * 100_000
    text = "\n".join(lines) + "\n"
    number = line % len(lines) + 1
    with pytest.raises(RecordingError) as e:
        parse_game(text, "deep.jsonl")
    assert one_line(str(e.value)).startswith(f"deep.jsonl: line {number}: JSON nested deeper than"), str(e.value)
    (tmp_path / "deep.jsonl").write_text(text)
    with pytest.raises(RecordingError, match=f"line {number}: JSON nested deeper than"):
        load_game(tmp_path / "deep.jsonl")


@pytest.mark.parametrize("name, words", [
    ("\\ud800", "lone surrogate"),
    ("me\\u001b[2J", "control character"),
])
def test_player_names_that_cannot_be_printed_are_refused(saved, tmp_path, capsys, name, words):
    path, lines = saved
    bad = tmp_path / "names.jsonl"
    bad.write_text("\n".join([lines[0].replace('"me"', f'"{name}"', 1)] + lines[1:]) + "\n")
    with pytest.raises(RecordingError, match=words) as e:
        load_game(bad)
    assert one_line(str(e.value)).startswith(f"{bad}: line 1: ")
    out = io.StringIO()
    assert main(["replay", str(bad), "--no-pause"], stdout=out) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and out.getvalue() == ""


def test_numbers_json_does_not_hold_are_refused(saved):
    path, lines = saved
    header = lines[0].replace('"seed": ', '"seed": ' + "9" * 5000 + ", \"x\": ", 1)
    with pytest.raises(RecordingError) as e:
        parse_game("\n".join([header] + lines[1:]), "g.jsonl")
    assert one_line(str(e.value)).startswith("g.jsonl: line 1: ") and "set_int_max_str_digits" not in str(e.value)
    result = lines[-1].replace("[", "[1e999, ", 1)
    with pytest.raises(RecordingError, match="line .*: not JSON"):
        parse_game("\n".join(lines[:-1] + [result]), "g.jsonl")


def test_line_after_the_result_is_refused(saved):
    path, lines = saved
    with pytest.raises(RecordingError, match=f"line {len(lines) + 1}: .*after the result"):
        parse_game("\n".join(lines + [lines[-1]]), "g.jsonl")


# ----------------------------------------------------------------------------- policy models

def sb3_like_zip(path: Path, state: dict | None = None, data: bytes | None = None, extra: dict | None = None) -> Path:
    """A zip laid out as MaskablePPO saves one: ``data`` (JSON) and ``policy.pth`` (a torch state dict)."""
    torch = pytest.importorskip("torch")
    buffer = io.BytesIO()
    torch.save(state if state is not None else {}, buffer)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", data if data is not None else b"{}")
        z.writestr("policy.pth", buffer.getvalue())
        for name, blob in (extra or {}).items():
            z.writestr(name, blob)
    return path


@needs_fifo
@pytest.mark.parametrize("suffix", [".zip", ".npz"])
def test_policy_from_a_fifo_is_refused_at_once(tmp_path, suffix):
    from gemenvs.agents.policy import PolicyAgent, PolicyLoadError

    fifo = tmp_path / f"model{suffix}"
    os.mkfifo(fifo)
    kind, err = returns_at_once(lambda: PolicyAgent.load(fifo), fifo)
    assert kind == "error" and isinstance(err, PolicyLoadError), repr(err)
    assert "not a regular file (a FIFO)" in one_line(str(err)) and str(fifo) in str(err)


@needs_fifo
def test_zip_fifo_through_read_sb3_zip(tmp_path):
    from gemenvs.agents.policy import PolicyLoadError, read_sb3_zip

    fifo = tmp_path / "model.zip"
    os.mkfifo(fifo)
    kind, err = returns_at_once(lambda: read_sb3_zip(fifo), fifo)
    assert kind == "error" and isinstance(err, PolicyLoadError) and "FIFO" in str(err), repr(err)


def test_zip_members_are_capped_in_total(tmp_path, monkeypatch):
    from gemenvs.agents import policy
    from gemenvs.agents.policy import PolicyAgent, PolicyLoadError

    monkeypatch.setattr(policy, "MAX_MEMBER_BYTES", 2**20)
    monkeypatch.setattr(policy, "MAX_READ_BYTES", 2**20)
    path = sb3_like_zip(tmp_path / "m.zip", data=b" " * (2**20 - 10) + b"{}")
    with zipfile.ZipFile(path) as z:
        assert all(i.file_size <= 2**20 for i in z.infolist())  # each member passes on its own
    with pytest.raises(PolicyLoadError) as e:
        PolicyAgent.load(path)
    message = one_line(str(e.value))
    assert "in all" in message and f"more than the {2**20:,}" in message, message


def test_zip_member_past_the_default_cap_is_refused_without_reading_it(tmp_path):
    from gemenvs.agents.policy import MAX_MEMBER_BYTES, PolicyAgent, PolicyLoadError

    path = tmp_path / "bomb.zip"
    size = MAX_MEMBER_BYTES + 2**20
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        z.writestr("data", b"{}")
        with z.open("policy.pth", "w") as f:
            chunk = bytes(2**20)
            for _ in range(size // 2**20):
                f.write(chunk)
    assert path.stat().st_size < 2**20
    start = time.perf_counter()
    with pytest.raises(PolicyLoadError) as e:
        PolicyAgent.load(path)
    assert time.perf_counter() - start < 0.5
    assert "policy.pth" in one_line(str(e.value)) and f"{size:,} bytes" in str(e.value), str(e.value)


def test_zip_with_too_many_members_is_refused(tmp_path):
    from gemenvs.agents.policy import PolicyAgent, PolicyLoadError

    path = sb3_like_zip(tmp_path / "many.zip", extra={f"junk/{k}": b"" for k in range(2000)})
    with pytest.raises(PolicyLoadError, match="2,002 members"):
        PolicyAgent.load(path)


def test_zip_with_the_wrong_keys_says_what_was_expected_and_found(tmp_path):
    torch = pytest.importorskip("torch")
    from gemenvs.agents.policy import PolicyAgent, PolicyLoadError

    state = {"mlp_extractor.policy_net.0.weight": torch.zeros(16, 8),
             "mlp_extractor.policy_net.0.bias": torch.zeros(16)}
    path = sb3_like_zip(tmp_path / "keys.zip", state)
    with pytest.raises(PolicyLoadError) as e:
        PolicyAgent.load(path)
    message = one_line(str(e.value))
    for words in ("action_net.weight", "action_net.bias", "expected", "found", "mlp_extractor.policy_net.0.weight"):
        assert words in message, message
    state = {1: torch.zeros(2)}
    with pytest.raises(PolicyLoadError, match="keys"):
        PolicyAgent.load(sb3_like_zip(tmp_path / "intkey.zip", state))


def test_deep_zip_data_is_a_one_line_error(tmp_path):
    from gemenvs.agents.policy import PolicyAgent, PolicyLoadError

    path = sb3_like_zip(tmp_path / "deep.zip", data=b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(PolicyLoadError, match="nested deeper") as e:
        PolicyAgent.load(path)
    one_line(str(e.value))


def test_npz_members_are_capped(tmp_path, monkeypatch):
    from gemenvs.agents import policy
    from gemenvs.agents.policy import PolicyAgent, PolicyLoadError

    rng = np.random.default_rng(0)
    agent = PolicyAgent([(rng.normal(size=(240, 600)), rng.normal(size=600)), (rng.normal(size=(600, 91)),
                                                                                rng.normal(size=91))])
    path = agent.save(tmp_path / "p.npz")
    assert PolicyAgent.load(path).input_size == 240
    monkeypatch.setattr(policy, "MAX_MEMBER_BYTES", 2**19)
    with pytest.raises(PolicyLoadError, match=r"weight_0\.npy.* more than the 524,288") as e:
        PolicyAgent.load(path)
    one_line(str(e.value))


# ----------------------------------------------------------------------------- configs

@needs_fifo
def test_config_from_a_fifo_is_refused_at_once(tmp_path):
    pytest.importorskip("yaml")
    from gemenvs.training.config import ConfigError, load_config

    fifo = tmp_path / "config.yaml"
    os.mkfifo(fifo)
    kind, err = returns_at_once(lambda: load_config(fifo), fifo)
    assert kind == "error" and isinstance(err, ConfigError), repr(err)
    assert "not a regular file (a FIFO)" in one_line(str(err))


@pytest.mark.parametrize("text, words", [
    ("name: " + "x" * (2**20 + 1) + "\n", "bytes"),
    ("env:\n  options:\n    x: " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper than"),
    ("a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nppo: {net_arch: [*b, *b]}\n",
     "alias"),
])
def test_config_file_caps(tmp_path, text, words):
    pytest.importorskip("yaml")
    from gemenvs.training.config import ConfigError, load_config

    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=words) as e:
        load_config(path)
    assert one_line(str(e.value)).startswith(str(path))


@pytest.mark.parametrize("override, message", [
    ("ppo.learning_rate=2", "ppo.learning_rate must be less than 1; got 2.0"),
    ("ppo.learning_rate=1", "ppo.learning_rate must be less than 1; got 1.0"),
    ("pretrain.learning_rate=1.5", "pretrain.learning_rate must be less than 1; got 1.5"),
    ("seed=99999999999", f"seed must be at most {2**31 - 1}; got 99999999999"),
    ("total_timesteps=100000000000", "total_timesteps must be at most 1000000000; got 100000000000"),
    ("ppo.net_arch=[100000]", "ppo.net_arch[0] must be a layer size of at most 1024; got 100000"),
    ("ppo.net_arch=[8, 8, 8, 8, 8]", "ppo.net_arch has 5 hidden layers; at most 4"),
    ("ppo.n_steps=[1", "cannot parse the value of ppo.n_steps"),
    ("ppo.net_arch=[&a 1, *a]", "alias"),
])
def test_config_value_ranges(override, message):
    pytest.importorskip("yaml")
    from gemenvs.training.config import ConfigError, load_config

    with pytest.raises(ConfigError) as e:
        load_config(None, [override])
    assert message in one_line(str(e.value)), str(e.value)


def test_config_ranges_keep_what_is_documented():
    pytest.importorskip("yaml")
    from gemenvs.training.config import load_config

    cfg = load_config(None, ["ppo.net_arch=[]", "seed=2147483647", "ppo.learning_rate=0.5", "ppo.net_arch=[1024, 8]"])
    assert cfg.ppo.net_arch == [1024, 8] and cfg.seed == 2**31 - 1
    assert load_config(None, ["ppo.net_arch=[]"]).ppo.net_arch == []  # linear actor and critic


# ----------------------------------------------------------------------------- numpy integers as options

@pytest.mark.parametrize("module, n", [("gem_v0", 2), ("gemjam_v0", 2), ("megagem_v0", 3)])
def test_numpy_integers_are_accepted_where_ints_are(module, n):
    import importlib

    env_module = importlib.import_module(f"gemenvs.{module}")
    for value in (np.int64(n), np.int32(n), np.uint8(n)):
        env = env_module.env(num_players=value)
        env.reset(seed=np.int64(3))
        options = env.unwrapped.game.options()
        assert type(options["num_players"]) is int and options["num_players"] == n
        json.dumps(options)
        env.close()
    for bad in (np.bool_(True), np.float64(n), float(n), True):
        with pytest.raises(ValueError, match="num_players"):
            env_module.env(num_players=bad)


def test_numpy_values_of_the_other_options_are_stored_plain():
    from gemenvs.gem.game import Gem
    from gemenvs.gemjam.game import GemJam

    jam = GemJam(num_players=np.int64(2), turn_decision_limit=np.int16(5), max_rounds=np.int32(3),
                 sirens_call=np.bool_(False))
    gem = Gem(num_players=np.int8(3), opener_may_pass=np.bool_(True))
    for game in (jam, gem):
        options = game.options()
        json.dumps(options)
        assert all(type(v) in (int, bool, str) or v is None for v in options.values()), options


def test_batched_step_with_uint64_actions():
    from gemenvs.core.engine import IllegalActionError
    from gemenvs.megagem.batched import BatchedMegaGem

    a, b = BatchedMegaGem(8, seed=1), BatchedMegaGem(8, seed=1)
    for _ in range(20):
        actions = a.random_actions(0)
        actions[actions < 0] = 0
        a.step(actions)
        b.step(actions.astype(np.uint64))
        assert np.array_equal(a.observations(), b.observations())
    bad = np.zeros((8, 4), np.uint64)
    game, seat = (int(x) for x in np.argwhere(b.to_act())[0])
    bad[game, seat] = 2**64 - 1
    with pytest.raises(IllegalActionError, match=f"game {game}: illegal action {2**64 - 1} .*out of range"):
        b.step(bad)


def test_play_docs_state_the_saved_game_caps():
    text = (Path(__file__).resolve().parents[1] / "docs" / "play.md").read_text()
    for name, shown in [("MAX_GAME_BYTES", f"{recording.MAX_GAME_BYTES // 2**20} MiB"),
                        ("MAX_GAME_LINES", f"{recording.MAX_GAME_LINES:,}"),
                        ("MAX_LINE_BYTES", f"{recording.MAX_LINE_BYTES // 2**20} MiB"),
                        ("MAX_JSON_DEPTH", f"{recording.MAX_JSON_DEPTH} levels")]:
        row = next(line for line in text.splitlines() if f"`{name}`" in line)
        assert shown in row, (name, row)
