"""Agents in another program (gemenvs.agents.protocol, docs/protocol.md): the example clients play whole games
of every game over stdin/stdout and over local sockets; clients that are slow, hang, answer garbage or illegal
ids, exit mid-game, flood their output or talk out of turn forfeit as documented while the match finishes, and
no client process outlives it; what a client is sent is what the message builders give (which the contract
test checks for hidden information); a client that answers with HeuristicBidder's choices gets exactly its
results; tournaments and the benchmark count forfeits and timeouts."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gemenvs import gem_v0
from gemenvs.agents.protocol import ProtocolAgent, Seen, decide_message, parse_answer, start_message
from gemenvs.arena.match import play_engine_game, run_match
from gemenvs.arena.resolve import AgentSpecError, resolve_agent
from gemenvs.arena.tournament import make_raw_env
from gemenvs.core.replay import replay_game

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
CLIENT = f"{PY} {ROOT / 'tests' / 'protocol_client.py'}"
EXAMPLES = {"python": f"cmd:{PY} {ROOT / 'examples' / 'random_agent.py'} --seed 3",
            "sh": f"cmd:sh {ROOT / 'examples' / 'random_agent.sh'} 3"}
GAMES = ["megagem", "gem", "gemjam", "sealedlots"]


def children() -> list[tuple[int, str]]:
    """(pid, state) of every child process of this one (read from /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        if int(fields[1]) == os.getpid():
            out.append((int(entry), fields[0]))
    return out


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not: one left to this process is caught by :func:`children`)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return text[text.rindex(")") + 2:].split()[0] != "Z"


@pytest.fixture
def pids(tmp_path, monkeypatch):
    """A folder where every test client writes its pid (and the pids of what it starts); after the test none of
    them may be running, none may be a child of this process any more, and no child of this process a zombie."""
    folder = tmp_path / "pids"
    folder.mkdir()
    monkeypatch.setenv("PROTOCOL_CLIENT_PIDS", str(folder))
    yield folder
    recorded = [int(p.name) for p in folder.iterdir()]
    assert recorded, "no client ran"
    assert [p for p in recorded if alive(p)] == []
    left = children()
    assert [c for c in left if c[0] in recorded or c[1] == "Z"] == []


def _agents(game_name: str, spec: str, n: int, **settings):
    env = make_raw_env(game_name, {})
    return env.game, [resolve_agent(game_name, spec, env, protocol=settings) for _ in range(n)]


# ----------------------------------------------------------------------------- the example clients


@pytest.mark.parametrize("client", sorted(EXAMPLES))
@pytest.mark.parametrize("game_name", GAMES)
def test_the_example_clients_play_whole_games_of_every_game(game_name, client, tmp_path):
    game, agents = _agents(game_name, EXAMPLES[client], 2, log_dir=tmp_path, log_name="seat")
    env = make_raw_env(game_name, {})
    n = game.num_players
    others = [resolve_agent(game_name, "random", env, seed=k) for k in range(n - 2)]
    try:
        for seed in (1, 2):
            seats = agents + others
            state = play_engine_game(game, seats, seed)
            assert game.is_over(state) and [a.forfeit for a in agents] == [None, None]
            assert replay_game(game, seed, state.log).to_dict() == state.to_dict()
        assert [a.totals["games"] for a in agents] == [2, 2] and [a.totals["starts"] for a in agents] == [1, 1]
    finally:
        for a in agents:
            a.close()
    assert agents[0].pid is None


def test_a_client_on_a_local_socket_plays_over_tcp_and_unix(tmp_path, pids):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    path = tmp_path / "agent.sock"
    servers = [subprocess.Popen([PY, str(ROOT / "examples" / "random_agent.py"), "--serve", where], stderr=subprocess.PIPE)
               for where in (f"tcp:127.0.0.1:{port}", f"unix:{path}")]
    try:
        for server in servers:
            assert b"listening" in server.stderr.readline()
        open(pids / str(servers[0].pid), "w").close()
        for spec in (f"tcp:127.0.0.1:{port}", f"unix:{path}"):
            game, agents = _agents("gem", spec, 3)
            state = play_engine_game(game, agents, 5)
            assert game.is_over(state) and [a.forfeit for a in agents] == [None] * 3
            for a in agents:
                a.close()
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=10)
            server.stderr.close()


# ----------------------------------------------------------------------------- misbehaving clients


MISBEHAVIOURS = [  # (client mode, limits, forfeit reason of every game, retries asked per game)
    ("sleep 2", {"decision_timeout": 0.3, "start_timeout": 0.3}, "timeout", 0),
    ("sleep 0.15", {"decision_timeout": 2, "game_timeout": 0.5}, "game timeout", 0),
    ("hang", {"decision_timeout": 0.4, "start_timeout": 0.4}, "timeout", 0),
    ("garbage", {}, "malformed", 1),
    ("illegal", {"retries": 2}, "illegal", 2),
    ("exit 2", {}, "crash", 0),
    ("flood", {"max_line_bytes": 200_000}, "flood", 0),
    ("chatty", {}, "flood", 0),
]


@pytest.mark.parametrize("mode, limits, reason, retries", MISBEHAVIOURS, ids=[m[0] for m in MISBEHAVIOURS])
def test_a_misbehaving_client_forfeits_and_the_match_finishes(mode, limits, reason, retries, tmp_path, pids):
    env_fn = lambda: gem_v0.env(num_players=3)  # noqa: E731
    env = env_fn()
    focal = resolve_agent("gem", f"cmd:{CLIENT} {mode}", env, protocol={**limits, "log_dir": tmp_path / "logs"})
    opponents = [resolve_agent("gem", "random", env, seed=k) for k in range(2)]
    try:
        result = run_match(env_fn, focal, opponents, games=2, seed=4)
    finally:
        focal.close()
    assert result.games == 2 and result.forfeits == {0: reason, 1: reason} and result.wins == 0
    assert result.timeouts == (2 if reason in ("timeout", "game timeout") else 0)
    assert focal.totals["forfeits"] == 2 and focal.totals["retries"] == 2 * retries
    log = next((tmp_path / "logs").iterdir()).read_text()
    assert "forfeits the game at decision" in log and f": {reason}: " in log


def test_a_client_answering_by_label_or_recovering_after_a_retry_plays_on(pids):
    for mode, retries in (("label", 0), ("garbage-once", 1)):
        game, agents = _agents("megagem", f"cmd:{CLIENT} {mode}", 1)
        env = make_raw_env("megagem", {})
        others = [resolve_agent("megagem", "random", env, seed=k) for k in range(game.num_players - 1)]
        state = play_engine_game(game, agents + others, 3)
        assert game.is_over(state) and agents[0].forfeit is None and agents[0].totals["retries"] == retries
        agents[0].close()


def test_answers_are_ids_or_labels_of_legal_actions():
    game = make_raw_env("megagem", {}).game
    legal = [int(a) for a in game.legal_actions(game.new_state(1), 0)]
    assert parse_answer(b'{"action": %d}' % legal[1], game, legal) == (legal[1], None, None)
    label = game.action_spec.label(legal[2])
    for text in (label, label.upper(), label.replace("[", " ").replace("]", "")):
        assert parse_answer(json.dumps({"action": text}).encode(), game, legal)[0] == legal[2]
    assert parse_answer(b'{"action": 999}', game, legal)[1] == "illegal"
    assert parse_answer(b'{"action": "fly away"}', game, legal)[1] == "illegal"
    for bad in (b"3", b"[", b'{"move": 3}', b'{"action": true}', b'{"action": 1.5}', b"[" * 100_000):
        assert parse_answer(bad, game, legal)[1] == "malformed", bad[:20]


@pytest.mark.parametrize("spec, words", [
    ("cmd:", "needs a command"),
    ("cmd:   ", "needs a command"),
    ("cmd:no-such-program-anywhere --x", "not found on PATH"),
    ("cmd:./no/such/file.py", "not an executable file"),
    ("cmd:'unclosed", "does not split"),
    ("cmd,decision_timeout=0:python x.py", "decision_timeout must be a positive"),
    ("cmd,patience=3:python x.py", "is not a limit"),
    ("cmd,retries=many:python x.py", "retries takes an integer"),
    ("tcp:8.8.8.8:53", "not a loopback address"),
    ("tcp:localhost", "HOST:PORT"),
    ("unix:", "path of a socket"),
])
def test_bad_protocol_specs_are_one_line_errors(spec, words):
    env = make_raw_env("gem", {})
    with pytest.raises(AgentSpecError, match=words) as info:
        resolve_agent("gem", spec, env)
    assert "\n" not in str(info.value)


# ----------------------------------------------------------------------------- what a client is sent


def test_the_messages_a_client_gets_are_the_seat_s_messages(tmp_path, pids):
    """What goes over the wire is start_message and decide_message of the seat (the contract test checks those
    for hidden information), one start per game and an end with the result."""
    path = tmp_path / "messages.jsonl"
    game, (agent,) = _agents("gemjam", f"cmd:{CLIENT} record {path}", 1)
    env = make_raw_env("gemjam", {})
    others = [resolve_agent("gemjam", "random", env, seed=k) for k in range(game.num_players - 1)]
    state = play_engine_game(game, others[:1] + [agent] + others[1:], 11)
    agent.close()
    got = [json.loads(line) for line in path.read_text().splitlines()]
    assert got[0] == json.loads(json.dumps(start_message(game, 1, agent.limits)))
    assert got[0]["protocol"] == 1 and got[0]["seat"] == 1 and got[0]["env_id"] == "gemenvs/GemJam-v0"
    replay, seen, expected, number = game.new_state(11), Seen(), [], 0
    for p, a, forced in state.log:
        if p == 1 and not forced:
            number += 1
            expected.append(json.loads(json.dumps(decide_message(game, replay, 1, seen, number))))
        game.apply_legal(replay, p, a) if not forced else None
    assert got[1:-1] == expected
    end = got[-1]
    assert end["type"] == "end" and end["scores"] == [float(x) for x in game.results(state).scores]
    assert end["forfeit"] is None and end["forfeits"] == [None] * 3 and len(end["ranks"]) == 3


# ----------------------------------------------------------------------------- results


def test_a_client_replaying_heuristic_bidder_gets_its_exact_results(pids):
    """The bidding benchmark's games of one cell: a program that answers with HeuristicBidder's choices, from
    the observations it is sent, gets the same scores, wins and every metric as HeuristicBidder itself."""
    from gemenvs.arena.benchmark import BENCHMARKS, run_benchmark

    bench = BENCHMARKS["megagem-bidding-v1"]
    program = f"cmd:{CLIENT} heuristic"
    results = run_benchmark(bench, ["heuristic", program], deals=2, cells=[3], progress=False)
    assert len(results[program]) == 2 * 3 and results[program] == results["heuristic"]


def test_a_tournament_goes_on_past_a_crashing_client_and_counts_its_forfeits(tmp_path, pids, capsys):
    from gemenvs.arena import tournament

    out = tmp_path / "t"
    crash = f"cmd:{CLIENT} exit 3"  # (and a client that plays on: its copies must end with the workers)
    argv = ["--game", "gem", "--agents", "random", crash, f"cmd:{CLIENT} random", "--games", "6", "--out", str(out),
            "--no-progress", "--workers", "2", "--decision-timeout", "5"]
    assert tournament.main(argv) == 0
    printed = capsys.readouterr().out
    assert "| forfeits | timeouts |" in printed
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(records) == 6
    for rec in records:
        seat = rec["seats"].index(crash)
        assert rec["forfeits"][seat] == "crash" and rec["ranks"][seat] == 3.0 and seat not in rec["winners"]
    summary = json.loads((out / "summary.json").read_text())["leaderboard"]
    by_agent = {row["agent"]: row for row in summary}
    assert by_agent[crash]["forfeits"] == 6 and by_agent[crash]["timeouts"] == 0 and by_agent[crash]["wins"] == 0
    assert by_agent["random"]["forfeits"] == 0
    logs = sorted(p.name for p in (out / "protocol-logs").iterdir())
    assert logs and all(name.endswith(".log") for name in logs)
    assert tournament.main(argv) == 0  # (resumed: every record is read back, forfeits and all, and nothing is played)
    assert json.loads((out / "summary.json").read_text())["leaderboard"] == summary


def test_the_benchmark_counts_a_client_s_forfeits_and_timeouts(tmp_path, pids, capsys):
    from gemenvs.training.benchmark_cli import main

    slow = f"cmd,start_timeout=0.3:{CLIENT} sleep 2"
    out = tmp_path / "b"
    assert main(["gem", slow, "--deals", "1", "--decision-timeout", "0.3", "--out", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "| forfeits | timeouts |" in text
    rows = {(r["scope"], r["value"]): r for r in
            __import__("csv").DictReader((out / "gem-bidding-v1.csv").read_text().splitlines())}
    assert rows[("overall", "all")]["forfeits"] == rows[("overall", "all")]["timeouts"] == "9"
    assert rows[("overall", "all")]["win_rate"] == "0"


def test_a_protocol_agent_plays_one_seat_a_game_and_needs_the_match_runner():
    game, (agent,) = _agents("gem", EXAMPLES["sh"], 1)
    with pytest.raises(TypeError, match="match runner"):
        agent.act(np.zeros(3), np.ones(3, np.int8))
    assert isinstance(agent, ProtocolAgent) and agent.pid is None  # (nothing started until a game needs it)
    with pytest.raises(ValueError, match="one seat per game"):
        play_engine_game(game, [agent] * game.num_players, 1)
    assert agent.pid is not None
    agent.close()
    assert agent.pid is None


def test_sealed_bids_sent_hidden_are_sent_again_once_revealed():
    """A seat's messages carry every decision of the game once, as it may see it then; a sealed bid sent hidden
    comes again in ``revealed`` once its round resolves, so by the end the seat has been told every action its
    final visible log shows."""
    from gemenvs.agents.protocol import end_message

    game = make_raw_env("megagem", {}).game
    state, rng, seen, told = game.new_state(7), np.random.default_rng(0), Seen(), {}
    hidden_sent = 0
    while not game.is_over(state):
        p = game.to_act(state)[0]
        if p == 0:
            message = decide_message(game, state, 0, seen)
            hidden_sent += sum(e["action"] is None for e in message["events"])
            for e in message["events"] + message["revealed"]:
                told[e["index"]] = e["action"]
        game.apply_legal(state, p, int(rng.choice(game.legal_actions(state, p))))
    end = end_message(game, state, 0, seen)
    for e in end["events"] + end["revealed"]:
        told[e["index"]] = e["action"]
    assert hidden_sent > 0 and sorted(told) == list(range(len(state.log)))
    assert [told[k] for k in sorted(told)] == [a for _, a, _ in game.visible_log(state, 0)]


def test_a_client_is_an_opponent_of_the_gymnasium_view(tmp_path, monkeypatch):
    """``gymnasium.make(ENV_ID, opponents="cmd:...")``: the program plays the other seats, hears each game's end
    at the next reset, and is ended by ``env.close()``."""
    import gymnasium

    folder = tmp_path / "pids"
    folder.mkdir()
    monkeypatch.setenv("PROTOCOL_CLIENT_PIDS", str(folder))
    env = gymnasium.make("gemenvs/GEM-v0", opponents=f"cmd:{CLIENT} random")
    for episode in range(2):
        _, info = env.reset(seed=episode)
        done = False
        while not done:
            _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            done = term or trunc
    opponents = env.unwrapped.opponents.agents
    assert [a.totals["games"] for a in opponents] == [1, 1] and all(a.forfeit is None for a in opponents)
    env.close()
    assert all(a.pid is None for a in opponents) and not any(alive(int(p.name)) for p in folder.iterdir())
