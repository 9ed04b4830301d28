"""gemenvs play: a person's game driven by scripted input for every game (choices by number, by
amount in a bidding decision and by name, bad input answered with a reason and asked again, end of
input, q and Ctrl-C), spaced names of every action, help NAME, saved games, opponents given as
names or policy files, one-line usage errors, colour on a terminal."""
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
from gemenvs.megagem import rules as megagem_rules
from gemenvs.play import Screen, card_text, choice_lines, help_lines, parse_choice, topic_help
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

#: per game: numbers that choose nothing at the first decision, and what the answers say; in a
#: bidding decision a number is the amount (0 is a bid there), elsewhere a position in the list
BAD_NUMBERS = {
    "megagem": (["999", "-2"], ["bid 999 is not allowed now: you can bid at most ", "there is no bid of -2"]),
    "gem": (["999", "-2"], ["bid 999 is not allowed now: you can bid at most ", "there is no bid of -2"]),
    "gemjam": (["0", "999", "-2"], ["there is no choice 0", "there is no choice 999", "there is no choice -2"]),
}
#: what the empty answer says at the first decision
EMPTY = {"megagem": "type the amount to bid or the name", "gem": "type the amount to bid or the name",
         "gemjam": "type a number 1.."}

#: enough first-choice answers to finish any of the short games above: in MegaGem ``1`` is a
#: position or a bid of 1 (always allowed to a seat that is asked to bid)
FIRST_CHOICES = "1\n" * 400
#: GEM: a bid of 1, or (when it does not beat the highest bid) pass, or else the first choice
GEM_CHOICES = "1\npass\n" * 400


def run(argv, text=""):
    """Run ``gemenvs`` with scripted input; return (exit status, output)."""
    out = io.StringIO()
    code = main(["play", *argv], stdin=io.StringIO(text), stdout=out)
    return code, out.getvalue()


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_whole_game_by_scripted_input(name, tmp_path):
    argv, make, illegal, reason, legal, label = GAMES[name]
    numbers, said = BAD_NUMBERS[name]
    bad = ["", "xyzzy", *numbers, illegal]
    script = "\n".join(bad + ["?", "list", "log", legal]) + "\n" + (GEM_CHOICES if name == "gem" else FIRST_CHOICES)
    path = tmp_path / "game.jsonl"
    code, text = run([*argv, "--save", str(path)], script)
    assert code == 0, text
    assert EMPTY[name] in text  # the empty answer
    assert "no choice is called 'xyzzy'" in text
    assert all(words in text for words in said), said
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
    assert parse_choice(game, state, 0, legal, "4") == (bid[4], None)  # a bidding decision: the amount
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
    assert parse_choice(game, state, 0, legal, "0" * 20 + "2") == (game.action_spec["bid"][2], None)


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


def test_python_dash_m():
    proc = subprocess.run([sys.executable, "-m", "gemenvs", "play", "gem", "--players", "2", "--seed", "1"], input="1\nq\n",
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "You left the game." in proc.stdout and proc.stderr == ""


def _decision(game, seed, kinds):
    """The first (state, seat) of a game from ``seed`` (every seat taking its last legal action)
    whose legal actions are all in the action ranges ``kinds``, with more than one of them."""
    state = game.new_state(seed)
    while not game.is_over(state):
        p = game.to_act(state)[0]
        legal = [int(a) for a in game.legal_actions(state, p)]
        if len(legal) > 1 and {game.action_spec.decode(a)[0] for a in legal} <= set(kinds):
            return state, p
        game.apply(state, p, legal[-1])
    raise AssertionError(f"no {kinds} decision")


@pytest.mark.parametrize("make", [lambda: MegaGem(num_players=3), lambda: Gem(num_players=3)])
def test_a_bid_is_typed_as_its_amount(make):
    game = make()
    bid = game.action_spec["bid"]
    state, p = _decision(game, 5, {"bid", "pass"})
    legal = [int(a) for a in game.legal_actions(state, p)]
    amounts = [a - bid.start for a in legal if a in bid]
    k = amounts[len(amounts) // 2]
    for text in (str(k), f"+{k}", f"0{k}", f"bid {k}", f"BID[{k}]", f" bid  {k} "):
        assert parse_choice(game, state, p, legal, text) == (bid[k], None), text
    lines = choice_lines(game, legal)
    assert "type the amount to bid" in lines[0] and not any(") " in line for line in lines)  # not numbered
    assert any("type the amount to bid" in line for line in help_lines(game, legal))
    if bid.start + min(amounts) - 1 >= bid.start:  # a bid below the allowed ones: the engine's reason
        low = min(amounts) - 1
        action, reason = parse_choice(game, state, p, legal, str(low))
        assert action is None and game.why_illegal(state, p, bid[low]) in reason


def test_other_decisions_keep_their_numbers():
    game = MegaGem(num_players=3)
    state, p = _decision(game, 3, {"reveal"})
    legal = [int(a) for a in game.legal_actions(state, p)]
    assert parse_choice(game, state, p, legal, "1") == (legal[0], None)
    assert parse_choice(game, state, p, legal, "2") == (legal[1], None)
    assert choice_lines(game, legal)[0].lstrip().startswith("1) ")
    assert not any("amount" in line for line in help_lines(game, legal))
    action, reason = parse_choice(game, state, p, legal, "bid 99")  # the engine: no bid now
    assert action is None and reason == f"bid 99 is not allowed now: {game.why_illegal(state, p, 85)}"


@pytest.mark.parametrize("text", ["99", "bid 99", "bid[99]", "0" * 12 + "99", "9" * 40])
def test_a_bid_above_the_limit_states_the_limit(text):
    game = MegaGem(num_players=3)
    state = game.new_state(11)
    legal = [int(a) for a in game.legal_actions(state, 0)]
    limit = megagem_rules.bid_limit(state, 0)
    assert max(legal) == limit < 99 < 10**9 and game.max_bid < 99  # 99 is not even an action id
    action, reason = parse_choice(game, state, 0, legal, text)
    assert action is None and "\n" not in reason and len(reason) < 200
    assert f"is not allowed now: you can bid at most {limit}; " in reason
    assert game.why_illegal(state, 0, game.action_spec["bid"][limit + 1]) in reason  # the engine's words
    assert f"exceeds the limit of {limit} (coins)" in reason


def test_a_bid_above_the_limit_in_gem():
    game = Gem(num_players=3)
    state, p = _decision(game, 5, {"bid", "pass"})
    legal = [int(a) for a in game.legal_actions(state, p)]
    top = max(a for a in legal if a in game.action_spec["bid"])
    for text in ("999", "bid 999"):
        action, reason = parse_choice(game, state, p, legal, text)
        assert action is None and f"you can bid at most {top}; " in reason
        assert game.why_illegal(state, p, top + 1) in reason


SPACED = {  # a label -> its spaced form, as a person types it
    "play[Take Two]": "play take two", "pay_coin[1]": "pay coin 1", "end_plays": "end plays",
    "play[King's Ransom]": "play kings ransom", "play[Rat!]": "play rat", "target_player[+1 (left)]":
    "target player +1 left", "play[Ice Shard / Quartz Gem Jam]": "play ice shard quartz gem jam",
    "bank[Ruby/Starfire Dual Gem]": "bank ruby starfire dual gem", "reveal[Pink]": "reveal pink",
}


@pytest.mark.parametrize("make", [lambda: MegaGem(num_players=n) for n in (3, 5)]
                         + [lambda: Gem(num_players=n) for n in (2, 4)]
                         + [lambda: GemJam(num_players=n) for n in (2, 4)])
def test_every_action_has_a_spaced_name_that_chooses_it(make):
    from gemenvs.play import _words

    game = make()
    state = game.new_state(1)
    every = list(range(game.num_actions))  # all legal: the name alone must pick the action
    seat = game.to_act(state)[0]
    spec = game.action_spec
    forms = {}
    for a in every:
        label = spec.label(a)
        spaced = _words(label)
        assert spaced and not set(spaced) & set("[]_()/'!") and spaced == " ".join(spaced.split()), label
        forms.setdefault(spaced, []).append(a)
        for text in (spaced, spaced.upper(), label, label.lower(), label.replace("_", " ")):
            assert parse_choice(game, state, seat, every, text) == (a, None), (label, text)
    assert all(len(v) == 1 for v in forms.values())  # no two actions share a spaced name
    for label, spaced in SPACED.items():
        if label in {spec.label(a) for a in every}:
            a = next(a for a in every if spec.label(a) == label)
            assert _words(label) == spaced and parse_choice(game, state, seat, every, spaced) == (a, None)


def test_spaced_names_and_prefixes_at_a_gem_jam_decision():
    game = GemJam(num_players=2, max_rounds=2)
    state = game.new_state(4)
    legal = [int(a) for a in game.legal_actions(state, 0)]
    spec = game.action_spec
    play = [a for a in legal if spec.decode(a)[0] == "play"]
    assert play
    a = play[0]
    card = spec["play"].labels[spec.decode(a)[1]]
    assert parse_choice(game, state, 0, legal, f"Play {card}") == (a, None)
    assert parse_choice(game, state, 0, legal, "end plays") == (spec["end_plays"].start, None)
    assert parse_choice(game, state, 0, legal, "end") == (spec["end_plays"].start, None)  # a unique beginning


def test_every_gem_jam_card_has_a_one_line_text_of_its_own():
    game = GemJam()
    m = game.manifest
    texts = [card_text(m, k) for k in range(m.num_kinds)]
    for name, text in zip(m.names, texts):
        assert text.startswith(f"{name}: ") and "\n" not in text and len(text) < 400, text
        assert "S-" not in text and "§" not in text and "GEMJAM" not in text and ":func:" not in text, text
        assert "in the deck" in text, text
    assert len(set(texts)) == len(texts)
    by_name = dict(zip(m.names, texts))
    assert "Draw two cards" in by_name["Take Two"] and "bank it for 1 gold" in by_name["Take Two"]
    assert "pays 5" in by_name["Shakedown"] and "A reaction" in by_name["Counter Spell"]
    assert "2 / 4 / 8" in by_name["Ruby"] and "Ruby or Starfire" in by_name["Ruby/Starfire Dual Gem"]
    assert "draw one card" in by_name["Magic Mushroom"] and "sirens_call option" in by_name["Siren's Call"]


@pytest.mark.parametrize("topic,card", [("take two", "Take Two"), ("PLAY TAKE TWO", "Take Two"),
                                        ("play[Take Two]", "Take Two"), ("king's ransom", "King's Ransom"),
                                        ("kings", "King's Ransom"), ("bank gold 10", "Gold 10"), ("rat", "Rat!")])
def test_help_name_finds_a_gem_jam_card(topic, card):
    game = GemJam()
    lines, reason = topic_help(game, topic)
    assert reason is None and lines == [card_text(game.manifest, game.manifest.names.index(card))]


@pytest.mark.parametrize("topic,words", [("tsunamy", "no card is called 'tsunamy'; close matches: Tsunami"),
                                         ("gold", "'gold' could be 6 cards (Gold 1, "),
                                         ("qqqq", "no card is called 'qqqq'")])
def test_help_for_an_unknown_card_is_one_line(topic, words):
    lines, reason = topic_help(GemJam(), topic)
    assert lines == [] and words in reason and "\n" not in reason


def test_help_name_at_the_prompt():
    script = "help take two\n? tsunamy\n?take two\nq\n"
    code, text = run(["gemjam", "--players", "2", "--seed", "4"], script)
    assert code == 0, text
    assert text.count("Take Two: Draw two cards.") == 2 and "close matches: Tsunami" in text
    assert "help NAME: what a card does" in run(["gemjam", "--players", "2", "--seed", "4"], "?\nq\n")[1]
    for game in ("megagem", "gem"):
        code, text = run([game, "--players", "3", "--seed", "2"], "help take two\nhelp bid\n? xyzzy\nq\n")
        assert code == 0, text
        assert f"there is no card help for {'MegaGem' if game == 'megagem' else 'GEM'}" in text
        assert "bid[...]: bid that many" in text and "You left the game." in text


def test_a_short_spaced_name_chooses_the_one_legal_action_it_fits():
    """``pay 1`` is ``pay_coin[1]`` (spaced ``pay coin 1``) when no ``pay_card[1]`` is legal beside it, and a
    one-line question naming both when one is; the GEM decisions of seeded random games, every pay action."""
    from gemenvs.gem.game import Gem

    game = Gem(num_players=3)
    spec = game.action_spec
    rng = np.random.default_rng(0)
    seen = {"chosen": 0, "ambiguous": 0}
    for seed in range(30):
        state = game.new_state(seed)
        while not game.is_over(state):
            seat = game.to_act(state)[0]
            legal = [int(a) for a in game.legal_actions(state, seat)]
            pays = {a: spec.label(a)[:-1].split("[") for a in legal if spec.label(a).startswith("pay_")}
            for a, (group, arg) in pays.items():
                rivals = [b for b, (_, other) in pays.items() if other == arg]
                chosen, reason = parse_choice(game, state, seat, legal, f"pay {arg}")
                if len(rivals) == 1:
                    assert (chosen, reason) == (a, None)
                    seen["chosen"] += 1
                else:
                    assert chosen is None and reason.count("\n") == 0 and " or " in reason
                    assert all(spec.label(b) in reason for b in rivals)
                    seen["ambiguous"] += 1
            game.apply(state, seat, int(rng.choice(legal)))
    assert seen["chosen"] > 0, seen
