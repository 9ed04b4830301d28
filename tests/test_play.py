"""gemenvs play: a person's game driven by scripted input for every game (choices by number and by
name, bad input answered with a reason and asked again, end of input, q and Ctrl-C), saved games,
opponents given as names or policy files, one-line usage errors, colour on a terminal."""
from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest

from gemenvs.agents.policy import PolicyAgent
from gemenvs.cli import main
from gemenvs.gem.game import Gem
from gemenvs.gemjam.game import GemJam
from gemenvs.megagem.game import MegaGem
from gemenvs.play import Screen, choice_lines, parse_choice
from gemenvs.recording import load_game

#: per game: command line, the game it builds, then a name the rules forbid at the first decision
#: (with words of the engine's reason) and a legal name typed in another case (with its label)
GAMES = {
    "megagem": (["megagem", "--players", "3", "--seed", "11"], lambda: MegaGem(num_players=3),
                "reveal[blue]", "reveal", "BID[3]", "bid[3]"),
    "gem": (["gem", "--players", "2", "--seed", "1", "--opponents", "greedy"], lambda: Gem(num_players=2),
            "pass", "opening bidder must bid", "Bid 2", "bid[2]"),
    "gemjam": (["gemjam", "--players", "2", "--seed", "4", "--option", "max_rounds=2"],
               lambda: GemJam(num_players=2, max_rounds=2), "yes", "this is the next play", "END_PLAYS", "end_plays"),
}

#: enough first-choice answers to finish any of the short games above
FIRST_CHOICES = "1\n" * 400


def run(argv, text=""):
    """Run ``gemenvs`` with scripted input; return (exit status, output)."""
    out = io.StringIO()
    code = main(["play", *argv], stdin=io.StringIO(text), stdout=out)
    return code, out.getvalue()


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_whole_game_by_scripted_input(name, tmp_path):
    argv, make, illegal, reason, legal, label = GAMES[name]
    bad = ["", "xyzzy", "0", "999", "-2", illegal]
    script = "\n".join(bad + ["?", "list", "log", legal]) + "\n" + FIRST_CHOICES
    path = tmp_path / "game.jsonl"
    code, text = run([*argv, "--save", str(path)], script)
    assert code == 0, text
    assert "type a number 1.." in text  # the empty answer
    assert "no choice is called 'xyzzy'" in text
    assert "there is no choice 0" in text and "there is no choice 999" in text and "there is no choice -2" in text
    assert "is not allowed now: " in text and reason in text
    assert "Commands:" in text and text.count("Your choices:") >= 2  # ? and list
    assert "game over" in text and f"Saved to {path}" in text
    saved = load_game(path)
    game = make()
    assert saved.options == game.options() and saved.players[0] == "human"
    first = next(e for e in saved.log if e[0] == 0 and not e[2])
    assert game.action_spec.label(first[1]) == label  # the answer by name chose that action
    assert sum(1 for e in saved.log if e[0] == 0 and not e[2]) > 1  # then by number, to the end
    final = saved.replay()
    scores = game.results(final).scores
    assert saved.result["scores"] == list(scores)
    assert all(f"{s:>7g}" in text for s in scores)


def test_end_of_input_leaves_cleanly_and_saves_nothing(tmp_path):
    path = tmp_path / "g.jsonl"
    code, text = run(["megagem", "--players", "3", "--seed", "2", "--save", str(path)], "1\n1\n")
    assert code == 0 and "end of input: you left the game." in text and "nothing saved" in text
    assert not path.exists()


def test_q_leaves_and_ctrl_c_is_130():
    code, text = run(["gem", "--players", "2", "--seed", "3"], "Q\n")
    assert code == 0 and "You left the game." in text and "(seed 3)" in text

    class Interrupt(io.StringIO):
        def readline(self, *args):
            raise KeyboardInterrupt

    out = io.StringIO()
    assert main(["play", "gemjam", "--players", "2", "--seed", "1"], stdin=Interrupt(), stdout=out) == 130
    assert "interrupted." in out.getvalue()


def test_parse_choice_by_number_name_and_prefix():
    game = MegaGem(num_players=3)
    state = game.new_state(11)
    legal = [int(a) for a in game.legal_actions(state, 0)]
    bid = game.action_spec["bid"]
    assert parse_choice(game, state, 0, legal, "4") == (legal[3], None)
    assert parse_choice(game, state, 0, legal, " bid[12] ") == (bid[12], None)
    assert parse_choice(game, state, 0, legal, "BID 12") == (bid[12], None)
    assert parse_choice(game, state, 0, legal, "bid[1]") == (bid[1], None)  # exact beats the prefix of bid[10]
    action, reason = parse_choice(game, state, 0, legal, "bid[1")
    assert action is None and "could be 11 choices" in reason
    action, reason = parse_choice(game, state, 0, legal, f"bid[{game.max_bid}]")
    assert action is None and reason.startswith(f"bid[{game.max_bid}] is not allowed now: ")
    assert game.why_illegal(state, 0, bid[game.max_bid]) in reason
    gem = Gem(num_players=2)
    s = gem.new_state(1)
    take_state = None
    while not gem.is_over(s):  # to a decision with take actions: the game's own names are accepted
        p = gem.to_act(s)[0]
        kinds = {gem.action_spec.decode(a)[0] for a in gem.legal_actions(s, p)}
        if "take" in kinds:
            take_state = (s, p)
            break
        gem.apply(s, p, int(gem.legal_actions(s, p)[-1]))
    assert take_state is not None
    s, p = take_state
    legal = [int(a) for a in gem.legal_actions(s, p)]
    take = next(a for a in legal if gem.action_spec.decode(a)[0] == "take")
    assert parse_choice(gem, s, p, legal, gem.action_name(take).upper()) == (take, None)
    assert any(gem.action_name(take) in line for line in choice_lines(gem, legal))


@pytest.mark.parametrize("text", ["\u00b2", "\u0661", "\uff13", "+-3", "--1", "9" * 5000, "0" * 20 + "99", "\x00",
                                  "bid[]", "[", "]", "bid[3]]", "1e3", "0x1", "\t", "a" * 100, "rev"])
def test_strange_answers_choose_nothing_and_say_why(text):
    game = MegaGem(num_players=3)
    state = game.new_state(11)
    legal = [int(a) for a in game.legal_actions(state, 0)]
    action, reason = parse_choice(game, state, 0, legal, text)
    assert action is None and reason and "\n" not in reason and len(reason) < 200
    assert parse_choice(game, state, 0, legal, "0" * 20 + "2") == (legal[1], None)


def test_opponents_by_name_and_policy_file(tmp_path):
    game = MegaGem(num_players=3)
    rng = np.random.default_rng(0)
    policy = tmp_path / "tiny.npz"
    PolicyAgent([(rng.normal(size=(game.spec.size, game.num_actions)), np.zeros(game.num_actions))]).save(policy)
    path = tmp_path / "g.jsonl"
    code, text = run(["megagem", "--players", "3", "--seed", "5", "--seat", "1", "--opponents", str(policy),
                      "random", "--save", str(path)], FIRST_CHOICES)
    assert code == 0, text
    assert "You are player_1; player_0: tiny.npz, player_2: random" in text
    assert load_game(path).players == ["tiny.npz", "human", "random"]
    wrong = tmp_path / "wrong.npz"
    PolicyAgent([(np.zeros((5, 3)), np.zeros(3))]).save(wrong)
    assert run(["megagem", "--opponents", str(wrong)])[0] == 2


@pytest.mark.parametrize("argv,words", [
    (["chess"], "unknown game 'chess'"),
    ([], "give a GAME to play"),
    (["megagem", "--seat", "4"], "--seat must be in 0..3"),
    (["megagem", "--players", "9"], "num_players"),
    (["megagem", "--opponents", "alphazero"], "unknown agent 'alphazero'"),
    (["megagem", "--players", "4", "--opponents", "random", "random"], "one per other seat (3)"),
    (["megagem", "--opponents", "missing.zip"], "opponent 'missing.zip'"),
    (["megagem", "--option", "colour=red"], "colour"),
    (["megagem", "--option", "value_chart"], "--option takes KEY=VALUE"),
    (["megagem", "--players", "3", "--option", "num_players=3"], "give the number of players once"),
    (["megagem", "--table"], "go with --replay"),
    (["megagem", "--replay", "x.jsonl"], "give no GAME"),
    (["--replay", "x.jsonl", "--seed", "3"], "not --seed"),
    (["--replay", "x.jsonl", "--seat", "1", "--table"], "not both"),
])
def test_usage_errors_are_one_line(argv, words, capsys):
    assert main(["play", *argv], stdin=io.StringIO(), stdout=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err.startswith("gemenvs: error: ") and err.count("\n") == 1 and words in err, err


def test_colour_on_a_terminal_keeps_names_literal():
    out = io.StringIO()
    screen = Screen(io.StringIO(), out, color=True)
    screen.board(">player_0 bid[3]\n player_1")
    screen.error("bid[99] is not allowed now")
    text = out.getvalue()
    assert "\x1b[" in text and "bid[3]" in text and "bid[99]" in text
    plain = io.StringIO()
    Screen(io.StringIO(), plain).board(">player_0 bid[3]")  # not a terminal: plain text
    assert plain.getvalue() == ">player_0 bid[3]\n"


@pytest.mark.parametrize("module", ["gemenvs", "gemenvs.play"])
def test_python_dash_m(module):
    argv = ["play", "gem"] if module == "gemenvs" else ["gem"]
    proc = subprocess.run([sys.executable, "-m", module, *argv, "--players", "2", "--seed", "1"], input="1\nq\n",
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "You left the game." in proc.stdout and proc.stderr == ""
