"""gemenvs-tournament: balanced schedules, intervals, ratings, replays, resuming and one-line errors."""
from __future__ import annotations

import itertools
import json
from collections import Counter

import numpy as np
import pytest

from gemenvs.arena.match import wilson_interval
from gemenvs.arena import tournament as T


@pytest.mark.parametrize("agents,players", [(3, 4), (5, 3), (4, 4), (2, 3), (4, 2), (6, 4)])
def test_schedule_is_balanced(agents, players):
    fixtures = T.schedule(agents, players, cycles=2, seed=7)
    assert len(fixtures) == 2 * T.cycle_size(agents, players)
    seats = Counter((a, s) for fx in fixtures for s, a in enumerate(fx.seats))
    assert len(set(seats.values())) == 1 and len(seats) == agents * players  # every agent in every seat equally
    meets = Counter()
    for fx in fixtures:
        for a, b in itertools.combinations(sorted(set(fx.seats)), 2):
            meets[(a, b)] += 1
    assert len(meets) == agents * (agents - 1) // 2 and len(set(meets.values())) == 1  # every pair equally
    for fx in fixtures:  # duplicate format: a deal's rotations replay one seed, each seat rotated once
        assert fx.seed == 7 + fx.deal
    by_deal = {}
    for fx in fixtures:
        by_deal.setdefault(fx.deal, []).append(fx.seats)
    for rotations in by_deal.values():
        assert len(rotations) == players
        for s in range(players):
            assert sorted(r[s] for r in rotations) == sorted(rotations[0])
    assert len({fx.seed for fx in T.schedule(agents, players, 1, duplicate=False)}) == T.cycle_size(agents, players)


def test_intervals_on_a_known_case():
    lo, hi = wilson_interval(8, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.4902, 0.9433)
    m, lo, hi = T.mean_interval([1, 2, 3, 4, 5])
    assert m == 3 and hi - m == pytest.approx(1.96 * np.sqrt(2.5) / np.sqrt(5)) and m - lo == pytest.approx(hi - m)
    assert T.ranks_of([10, 30, 30, 5]) == [3, 1.5, 1.5, 4]


def _spec(**kw):
    args = dict(game="megagem", agents=["random", "heuristic"], games=12, options={"num_players": 3})
    args.update(kw)
    return T.make_spec(**args)[0]


def test_ratings_put_the_heuristic_above_random():
    spec = _spec()
    rows, h2h, records = T.run_tournament(spec)
    assert [r.agent for r in rows] == ["heuristic", "random"]
    heur, rand = rows
    assert heur.mu > rand.mu and heur.ordinal > rand.ordinal and heur.win_rate > rand.win_rate
    assert h2h[1, 0] > 0.8 and h2h[0, 1] == pytest.approx(1 - h2h[1, 0])
    assert heur.games == rand.games == 18 and len(records) == 12


def test_replay_reproduces_final_scores(tmp_path):
    spec = _spec(games=6)
    T.run_tournament(spec, out=tmp_path)
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    for line in lines:
        rec = json.loads(line)
        state = T.replay_record(rec)
        assert state.log == rec["log"]
    rec = json.loads(lines[0])
    rec["scores"][0] += 1
    with pytest.raises(ValueError, match="scores"):
        T.replay_record(rec)
    rec = json.loads(lines[0])
    k = next(i for i, e in enumerate(rec["log"]) if not e[2])
    rec["log"][k][1] = 10_000
    with pytest.raises(ValueError):
        T.replay_record(rec)


def test_resume_after_a_partial_results_file_gives_the_same_numbers(tmp_path):
    spec = _spec(agents=["random", "truthful", "heuristic"], games=12)
    full = T.run_tournament(spec, out=tmp_path / "a")
    path = tmp_path / "b" / "results.jsonl"
    T.run_tournament(spec, out=tmp_path / "b")
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[3:7]) + "\n" + lines[7][:40])  # a few games, the last one cut by a kill
    again = T.run_tournament(spec, out=tmp_path / "b")
    assert (tmp_path / "a" / "leaderboard.csv").read_text() == (tmp_path / "b" / "leaderboard.csv").read_text()
    assert sorted((json.loads(x) for x in path.read_text().splitlines()), key=lambda r: r["index"]) == full[2]
    assert again[2] == full[2]
    other = _spec(agents=["random", "truthful", "heuristic"], games=12, seed=1)
    with pytest.raises(T.TournamentError, match="another tournament"):
        T.run_tournament(other, out=tmp_path / "b")


def test_workers_give_the_same_records():
    spec = _spec(games=6)
    assert T.run_tournament(spec, workers=2)[2] == T.run_tournament(spec)[2]


def test_gemjam_and_gem_play_in_the_tournament():
    rows, _, records = T.run_tournament(T.make_spec("gemjam", ["random", "rule"], 2, {"num_players": 2})[0])
    assert {r.agent for r in rows} == {"random", "rule"} and len(records) == 2
    rows, _, records = T.run_tournament(T.make_spec("gem", ["random", "greedy"], 2, {"num_players": 2})[0])
    assert len(records) == 2 and all(T.replay_record(r) is not None for r in records)


def test_cli_writes_the_tables_and_heatmap(tmp_path, capsys):
    out = tmp_path / "t"
    assert T.main(["--agents", "random", "truthful", "--players", "3", "--games", "6", "--value-chart", "B",
                   "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "| 1 |" in printed and "value_chart=B" in printed
    for name in T.OUT_FILES:
        assert (out / name).is_file(), name
    assert (out / "head_to_head.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("argv,words", [
    (["--agents", "random", "nobody"], "unknown agent 'nobody'"),
    (["--agents", "random", "missing/model.npz"], "no policy file"),
    (["--agents", "random", "heuristic", "--players", "9"], "num_players"),
    (["--agents", "random", "heuristic", "--value-chart", "Z"], "value_chart"),
    (["--agents", "random", "heuristic", "--option", "colour=3"], "bad megagem options"),
    (["--game", "gem", "--agents", "random", "greedy", "--value-chart", "A"], "MegaGem option"),
    (["--game", "chess", "--agents", "random", "greedy"], "unknown game"),
    (["--agents", "random", "random"], "listed twice"),
    (["--agents", "random", "heuristic", "--games", "0"], "--games"),
    (["--agents", "random", "heuristic", "--workers", "0"], "--workers"),
])
def test_bad_input_is_one_line_and_exit_2(argv, words, capsys):
    assert T.main(argv + ["--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gemenvs-tournament: error: ") and words in err, err


def test_family_members_enter_a_tournament_by_name():
    """A tuned-family member (tuned_family:K) is an agent name like a baseline; a bad member is a clear error."""
    from gemenvs import megagem_v0
    from gemenvs.arena.resolve import AgentSpecError, resolve_agent

    env = megagem_v0.env(num_players=4)
    agent = resolve_agent("megagem", "tuned_family:3", env, seed=1)
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][agent.act(obs["observation"], obs["action_mask"])] == 1
    with pytest.raises(AgentSpecError, match="unknown agent 'tuned_family:x'"):
        resolve_agent("megagem", "tuned_family:x", env)


class _Terminal:
    """A stand-in stderr that says it is a terminal."""

    def __init__(self):
        self.parts = []

    def write(self, text):
        self.parts.append(text)

    def flush(self):
        pass

    def isatty(self):
        return True


def test_progress_counts_the_games_of_the_schedule_and_a_resume_starts_at_those_done(tmp_path, capsys):
    spec = _spec(games=12)
    T.run_tournament(spec, out=tmp_path, progress=True)
    err = capsys.readouterr().err
    assert "megagem tournament" in err and "| 0/12 " in err and "| 12/12 " in err and "game/s" in err
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join(path.read_text().splitlines()[:4]) + "\n")
    T.run_tournament(spec, out=tmp_path, progress=True)
    err = capsys.readouterr().err
    assert "| 4/12 " in err and "| 12/12 " in err and "| 0/12 " not in err, err
    assert "<" in err.split("4/12", 1)[1], "the bar shows the time left"


def test_progress_follows_tqdm_on_a_terminal_and_is_off_when_asked(tmp_path, capsys, monkeypatch):
    spec = _spec(games=6)
    T.run_tournament(spec)  # None: stderr is not a terminal under pytest's capture
    T.run_tournament(spec, workers=2, progress=False)
    assert capsys.readouterr().err == ""
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    T.run_tournament(spec)
    assert "6/6" in "".join(terminal.parts), "None shows the bar when stderr is a terminal"
    terminal.parts.clear()
    T.run_tournament(spec, progress=False)
    assert terminal.parts == []


def test_progress_with_workers_counts_every_game_in_this_process(capsys):
    spec = _spec(games=6)
    records = T.run_tournament(spec, workers=2, progress=True)[2]
    err = capsys.readouterr().err
    assert len(records) == 6 and "6/6" in err and err.count("megagem tournament") >= 2


# ----------------------------------------------------------------------------- nothing outside --out

from pathlib import Path  # noqa: E402

CLI_ARGS = ["--agents", "random", "heuristic", "--players", "3", "--games", "6", "--no-progress"]


@pytest.fixture
def victim(tmp_path):
    """A file beside --out that no tournament may change."""
    path = tmp_path / "victim.txt"
    path.write_text("keep me")
    return path


@pytest.mark.parametrize("name", [*T.OUT_FILES, T.TOURNAMENT_MARKER])
def test_no_file_of_the_tournament_is_written_through_a_planted_link(tmp_path, victim, capsys, name):
    out = tmp_path / "t"
    assert T.main([*CLI_ARGS, "--out", str(out)]) == 0
    (out / name).unlink()
    (out / name).symlink_to(Path("..") / victim.name)  # ln -s ../victim.txt t/NAME
    capsys.readouterr()
    assert T.main([*CLI_ARGS, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gemenvs-tournament: error: ") and "symbolic link" in err, err
    assert f"{out / name}" in err and victim.read_text() == "keep me" and (out / name).is_symlink()


def test_a_planted_temporary_name_is_never_written_through(tmp_path, victim, capsys):
    out = tmp_path / "t"
    assert T.main([*CLI_ARGS, "--out", str(out)]) == 0
    lines = (out / "results.jsonl").read_text().splitlines()
    (out / "results.jsonl").write_text("\n".join(lines[:2]) + "\n")
    (out / "results.jsonl.tmp").symlink_to(victim)  # the name an earlier version rewrote the results through
    assert T.main([*CLI_ARGS, "--out", str(out)]) == 0
    assert victim.read_text() == "keep me" and len((out / "results.jsonl").read_text().splitlines()) == 6
    assert not [p for p in out.iterdir() if p.name.startswith(".results")], "no temporary file is left"


def test_out_that_the_tournament_did_not_make_needs_overwrite(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    for name in ("summary.json", "leaderboard.md", "head_to_head.csv", "notes.txt"):
        (out / name).write_text(f"the user's {name}")
    assert T.main([*CLI_ARGS, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{out} is not empty and has no {T.TOURNAMENT_MARKER} file" in err
    assert "--overwrite" in err
    assert sorted(p.name for p in out.iterdir()) == ["head_to_head.csv", "leaderboard.md", "notes.txt",
                                                     "summary.json"]
    assert all((out / n).read_text() == f"the user's {n}" for n in ("summary.json", "leaderboard.md"))
    assert T.main([*CLI_ARGS, "--out", str(out), "--overwrite"]) == 0
    assert json.loads((out / "summary.json").read_text())["spec"]["agents"] == ["random", "heuristic"]
    assert (out / "notes.txt").read_text() == "the user's notes.txt", "only the tournament's own files are replaced"
    assert (out / T.TOURNAMENT_MARKER).is_file()
    link = tmp_path / "link"
    link.symlink_to(out)
    assert T.main([*CLI_ARGS, "--out", str(link), "--overwrite"]) == 2
    assert "symbolic link" in capsys.readouterr().err


# ----------------------------------------------------------------------------- a resumed tournament trusts no line

def _line(lines: list[str], k: int, **changes) -> list[str]:
    rec = json.loads(lines[k])
    rec.update(changes)
    return [*lines[:k], json.dumps(rec, separators=(",", ":")), *lines[k + 1:]]


def _corruptions(lines: list[str]) -> list[tuple[str, bytes, str]]:
    rec = json.loads(lines[2])
    log = [list(e) for e in rec["log"]]
    free = next(i for i, e in enumerate(log) if not e[2])
    log[free][1] = 10_000
    swapped_ranks = list(reversed(rec["ranks"]))
    cases = [
        ("scores rewritten", _line(lines, 2, scores=[s + 5 for s in rec["scores"]]), "line 3: game 2 differs from its "
         "replay through the engine in scores"),
        ("ranks rewritten", _line(lines, 2, ranks=swapped_ranks), "in ranks"),
        ("winners rewritten", _line(lines, 2, winners=[w for w in range(3) if w not in rec["winners"]][:1]),
         "in winners"),
        ("scores as strings", _line(lines, 2, scores=[str(s) for s in rec["scores"]]), "in scores"),
        ("scores null", _line(lines, 2, scores=None), "in scores"),
        ("one-element scores", _line(lines, 2, scores=rec["scores"][:1]), "in scores"),
        ("options changed", _line(lines, 2, options={**rec["options"], "value_chart": "E"}), "in options"),
        ("agent seeds changed", _line(lines, 2, agent_seeds=[1, 2, 3]), "in agent_seeds"),
        ("garbage log", _line(lines, 2, log=[[0, "bid", 0]]), "the log must be a list of [seat, action, forced]"),
        ("log not a list", _line(lines, 2, log="none"), "the log must be a list"),
        ("illegal move", _line(lines, 2, log=log), "line 3: game 2 does not replay through the engine"),
        ("index off the schedule", _line(lines, 2, index=99), "game index 99 is not one of the"),
        ("index a string", _line(lines, 2, index="2"), "game index 2 is not one of the"),
        ("stored twice", [*lines, lines[1]], "game 1 is stored twice (lines 2 and 7)"),
        ("a list, not a record", [*lines[:2], "[1, 2]", *lines[3:]], "line 3: not a game record"),
        ("missing key", [*lines[:2], json.dumps({k: v for k, v in rec.items() if k != "ranks"}), *lines[3:]],
         "line 3: not a game record"),
        ("not JSON", [*lines[:2], "{not json", *lines[3:]], "line 3: not JSON"),
        ("nested a million deep", [*lines[:2], "[" * 1_000_000 + "]" * 1_000_000, *lines[3:]],
         "line 3: JSON nested deeper than"),
        ("a blank line", [*lines[:2], "", *lines[3:]], "line 3: not JSON"),
    ]
    out = [(name, ("\n".join(body) + "\n").encode(), words) for name, body, words in cases]
    bad_utf8 = ("\n".join(lines[:2]) + "\n").encode() + lines[2].encode().replace(b'"seats"', b'"se\xffats"') + b"\n"
    return out + [("invalid UTF-8", bad_utf8, "line 3: not UTF-8 text")]


def test_a_resumed_tournament_replays_every_stored_game_and_refuses_a_changed_one(tmp_path):
    spec = _spec(games=6)
    out = tmp_path / "t"
    T.run_tournament(spec, out=out)
    path = out / "results.jsonl"
    lines = path.read_text().splitlines()
    board = (out / "leaderboard.csv").read_text()
    for name, body, words in _corruptions(lines):
        path.write_bytes(body)
        with pytest.raises(T.TournamentError) as e:
            T.run_tournament(spec, out=out)
        message = str(e.value)
        assert "\n" not in message and words in message and str(path) in message, (name, message)
        assert path.read_bytes() == body, f"{name}: the file is left as it was"
        assert (out / "leaderboard.csv").read_text() == board, f"{name}: no table is rewritten"
    path.write_text("\n".join(lines) + "\n")
    assert T.run_tournament(spec, out=out)[2] == [json.loads(x) for x in lines]


def test_a_resumed_tournament_with_changed_options_is_another_tournament(tmp_path):
    spec = _spec(games=6)
    out = tmp_path / "t"
    T.run_tournament(spec, out=out)
    meta = json.loads((out / "tournament.json").read_text())
    meta["options"]["value_chart"] = "E"
    (out / "tournament.json").write_text(json.dumps(meta))
    with pytest.raises(T.TournamentError, match="holds another tournament"):
        T.run_tournament(spec, out=out)
    (out / "tournament.json").write_text("[" * 100_000)
    with pytest.raises(T.TournamentError, match="tournament.json that cannot be read .*nested deeper"):
        T.run_tournament(spec, out=out)


def test_the_heatmap_fits_long_agent_names():
    """A program's spec can be long: the heatmap elides its tick label and still lays itself out."""
    import warnings

    from gemenvs.arena.tournament import head_to_head_png

    names = ["heuristic", "cmd:python /some/long/folder/of/the/user/my_bidding_agent.py --temperature 0.5"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        png = head_to_head_png(np.array([[np.nan, 0.4], [0.6, np.nan]]), names, "a title")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
