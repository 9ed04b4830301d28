"""Gem Jam rules, scenario by scenario: positions built by hand, outcomes from the rulebook
(``rules/004_d4e68cb040b3d32e.txt``, "§n") and GEMJAM-SETTLED.md ("S-n")."""
from __future__ import annotations

import numpy as np
import pytest

from gemenvs.gemjam import GemJam, ManifestError, load_manifest, rules, steps
from gemenvs.gemjam.data import DEFAULT_MANIFEST

# ---------------------------------------------------------------------------------- helpers


def kind(g: GemJam, name: str) -> int:
    """The card kind named ``name``."""
    return g.manifest.names.index(name)


def gem_type(g: GemJam, name: str) -> int:
    """The gem type named ``name``."""
    return g.manifest.type_names.index(name)


def table(g: GemJam, hands=None, vaults=None, shrines=None, turn=0, draw=None, discard=(), king=(), plays=3,
          stage="plays"):
    """A position with the given zones (card names); ``shrines[p]`` is a list of
    ``(type, [gem names], guarded)``. ``stage``: "plays" (seat ``turn`` chooses its next play),
    "adjust" (Stage 1, before the draw) or "turn" (the start of its turn)."""
    s = g.new_state(0)
    n = g.num_players
    s.hands = [sorted(kind(g, c) for c in (hands or {}).get(p, [])) for p in range(n)]
    s.vaults = [sorted(kind(g, c) for c in (vaults or {}).get(p, [])) for p in range(n)]
    s.shrines = [[] for _ in range(n)]
    s.next_set = 0
    for p, sets in (shrines or {}).items():
        for spec in sets:
            t, cards = spec[0], spec[1]
            guarded = spec[2] if len(spec) > 2 else False
            s.shrines[p].append(rules.ShrineSet(s.next_set, gem_type(g, t), int(guarded), 0,
                                                sorted(kind(g, c) for c in cards)))
            s.next_set += 1
    s.draw = [kind(g, c) for c in draw] if draw is not None else [kind(g, "Gold 1")] * 40
    s.draw_seen = [0] * len(s.draw)
    s.discard = [kind(g, c) for c in discard]
    s.king = sorted(kind(g, c) for c in king)
    s.recycled = 0
    s.turn, s.round, s.plays, s.spent_rebirths = turn, 1, plays, []
    s.asleep = s.frozen = s.timer = s.timer_used = 0
    s.hand_was_empty = int(not s.hands[turn])
    s.sleep_next, s.freeze_next = [0] * n, [0] * n
    s.stack, s.resolving, s.transit, s.aside = [], [], [], None
    s.seen_hand = [[[] for _ in range(n)] for _ in range(n)]
    s.seen_vault = [[[] for _ in range(n + 1)] for _ in range(n)]
    s.events, s.log, s.hidden = [], [], []
    s.over, s.winners, s.end_reason = 0, [], ""
    s.decision = None
    s.tasks = {"plays": [["plays", 1]], "adjust": [["after_adjust"], ["adjust", 1]],
               "turn": [["turn_start"]]}[stage]
    steps.run(s, g.cfg)
    g._play_forced(s)
    return s


def action(g: GemJam, step: str) -> int:
    """The action id of ``"name"`` or ``"name:arg"`` (arg: a label, or an index)."""
    name, _, arg = step.partition(":")
    r = g.action_spec[name]
    if not arg:
        return r.start
    if arg.isdigit() and name not in ("card", "play", "bank"):
        return r[int(arg)]
    return r[r.labels.index(arg)]


def act(g: GemJam, s, p: int, *steps: str) -> None:
    """Seat ``p`` takes ``steps`` in order; a step the engine already played as forced is skipped."""
    since = max((k + 1 for k, e in enumerate(s.log) if not e[2]), default=0)
    for step in steps:
        a = action(g, step)
        if p in g.to_act(s) and g.legal_mask(s, p)[a]:
            since = len(s.log)
            g.apply(s, p, a)
            continue
        if [p, a, 1] in s.log[since:]:
            continue  # a forced step, played by the engine
        raise AssertionError(f"{step} is not legal for seat {p} now: "
                             f"{g.why_illegal(s, p, a)}; legal: {[g.action_name(x) for x in g.legal_actions(s, p)]}")


def names(g: GemJam, kinds) -> list[str]:
    """Card names of a list of kinds, sorted."""
    return sorted(g.manifest.names[k] for k in kinds)


def set_names(g: GemJam, s, p: int) -> list[tuple[str, list[str], int]]:
    """``p``'s Shrine as (type, gem names, guarded) per set."""
    return [(g.manifest.type_names[x.gem_type], names(g, x.gems), x.guarded) for x in s.shrines[p]]


def deciding(g: GemJam, s) -> tuple[int, str]:
    """(seat, decision kind) of the pending decision."""
    return s.decision.seat, s.decision.kind


def legal_names(g: GemJam, s, p: int) -> list[str]:
    """The labels of ``p``'s legal actions."""
    return [g.action_name(a) for a in g.legal_actions(s, p)]


G = GemJam()  # 3 players, seat 0 to play unless a test says otherwise
GJ_RS = "Ruby / Starfire Gem Jam"
ANY_GJ = "Any 1 Gem Type Gem Jam"


def played(g, s, kind_name, event_kind):
    """Events of ``event_kind`` about card ``kind_name``."""
    k = kind(g, kind_name)
    return [e for e in s.events if e[1] == event_kind and k in e[2:]]


# ---------------------------------------------------------------------------------- the manifest


def test_default_manifest_is_the_reference_deck():
    m = load_manifest()
    assert len(m.deck(False)) == 172 and len(m.deck(True)) == 175
    assert sum(m.count[k] for k in range(m.num_kinds) if m.is_basic[k]) == 47
    assert sum(m.count[k] for k in range(m.num_kinds) if m.is_spell[k] and not m.optional[k]) == 82
    assert m.gold[kind(G, "Siren's Call")] == 1  # S-113, S-134


@pytest.mark.parametrize("change, message", [
    (lambda d: d["cards"][0].update(count=-1), r"cards\[0\] \('Ruby'\): count"),
    (lambda d: d["cards"][12].update(types=["Ruby", "Nope"]), r"cards\[12\].*gem type"),
    (lambda d: d["cards"][30].update(effect="fireball"), r"unknown spell effect 'fireball'"),
    (lambda d: d["gem_types"][0].update(payment=[1, 2]), r"gem_types\[0\] \(Ruby\): payment"),
    (lambda d: d.update(format="x"), "format must be"),
    (lambda d: d["cards"].pop(0), "gem type 'Ruby' needs exactly one Basic"),
])
def test_a_bad_manifest_is_refused_naming_the_entry(change, message):
    import json
    d = json.loads(DEFAULT_MANIFEST.read_text())
    change(d)
    with pytest.raises(ManifestError, match=message):
        GemJam(manifest=d)


def test_a_manifest_file_can_be_given_by_path():
    g = GemJam(manifest=str(DEFAULT_MANIFEST), num_players=2)
    assert g.manifest.names == G.manifest.names and g.manifest.source == str(DEFAULT_MANIFEST)
    with pytest.raises(ManifestError, match="cannot read"):
        GemJam(manifest="/nonexistent/deck.json")


def test_options_are_validated():
    with pytest.raises(ValueError, match="num_players must be an integer in 2..4; got 5"):
        GemJam(num_players=5)
    with pytest.raises(ValueError, match="turn_decision_limit"):
        GemJam(turn_decision_limit=0)
    with pytest.raises(ValueError, match="sirens_call must be True or False"):
        GemJam(sirens_call="yes")
    with pytest.raises(ValueError, match="max_rounds"):
        GemJam(max_rounds=0)


# ---------------------------------------------------------------------------------- Gem Jam amounts (§11)


def test_gem_jam_amounts_are_the_rulebook_examples():
    m = G.manifest
    ruby, sun = gem_type(G, "Ruby"), gem_type(G, "Sunstone")
    assert m.jam_amount(ruby, 4, 0) == 10  # 8 for a group of three + 2
    assert m.jam_amount(ruby, 6, 0) == 16
    assert m.jam_amount(ruby, 6, 2) == 24  # two guarded complete sets: +4 each
    assert m.jam_amount(sun, 4, 1) == 10  # 5 + 4 + 1


def test_four_ruby_type_gems_make_a_paired_gem_jam_of_10():
    # a Basic, a Dual as Ruby and a Rainbow as Ruby complete a set (§8); one more Ruby: 8 + 2
    s = table(G, hands={0: [GJ_RS, "Gold 1"]}, vaults={1: ["Gold 10", "Gold 2"]},
              shrines={0: [("Ruby", ["Ruby", "Ruby/Starfire Dual Gem", "Rainbow Gem"]), ("Ruby", ["Ruby"])]})
    act(G, s, 0, f"play:{GJ_RS}", "gem_type:Ruby", "target_player:1")
    assert ["jam", 0, gem_type(G, "Ruby"), 10] in [e[1:] for e in s.events]
    act(G, s, 1, "card:Gold 10")  # the payer chooses; 10 covers it, the 2 stays
    assert names(G, s.vaults[0]) == ["Gold 10"] and names(G, s.vaults[1]) == ["Gold 2"]
    assert deciding(G, s) == (0, "play") and s.plays == 2


def test_sunstone_set_with_guardian_and_one_more_gem_demands_10_of_each_opponent():
    s = table(G, hands={0: [ANY_GJ]}, vaults={1: ["Gold 5", "Gold 5", "Gold 3"]},
              shrines={0: [("Sunstone", ["Sunstone"] * 3, True), ("Sunstone", ["Sunstone"])]})
    act(G, s, 0, f"play:{ANY_GJ}", "gem_type:Sunstone")
    assert ["jam", 0, gem_type(G, "Sunstone"), 10] in [e[1:] for e in s.events]
    act(G, s, 1, "card:Gold 5", "card:Gold 5")
    assert names(G, s.vaults[0]) == ["Gold 5", "Gold 5"]
    # player 2 has nothing payable: the whole amount is forgiven (§14)
    assert ["forgiven", 2, 10] in [e[1:] for e in s.events]


def test_gem_jam_needs_a_basic_or_dual_of_the_type():
    # wildcards alone do not qualify (§10)
    s = table(G, hands={0: [ANY_GJ, GJ_RS]}, shrines={0: [("Ruby", ["Rainbow Gem", "Poison Cup"]),
                                                          ("Emerald", ["Emerald/Sapphire Dual Gem"])]})
    assert f"play[{ANY_GJ}]" in legal_names(G, s, 0) and f"play[{GJ_RS}]" not in legal_names(G, s, 0)
    act(G, s, 0, f"play:{ANY_GJ}")  # Emerald, the only type it qualifies for, is forced
    assert [e[1:] for e in s.events if e[1] == "cast"] == [["cast", 0, kind(G, ANY_GJ), -1, gem_type(G, "Emerald")]]


# ---------------------------------------------------------------------------------- payments (§14, §15)


def test_payment_one_card_at_a_time_overpaying_no_change():
    # owe 5 with 3 and 4: both go, 7 paid (§14 example)
    s = table(G, hands={0: ["Shakedown"]}, vaults={1: ["Gold 3", "Gold 4"]})
    act(G, s, 0, "play:Shakedown", "target_player:1")
    act(G, s, 1, "card:Gold 3")  # 2 left: the 4 is the only card, forced
    assert names(G, s.vaults[0]) == ["Gold 3", "Gold 4"] and s.vaults[1] == []


def test_payment_short_gives_everything_and_forgives_the_rest():
    s = table(G, hands={0: ["King's Ransom"]}, vaults={1: ["Gold 1"], 2: ["Gold 10"]},
              shrines={1: [("Ruby", ["Ruby", "Rainbow Gem"])]})
    act(G, s, 0, "play:King's Ransom")
    # player 1: Gold 1 + Ruby (3) = 4 >= 3 owed: it chooses; the Rainbow is never payable
    act(G, s, 1, "card:Gold 1", "set:0")
    assert set_names(G, s, 1) == [("Ruby", ["Rainbow Gem"], 0)]
    assert ("Ruby", ["Ruby"], 0) in set_names(G, s, 0)  # the receiver placed the Basic in its Shrine
    assert names(G, s.vaults[0]) == ["Gold 1", "Gold 10"]  # player 2 paid 10 for 3: no change


def test_a_guardian_pays_first_and_the_receiver_attaches_or_banks_it():
    s = table(G, hands={0: ["Shakedown"]}, shrines={0: [("Ruby", ["Ruby"] * 3)],
                                                     1: [("Sapphire", ["Sapphire"] * 3, True)]})
    act(G, s, 0, "play:Shakedown", "target_player:1")
    # the only first card is the Guardian (S-57); the receiver may attach it to its complete set
    assert deciding(G, s) == (0, "receive_guardian")
    act(G, s, 0, "set:0")
    assert set_names(G, s, 0)[0] == ("Ruby", ["Ruby"] * 3, 1)
    # 2 left: now the set is unprotected and a Sapphire goes; the set is broken, without penalty
    assert set_names(G, s, 1) == [("Sapphire", ["Sapphire"] * 2, 0)]
    assert ("Sapphire", ["Sapphire"], 0) in set_names(G, s, 0)


def test_a_received_guardian_without_an_eligible_set_is_banked():
    s = table(G, hands={0: ["Shakedown"]}, vaults={1: ["Gem Guardian", "Gold 4"]})
    act(G, s, 0, "play:Shakedown", "target_player:1", )
    act(G, s, 1, "card:Gem Guardian")
    assert names(G, s.vaults[0]) == ["Gem Guardian", "Gold 4"]


# ---------------------------------------------------------------------------------- the stack (§16)


def test_armageddon_counter_spell_diabolic_denial_chain():
    s = table(G, hands={0: ["Armageddon", "Diabolic Denial", "Gold 1", "Gold 2"], 1: ["Counter Spell"]},
              shrines={1: [("Ruby", ["Ruby"] * 3), ("Emerald", ["Emerald"])]})
    act(G, s, 0, "play:Armageddon", "target_player:1", "set:0")
    act(G, s, 1, "play:Counter Spell")
    act(G, s, 0, "play:Diabolic Denial")
    # Diabolic Denial resolves: Counter Spell is cancelled; its caster discards a card
    act(G, s, 0, "card:Gold 1")
    # Armageddon proceeds; its victim may draw one card
    assert deciding(G, s) == (1, "may_draw")
    act(G, s, 1, "yes")
    assert set_names(G, s, 1) == [("Emerald", ["Emerald"], 0)]  # a cancelled Counter returns nothing
    assert names(G, s.king) == ["Ruby"] * 3
    assert names(G, s.discard) == sorted(["Gold 1", "Diabolic Denial", "Counter Spell", "Armageddon"])
    assert len(s.hands[1]) == 1 and names(G, s.hands[0]) == ["Gold 2"]
    assert [e[1] for e in s.events if e[1] in ("cast", "cancelled", "resolve")] == [
        "cast", "cast", "cast", "resolve", "cancelled", "resolve"]


def test_counter_spell_cancels_and_returns_a_gem_even_from_a_complete_set():
    s = table(G, hands={0: ["Take Two", "Gold 1"], 1: ["Counter Spell"]}, shrines={1: [("Ruby", ["Ruby"] * 3)]})
    act(G, s, 0, "play:Take Two")
    act(G, s, 1, "play:Counter Spell")
    # its only unprotected gems are in a complete set: one must return (§16), no penalty (S-48)
    assert names(G, s.hands[1]) == ["Ruby"] and set_names(G, s, 1) == [("Ruby", ["Ruby"] * 2, 0)]
    assert names(G, s.hands[0]) == ["Gold 1"] and deciding(G, s) == (0, "play")


def test_a_spell_cannot_be_countered_by_its_caster_and_reactions_need_a_window():
    s = table(G, hands={0: ["Take Two", "Counter Spell"]})
    assert "play[Counter Spell]" not in legal_names(G, s, 0)  # S-9: only in a window
    act(G, s, 0, "play:Take Two")  # nobody can answer: the windows pass by themselves
    assert len(s.hands[0]) == 3


def test_double_trouble_doubles_twice_and_a_countered_one_does_nothing():
    s = table(G, hands={0: [ANY_GJ, "Double Trouble", "Double Trouble"]},
              shrines={0: [("Diamond", ["Diamond"] * 2)]}, vaults={1: ["Gold 10"] * 4, 2: ["Gold 10"] * 4})
    act(G, s, 0, f"play:{ANY_GJ}")
    act(G, s, 0, "play:Double Trouble", "play:Double Trouble")
    assert ["jam", 0, gem_type(G, "Diamond"), 36] in [e[1:] for e in s.events]  # 9 x 4
    assert len(s.vaults[0]) == 8  # each opponent pays four 10s for 36: no change
    assert s.turn == 1  # three plays used: the turn is over

    s = table(G, hands={0: [ANY_GJ, "Double Trouble", "Gold 1"], 1: ["Counter Spell"]},
              shrines={0: [("Diamond", ["Diamond"] * 2)]}, vaults={1: ["Gold 10"], 2: ["Gold 10"]})
    act(G, s, 0, f"play:{ANY_GJ}")
    act(G, s, 1, "pass")
    act(G, s, 0, "play:Double Trouble")
    act(G, s, 1, "play:Counter Spell")
    assert ["jam", 0, gem_type(G, "Diamond"), 9] in [e[1:] for e in s.events]
    assert s.plays == 1  # the cancelled Double Trouble's play stays used (C-5)


def test_double_trouble_from_hand_makes_an_opponent_discard():
    s = table(G, hands={0: ["Double Trouble"], 2: ["Gold 1", "Tsunami"]})
    act(G, s, 0, "play:Double Trouble", "target_player:2")
    act(G, s, 2, "card:Tsunami")
    assert names(G, s.discard) == ["Double Trouble", "Tsunami"]


def test_chaos_cube_recasts_the_spell_at_a_new_target():
    s = table(G, hands={0: ["Rat!"], 1: ["Chaos Cube"]},
              shrines={0: [("Sapphire", ["Sapphire"])], 1: [("Emerald", ["Emerald"])], 2: [("Onyx", ["Onyx"])]})
    act(G, s, 0, "play:Rat!", "target_player:1", "set:0")
    act(G, s, 1, "play:Chaos Cube")
    # player 1 now owns Rat! and picks new targets (its own gems excluded): the original caster's gem
    assert deciding(G, s) == (1, "chaos_cube")
    act(G, s, 1, "target_player:2", "set:0")  # +2 from seat 1 is seat 0
    assert set_names(G, s, 1) == [("Emerald", ["Emerald"], 0), ("Sapphire", ["Sapphire"], 0)]
    assert s.shrines[0] == [] and set_names(G, s, 2) == [("Onyx", ["Onyx"], 0)]


def test_a_countered_chaos_cube_lets_the_original_spell_resolve():
    s = table(G, hands={0: ["Rat!", "Counter Spell"], 1: ["Chaos Cube"]},
              shrines={0: [("Sapphire", ["Sapphire"])], 1: [("Emerald", ["Emerald"])]})
    act(G, s, 0, "play:Rat!", "target_player:1", "set:0")
    act(G, s, 1, "play:Chaos Cube")
    act(G, s, 0, "play:Counter Spell")
    # Counter Spell's return takes player 0's only gem back to hand (S-140), then Rat! resolves
    assert names(G, s.hands[0]) == ["Sapphire"]
    assert set_names(G, s, 0) == [("Emerald", ["Emerald"], 0)] and s.shrines[1] == []


def test_chaos_cube_only_answers_spells_at_the_reacting_players_gems():
    s = table(G, hands={0: ["Rat!"], 1: ["Chaos Cube"], 2: ["Chaos Cube"]},
              shrines={1: [("Emerald", ["Emerald"])], 2: [("Onyx", ["Onyx"])]})
    act(G, s, 0, "play:Rat!", "target_player:1", "set:0")
    assert deciding(G, s) == (1, "react")
    act(G, s, 1, "pass")
    # player 2's gems are not targeted: its Chaos Cube is no answer, its pass was automatic
    assert set_names(G, s, 0) == [("Emerald", ["Emerald"], 0)]
    assert [2, G.action_spec["pass"].start, 1] in s.log


# ---------------------------------------------------------------------------------- gem manipulation


def test_dragons_loot_takes_a_complete_set_intact_but_not_a_guarded_one():
    s = table(G, hands={0: ["Dragon's Loot"]},
              shrines={1: [("Ruby", ["Ruby", "Ruby", "Rainbow Gem"]), ("Onyx", ["Onyx"] * 4, True)]})
    act(G, s, 0, "play:Dragon's Loot", "target_player:1")  # the guarded Onyx set is no target: set forced
    assert set_names(G, s, 0) == [("Ruby", ["Rainbow Gem", "Ruby", "Ruby"], 0)]
    assert set_names(G, s, 1) == [("Onyx", ["Onyx"] * 4, 1)]


def test_meteor_strike_destroys_a_gem_outside_complete_sets():
    s = table(G, hands={0: ["Meteor Strike"]}, shrines={1: [("Ruby", ["Ruby"] * 3), ("Quartz", ["Quartz"])]})
    act(G, s, 0, "play:Meteor Strike", "target_player:1")
    assert names(G, s.king) == ["Quartz"] and set_names(G, s, 1) == [("Ruby", ["Ruby"] * 3, 0)]


def test_tsunami_breaks_a_complete_set_without_penalty():
    s = table(G, hands={0: ["Tsunami"]}, shrines={1: [("Ruby", ["Ruby", "Ruby", "Ruby/Starfire Dual Gem"])]})
    act(G, s, 0, "play:Tsunami", "target_player:1")
    assert set_names(G, s, 1) == [("Ruby", ["Ruby", "Ruby/Starfire Dual Gem"], 0)]
    assert names(G, s.king) == ["Ruby"]


def test_golem_grab_steals_a_basic_from_a_complete_set():
    s = table(G, hands={0: ["Golem Grab"]}, shrines={0: [("Ruby", ["Ruby"])],
                                                      1: [("Ruby", ["Ruby", "Ruby", "Rainbow Gem"])]})
    act(G, s, 0, "play:Golem Grab", "target_player:1")
    assert set_names(G, s, 0) == [("Ruby", ["Ruby", "Ruby"], 0)]  # into its incomplete Ruby set
    assert set_names(G, s, 1) == [("Ruby", ["Rainbow Gem", "Ruby"], 0)]


def test_rat_thief_chooses_the_type_of_a_stolen_dual():
    s = table(G, hands={0: ["Rat!"]}, shrines={1: [("Ruby", ["Ruby/Starfire Dual Gem"])]})
    act(G, s, 0, "play:Rat!", "target_player:1")
    assert deciding(G, s) == (0, "place")
    act(G, s, 0, "gem_type:Starfire")
    assert set_names(G, s, 0) == [("Starfire", ["Ruby/Starfire Dual Gem"], 0)]


def test_switch_swaps_two_gems_outside_complete_sets():
    s = table(G, hands={0: ["Switch"]}, shrines={0: [("Ruby", ["Ruby"])], 1: [("Onyx", ["Onyx"])]})
    act(G, s, 0, "play:Switch", "target_player:1")
    assert set_names(G, s, 0) == [("Onyx", ["Onyx"], 0)] and set_names(G, s, 1) == [("Ruby", ["Ruby"], 0)]


def test_forced_wager_on_ones_own_magic_mushroom_draws_twice_with_two_plays():
    s = table(G, hands={0: ["Forced Wager"]}, shrines={0: [("Ruby", ["Ruby", "Magic Mushroom"])]})
    act(G, s, 0, "play:Forced Wager", "target_player:0", "set:0", "card:Magic Mushroom")
    act(G, s, 0, "yes")  # its original owner may draw
    assert names(G, s.hands[0]) == ["Gold 1", "Magic Mushroom"]
    act(G, s, 0, "play:Magic Mushroom", "gem_type:Sapphire")  # draws again when played from hand
    assert names(G, s.hands[0]) == ["Gold 1", "Gold 1"] and s.plays == 1
    assert ("Sapphire", ["Magic Mushroom"], 0) in set_names(G, s, 0)


# ---------------------------------------------------------------------------------- wildcards (§9)


def test_mirror_madness_copies_an_opponents_basic_and_keeps_its_type():
    s = table(G, hands={0: ["Mirror Madness", "Tsunami"]},
              shrines={1: [("Ruby", ["Ruby"])], 2: [("Emerald", ["Emerald/Sapphire Dual Gem"])]})
    assert [a for a in legal_names(G, s, 0) if a.startswith("play[Mirror")] == ["play[Mirror Madness]"]
    act(G, s, 0, "play:Mirror Madness")  # Ruby is the only Basic in an opponent's Shrine: forced
    assert set_names(G, s, 0) == [("Ruby", ["Mirror Madness"], 0)]
    act(G, s, 0, "play:Tsunami", "target_player:1")
    assert s.shrines[1] == [] and set_names(G, s, 0) == [("Ruby", ["Mirror Madness"], 0)]
    # with no Basic in any opponent's Shrine, it may not change type by adjustment either
    assert rules.adjust_cands(s, G.cfg, 0) == [[G.action_spec["adjust"].start]]


def test_mirror_madness_cannot_be_played_without_a_source():
    s = table(G, hands={0: ["Mirror Madness", "Gold 1"]}, shrines={1: [("Ruby", ["Rainbow Gem"])]})
    assert legal_names(G, s, 0) == ["bank[Gold 1]", "end_plays"]


def test_poison_cup_discards_after_it_is_placed():
    s = table(G, hands={0: ["Poison Cup", "Gold 2", "Take Two"]})
    act(G, s, 0, "play:Poison Cup", "gem_type:Onyx")
    assert deciding(G, s) == (0, "discard")
    act(G, s, 0, "card:Take Two")
    assert names(G, s.discard) == ["Take Two"] and set_names(G, s, 0) == [("Onyx", ["Poison Cup"], 0)]


# ---------------------------------------------------------------------------------- adjustments and breaks (§7)


def test_voluntary_break_not_restored_forfeits_the_rest_to_the_kings_vault():
    s = table(G, hands={0: ["Gold 1"]}, shrines={0: [("Ruby", ["Ruby", "Ruby", "Rainbow Gem"])]}, stage="adjust")
    act(G, s, 0, "adjust:move", "set:0", "card:Rainbow Gem", "gem_type:Emerald")
    assert set_names(G, s, 0) == [("Ruby", ["Ruby", "Ruby"], 0), ("Emerald", ["Rainbow Gem"], 0)]
    assert s.shrines[0][0].broken == 1
    act(G, s, 0, "end_plays")
    assert names(G, s.king) == ["Ruby", "Ruby"]
    assert set_names(G, s, 0) == [("Emerald", ["Rainbow Gem"], 0)]  # the moved gem stays


def test_voluntary_break_restored_in_the_same_turn_costs_nothing():
    s = table(G, hands={0: ["Ruby"]}, shrines={0: [("Ruby", ["Ruby", "Ruby", "Rainbow Gem"])]}, stage="adjust")
    act(G, s, 0, "adjust:move", "set:0", "card:Rainbow Gem", "gem_type:Emerald")
    act(G, s, 0, "play:Ruby", "end_plays")
    assert s.king == [] and ("Ruby", ["Ruby"] * 3, 0) in set_names(G, s, 0)


def test_a_swap_repairs_a_full_set_without_a_basic_and_guarded_sets_stay_put():
    # S-24: three non-Basic Ruby gems fill a set that stays incomplete; a later Basic starts a
    # new set; a Swap puts the Basic in and the Rainbow out
    s = table(G, hands={0: ["Gold 1"]}, stage="adjust",
              shrines={0: [("Onyx", ["Onyx"] * 4, True),
                           ("Ruby", ["Ruby/Starfire Dual Gem", "Rainbow Gem", "Poison Cup"]), ("Ruby", ["Ruby"])]})
    assert rules.complete_sets(s, G.cfg, 0) == 1
    cands = rules.adjust_cands(s, G.cfg, 0)
    assert all(c[1] != G.action_spec["set"][0] for c in cands[1:])  # the guarded set is never touched
    act(G, s, 0, "adjust:swap", "set:1", "card:Rainbow Gem", "set:2", "card:Ruby")
    assert set_names(G, s, 0)[1:] == [("Ruby", ["Poison Cup", "Ruby", "Ruby/Starfire Dual Gem"], 0),
                                      ("Ruby", ["Rainbow Gem"], 0)]
    assert rules.complete_sets(s, G.cfg, 0) == 2


# ---------------------------------------------------------------------------------- hand, deck and vault spells


def test_eye_see_shows_two_cards_the_caster_keeps_one_and_remembers_the_other():
    s = table(G, hands={0: ["Eye See!"], 1: ["Gold 2", "Tsunami"]})
    act(G, s, 0, "play:Eye See!", "target_player:1")
    assert deciding(G, s) == (0, "eye_see")
    obs = G.observe(s, 0)
    shown = G.spec.view(obs, "shown")
    assert shown[kind(G, "Tsunami")] > 0 and shown[kind(G, "Gold 2")] > 0
    assert G.spec.view(G.observe(s, 2), "shown").sum() == 0
    act(G, s, 0, "card:Tsunami")
    assert names(G, s.hands[0]) == ["Tsunami"] and names(G, s.hands[1]) == ["Gold 2"]
    assert G.spec.view(G.observe(s, 0), "known_hands")[1, kind(G, "Gold 2")] > 0
    assert G.spec.view(G.observe(s, 2), "known_hands").sum() == 0


def test_howling_fear_chosen_opponent_discards_two_the_other_one():
    s = table(G, hands={0: ["Howling Fear", "Gold 1"], 1: ["Gold 1", "Gold 2", "Gold 3"], 2: ["Gold 4", "Gold 5"]})
    act(G, s, 0, "play:Howling Fear", "target_player:2")
    act(G, s, 2, "card:Gold 4")  # then Gold 5 is forced
    act(G, s, 1, "card:Gold 3")
    assert names(G, s.hands[2]) == [] and names(G, s.hands[1]) == ["Gold 1", "Gold 2"]


def test_lucky_draw_draws_three_discards_one_of_them_and_opponents_may_draw():
    s = table(G, hands={0: ["Lucky Draw"]}, draw=["Gold 1"] * 10 + ["Gold 2", "Gold 3", "Gold 4"])
    act(G, s, 0, "play:Lucky Draw", "card:Gold 2")
    act(G, s, 1, "yes")
    act(G, s, 2, "pass")
    assert names(G, s.hands[0]) == ["Gold 3", "Gold 4"] and len(s.hands[1]) == 1 and s.hands[2] == []


def test_fire_reborn_discards_two_then_draws_five():
    s = table(G, hands={0: ["Fire Reborn", "Gold 2", "Gold 3", "Gold 4"]})
    act(G, s, 0, "play:Fire Reborn", "card:Gold 2", "card:Gold 3")
    assert names(G, s.hands[0]) == ["Gold 1"] * 5 + ["Gold 4"]


def test_take_two_and_reanimate():
    s = table(G, hands={0: ["Take Two", "Reanimate"]}, discard=["Armageddon", "Gold 5"])
    act(G, s, 0, "play:Take Two")
    assert len(s.hands[0]) == 3
    act(G, s, 0, "play:Reanimate", "card:Armageddon")
    assert "Armageddon" in names(G, s.hands[0]) and names(G, s.discard) == ["Gold 5", "Reanimate", "Take Two"]


def test_reanimate_is_not_castable_on_an_empty_discard_pile():
    s = table(G, hands={0: ["Reanimate"]})
    assert "play[Reanimate]" not in legal_names(G, s, 0)


def test_natures_rebirth_takes_a_random_discard_and_grants_a_play():
    s = table(G, hands={0: ["Nature's Rebirth"]}, discard=["Gold 5"])
    act(G, s, 0, "play:Nature's Rebirth")
    assert names(G, s.hands[0]) == ["Gold 5"] and s.plays == 3


def test_greedy_goblin_searches_the_kings_vault():
    s = table(G, hands={0: ["Greedy Goblin"]}, king=["Diamond", "Gold 10"])
    act(G, s, 0, "play:Greedy Goblin", "king_vault", "card:Gold 10")
    assert names(G, s.hands[0]) == ["Gold 10"] and names(G, s.king) == ["Diamond"]
    assert G.spec.view(G.observe(s, 0), "known_vaults")[3, kind(G, "Diamond")] > 0


def test_basilisk_splits_two_cards_between_hand_and_vault():
    s = table(G, hands={0: ["Basilisk"]}, vaults={1: ["Gold 10", "Counter Spell"]})
    act(G, s, 0, "play:Basilisk", "target_player:1", "card:Counter Spell")
    assert names(G, s.hands[0]) == ["Counter Spell"] and names(G, s.vaults[0]) == ["Gold 10"]


def test_gem_guardian_protects_and_adds_to_payments():
    s = table(G, hands={0: ["Gem Guardian"], 1: ["Dragon's Loot"]}, shrines={0: [("Quartz", ["Quartz"] * 2)]})
    act(G, s, 0, "play:Gem Guardian")
    assert set_names(G, s, 0) == [("Quartz", ["Quartz"] * 2, 1)]


def test_sleep_and_freeze_bind_each_opponent_in_its_next_turn():
    s = table(G, hands={0: ["Sleep Spell", "Freeze"], 1: ["Take Two", "Ruby", "Gold 1"]})
    act(G, s, 0, "play:Sleep Spell", "play:Freeze", "end_plays")
    act(G, s, 1, "adjust:none") if deciding(G, s) == (1, "adjust") else None
    legal = legal_names(G, s, 1)
    assert "play[Take Two]" not in legal and "play[Ruby]" not in legal and "bank[Take Two]" in legal


def test_sirens_call_option_logs_the_named_player_and_draws():
    g = GemJam(sirens_call=True)
    s = table(g, hands={0: ["Siren's Call"]})
    act(g, s, 0, "play:Siren's Call", "target_player:2")
    assert len(s.hands[0]) == 1 and "Siren's Call: player_0 names player_2" in g.game_log(s, 1)


# ---------------------------------------------------------------------------------- turn structure


def test_win_at_the_start_of_ones_turn_and_in_the_middle_of_it():
    four = [("Ruby", ["Ruby"] * 3), ("Onyx", ["Onyx"] * 4), ("Quartz", ["Quartz"] * 2), ("Diamond", ["Diamond"] * 2)]
    s = table(G, shrines={1: four}, stage="turn", turn=1)
    assert s.over and s.winners == [1] and s.end_reason == "four_sets"
    s = table(G, hands={0: ["Quartz"]}, shrines={0: four[:3] + [("Diamond", ["Diamond"])]})
    act(G, s, 0, "play:Quartz")
    assert not s.over
    s = table(G, hands={0: ["Diamond"]}, shrines={0: four[:3] + [("Diamond", ["Diamond"])]})
    act(G, s, 0, "play:Diamond")
    assert s.over and s.winners == [0]


def test_hand_limit_puts_the_excess_under_the_draw_pile():
    s = table(G, hands={0: ["Gold 2"] * 8 + ["Gold 3"]})
    act(G, s, 0, "end_plays", "card:Gold 3", "card:Gold 2")
    assert len(s.hands[0]) == 7 and names(G, s.draw[:2]) == ["Gold 2", "Gold 3"]
    assert s.draw_seen[:2] == [1, 1] and s.turn == 1


def test_draw_pile_recycles_once_then_the_game_ends():
    s = table(G, hands={0: ["Take Two"]}, draw=["Gold 1"], discard=["Gold 2"],
              shrines={1: [("Quartz", ["Quartz"] * 2)]})
    act(G, s, 0, "play:Take Two")
    assert s.recycled and names(G, s.hands[0]) == ["Gold 1", "Gold 2"] and not s.over
    s2 = table(G, hands={0: ["Take Two"]}, draw=["Gold 1"], shrines={1: [("Quartz", ["Quartz"] * 2)]})
    s2.recycled = 1
    act(G, s2, 0, "play:Take Two")
    assert s2.over and s2.end_reason == "deck_out" and s2.winners == [1]


def test_timer_penalty_lets_the_designated_opponent_take_a_random_card_once_a_turn():
    g = GemJam(turn_decision_limit=1)
    # the adjustment is counted decision 1; the first play choice is the 2nd: past the limit
    s = table(g, hands={0: ["Gold 2", "Gold 3", "Gold 4"]}, stage="turn")
    assert deciding(g, s) == (1, "timer")  # 3 players: the player to the left
    act(g, s, 1, "yes")
    assert len(s.hands[0]) == 4 and len(s.discard) == 1 and deciding(g, s) == (0, "play")
    act(g, s, 0, "bank:Gold 1")
    assert deciding(g, s) == (0, "play")  # at most once a turn


def test_designated_timer_seat():
    assert [rules.designated(GemJam(num_players=n).cfg, 1) for n in (2, 3, 4)] == [0, 2, 3]


def test_max_rounds_ends_the_game_scored_as_a_deck_out():
    g = GemJam(num_players=2, max_rounds=1)
    s = g.new_state(3)
    rng = np.random.default_rng(0)
    while not s.over:
        p = g.to_act(s)[0]
        g.apply(s, p, int(rng.choice(g.legal_actions(s, p))))
    assert s.round == 1 and s.end_reason in ("max_rounds", "four_sets")


# ---------------------------------------------------------------------------------- further settled points


def test_double_trouble_doubles_the_guardian_bonus_too():
    # §12: the entire payment, Guardian bonuses included: (9 + 4) x 2
    s = table(G, hands={0: [ANY_GJ, "Double Trouble", "Gold 1"]}, vaults={1: ["Gold 10"] * 3},
              shrines={0: [("Diamond", ["Diamond"] * 2, True)]})
    act(G, s, 0, f"play:{ANY_GJ}", "play:Double Trouble")
    assert ["jam", 0, gem_type(G, "Diamond"), 26] in [e[1:] for e in s.events]


def test_a_paired_gem_jam_may_name_an_opponent_with_nothing_to_pay():
    s = table(G, hands={0: [GJ_RS, "Gold 1"]}, shrines={0: [("Ruby", ["Ruby"])]})
    act(G, s, 0, f"play:{GJ_RS}", "target_player:2")
    assert ["forgiven", 2, 2] in [e[1:] for e in s.events] and deciding(G, s) == (0, "play")


def test_chaos_cube_recast_of_switch_uses_the_recasters_own_gem():
    # S-89: player 1 swaps one of its own gems with a gem of any other player
    s = table(G, hands={0: ["Switch"], 1: ["Chaos Cube"]},
              shrines={0: [("Ruby", ["Ruby"])], 1: [("Emerald", ["Emerald"]), ("Quartz", ["Quartz"])],
                       2: [("Onyx", ["Onyx"])]})
    act(G, s, 0, "play:Switch", "target_player:1", "set:0")
    act(G, s, 1, "play:Chaos Cube")
    act(G, s, 1, "set:1", "target_player:1", "set:0")  # its Quartz for player 2's Onyx
    assert set_names(G, s, 1) == [("Emerald", ["Emerald"], 0), ("Onyx", ["Onyx"], 0)]
    assert set_names(G, s, 2) == [("Quartz", ["Quartz"], 0)] and set_names(G, s, 0) == [("Ruby", ["Ruby"], 0)]


def test_chaos_cube_without_a_new_target_makes_the_spell_fail():
    s = table(G, hands={0: ["Meteor Strike", "Gold 1"], 1: ["Chaos Cube"]}, shrines={1: [("Emerald", ["Emerald"])]})
    act(G, s, 0, "play:Meteor Strike", "target_player:1")
    act(G, s, 1, "play:Chaos Cube")
    # nobody else has a gem outside a complete set: the stolen Meteor Strike fails (S-90)
    assert set_names(G, s, 1) == [("Emerald", ["Emerald"], 0)]
    assert names(G, s.discard) == ["Chaos Cube", "Meteor Strike"] and deciding(G, s) == (0, "play")


def test_a_recast_can_be_taken_again_by_its_new_target():
    s = table(G, hands={0: ["Rat!", "Chaos Cube", "Gold 1"], 1: ["Chaos Cube"]},
              shrines={0: [("Sapphire", ["Sapphire"])], 1: [("Emerald", ["Emerald"])]})
    act(G, s, 0, "play:Rat!", "target_player:1", "set:0")
    act(G, s, 1, "play:Chaos Cube")
    act(G, s, 1, "target_player:2")  # at player 0's Sapphire (the only target left)
    act(G, s, 0, "play:Chaos Cube")  # player 0 takes it back: only player 1's Emerald is left
    assert set_names(G, s, 0) == [("Sapphire", ["Sapphire"], 0), ("Emerald", ["Emerald"], 0)]
    assert s.shrines[1] == []


def test_counter_spell_return_can_defeat_a_spell_of_its_own_side():
    # S-140: player 1's Counter Spell must return its only gem, the one player 0's Rat! targets
    s = table(G, hands={0: ["Rat!", "Gold 1"], 1: ["Counter Spell"], 2: ["Diabolic Denial"]},
              shrines={1: [("Emerald", ["Emerald"])]})
    act(G, s, 0, "play:Rat!", "target_player:1")
    act(G, s, 1, "pass")
    act(G, s, 2, "play:Diabolic Denial")  # player 2 counters player 0's Rat!
    act(G, s, 0, "pass")
    act(G, s, 1, "play:Counter Spell")  # player 1 counters the Denial, so Rat! would go on
    assert names(G, s.hands[1]) == ["Emerald"] and s.shrines[1] == []
    assert [e for e in s.events if e[1] == "fail"] and s.shrines[0] == []


def test_eye_see_with_one_card_may_return_it_and_basilisk_with_one_card_may_bank_it():
    s = table(G, hands={0: ["Eye See!", "Basilisk", "Gold 1"], 1: ["Tsunami"]}, king=["Gold 10"])
    act(G, s, 0, "play:Eye See!", "target_player:1", "pass")
    assert names(G, s.hands[1]) == ["Tsunami"]
    act(G, s, 0, "play:Basilisk", "king_vault", "bank:Gold 10")
    assert names(G, s.vaults[0]) == ["Gold 10"] and s.king == []


def test_greedy_goblin_may_search_ones_own_vault_and_spells_regain_their_ability():
    s = table(G, hands={0: ["Greedy Goblin", "Gold 1"]}, vaults={0: ["Take Two", "Gold 5"]})
    act(G, s, 0, "play:Greedy Goblin", "target_player:0", "card:Take Two")
    act(G, s, 0, "play:Take Two")
    assert len(s.hands[0]) == 3


def test_four_sets_made_off_turn_count_only_at_the_start_of_ones_own_turn():
    # player 1 completes its fourth set in player 0's turn (a Chaos Cube recast of Golem Grab)
    three = [("Onyx", ["Onyx"] * 4), ("Quartz", ["Quartz"] * 2), ("Sapphire", ["Sapphire"] * 3)]
    s = table(G, hands={0: ["Golem Grab", "Gold 1"], 1: ["Chaos Cube"]},
              shrines={0: [("Diamond", ["Diamond"])], 1: three + [("Diamond", ["Diamond"]), ("Ruby", ["Ruby"])]})
    act(G, s, 0, "play:Golem Grab", "target_player:1", "set:4")
    act(G, s, 1, "play:Chaos Cube")  # the recast's only target: player 0's Diamond
    assert rules.complete_sets(s, G.cfg, 1) == 4 and not s.over  # §1: it must wait for its turn
    act(G, s, 0, "end_plays")
    assert s.over and s.winners == [1] and s.end_reason == "four_sets"


def test_sleep_blocks_reactions_in_ones_own_next_turn_only():
    s = table(G, hands={0: ["Sleep Spell", "Gold 1"], 1: ["Counter Spell", "Take Two"]})
    act(G, s, 0, "play:Sleep Spell")
    act(G, s, 1, "pass")
    act(G, s, 0, "end_plays")
    assert s.turn == 1 and s.asleep
    assert "play[Take Two]" not in legal_names(G, s, 1) and "bank[Take Two]" in legal_names(G, s, 1)


def test_freeze_does_not_stop_received_gems():
    s = table(G, hands={0: ["Freeze", "Gold 1"], 1: ["Ruby", "Rat!"]}, shrines={0: [("Onyx", ["Onyx"])]})
    act(G, s, 0, "play:Freeze", "end_plays")
    assert s.turn == 1 and s.frozen
    assert "play[Ruby]" not in legal_names(G, s, 1)
    act(G, s, 1, "play:Rat!", "target_player:2")  # player 0 seen from seat 1; placement is no gem play
    assert set_names(G, s, 1) == [("Onyx", ["Onyx"], 0)]


def test_armageddon_victim_may_decline_the_draw():
    s = table(G, hands={0: ["Armageddon", "Gold 1"]}, shrines={1: [("Quartz", ["Quartz"] * 2)]})
    act(G, s, 0, "play:Armageddon", "target_player:1")
    act(G, s, 1, "pass")
    assert s.hands[1] == [] and names(G, s.king) == ["Quartz", "Quartz"]


def test_explain_words_a_masked_action():
    s = table(G, hands={0: ["Take Two", "Gold 1"]})
    assert "it takes" in G.why_illegal(s, 0, action(G, "yes"))
    assert G.why_illegal(s, 0, action(G, "play:Ruby")) == "no Ruby in hand"
    s = table(G, hands={0: ["Counter Spell", "Ruby", "Gold 1"]})
    assert "only in a response window" in G.why_illegal(s, 0, action(G, "play:Counter Spell"))
    assert "Gem Card" in G.why_illegal(s, 0, action(G, "bank:Ruby"))
    assert "not player 1's decision" in G.why_illegal(s, 1, action(G, "pass"))


def test_nobody_is_shown_that_another_seat_is_deciding_a_reaction():
    # S-141: player 1 is asked only because it holds a Counter Spell; player 2 must not see that
    s = table(G, hands={0: ["Take Two", "Gold 1"], 1: ["Counter Spell"]})
    act(G, s, 0, "play:Take Two")
    assert deciding(G, s) == (1, "react")
    for seat in (0, 2):
        obs = G.observe(s, seat)
        assert not G.spec.view(obs, "decision").any() and not G.spec.view(obs, "my_turn_to_decide").any()
        assert "react" not in G.render(s, seat)
    assert G.spec.view(G.observe(s, 1), "decision")[2] == 1


# ---------------------------------------------------------------------------------- Shrines with more than 24 sets
# Actions and observations address 24 set slots per Shrine (rules.MAX_SETS); the rules allow more
# sets (S-22: several incomplete sets of one type). Random games never pass 21 sets in a Shrine;
# these positions hold 25-30, with the set that matters made last (creation order would put it
# beyond slot 23). Every card of the deck stays in exactly one zone: the gems come out of the
# Draw Pile.

G2 = GemJam(num_players=2)
#: 24 incomplete singleton sets (six types, every Basic of each), in creation order
SINGLES = [(t, [t]) for t in ("Starfire", "Emerald", "Sapphire", "Amethyst", "Dawnslight", "Sunstone")
           for _ in range(4)]
#: ... then a complete Ice Shard set (slot 24 by creation) and a lone Ruby (slot 25)
CROWDED = SINGLES + [("Ice Shard", ["Ice Shard", "Ice Shard"]), ("Ruby", ["Ruby"])]
#: 24 sets without an unprotected Basic (wildcards, Duals, four guarded complete sets), then a Sunstone
NO_BASIC = ([(t, [w]) for w in ("Rainbow Gem", "Magic Mushroom", "Poison Cup", "Mirror Madness")
             for t in ("Ruby", "Onyx")]
            + [(p[0], [f"{p[0]}/{p[1]} Dual Gem"]) for p in (("Ruby", "Starfire"), ("Emerald", "Sapphire"),
                                                            ("Amethyst", "Dawnslight"), ("Ice Shard", "Quartz"),
                                                            ("Moonstone", "Sunstone"), ("Diamond", "Onyx"))
               for _ in range(2)]
            + [("Ice Shard", ["Ice Shard"] * 2, True), ("Quartz", ["Quartz"] * 2, True),
               ("Diamond", ["Diamond"] * 2, True), ("Ruby", ["Ruby"] * 3, True)]
            + [("Sunstone", ["Sunstone"])])


def crowded(g: GemJam, shrines, hands=None, vaults=None, stage="plays", seed=0):
    """A position as :func:`table` builds it, every other card of the deck in the Draw Pile
    (shuffled by ``seed``): the deck is conserved."""
    from collections import Counter

    from test_gemjam_invariants import check
    m = g.manifest
    rest = list(g.cfg.deck)
    used = [c for zone in (hands or {}, vaults or {}) for cards in zone.values() for c in cards]
    for sets in shrines.values():
        for spec in sets:
            used += spec[1] + (["Gem Guardian"] if len(spec) > 2 and spec[2] else [])
    for c in used:
        rest.remove(kind(g, c))
    order = np.random.default_rng(seed).permutation(len(rest))
    s = table(g, hands=hands, vaults=vaults, shrines=shrines, draw=[m.names[rest[int(i)]] for i in order],
              stage=stage)
    check(g, s, Counter(g.cfg.deck))
    return s


def slot(g: GemJam, s, p: int, type_name: str, gems) -> int:
    """The slot (list index) of ``p``'s set of ``type_name`` holding ``gems`` (names); asserted addressable."""
    want = (gem_type(g, type_name), sorted(kind(g, c) for c in gems))
    i = next(i for i, x in enumerate(s.shrines[p]) if (x.gem_type, x.gems) == want)
    assert i < rules.MAX_SETS, f"{type_name} {gems} is at slot {i}, beyond the addressable ones"
    return i


def test_crowded_a_gem_goes_to_the_set_of_its_type_with_room_beyond_slot_23():
    # S-22: a gem goes to an incomplete set of its type with room; a new set only when there is none
    s = crowded(G2, {0: CROWDED}, hands={0: ["Ruby", "Onyx", "Onyx"]})
    assert len(s.shrines[0]) == 26
    act(G2, s, 0, "play:Ruby", f"set:{slot(G2, s, 0, 'Ruby', ['Ruby'])}")  # its only destination: forced
    act(G2, s, 0, "play:Onyx", "new_set")  # no Onyx set yet: a new one, the 27th
    assert len(s.shrines[0]) == 27
    act(G2, s, 0, "play:Onyx", f"set:{slot(G2, s, 0, 'Onyx', ['Onyx'])}")
    assert len(s.shrines[0]) == 27 and ("Onyx", ["Onyx", "Onyx"], 0) in set_names(G2, s, 0)
    assert ("Ruby", ["Ruby", "Ruby"], 0) in set_names(G2, s, 0)


JAM_CASTER = [("Onyx", ["Onyx"] * 4), ("Onyx", ["Onyx", "Diamond/Onyx Dual Gem", "Diamond/Onyx Dual Gem"])]
#: 24 cheap sets (8 wildcards, gold 0; 10 Basics of gold 1; 6 of gold 2: 22 in all)
CHEAP = ([("Ruby", [w]) for w in ("Rainbow Gem", "Magic Mushroom", "Poison Cup", "Mirror Madness") for _ in range(2)]
         + [(t, [t]) for t, n in (("Sunstone", 4), ("Ice Shard", 3), ("Quartz", 3), ("Emerald", 4), ("Sapphire", 2))
            for _ in range(n)])


def jam_36(g: GemJam, payer_shrine, first=()):
    """Seat 0 casts an Any 1 Gem Type Gem Jam for Onyx (7 gems: 11 + 7 = 18) doubled (36) at seat 1;
    seat 1 pays the gems named in ``first`` (from their singleton sets) first, then the lowest
    legal actions play out the payment."""
    s = crowded(g, {0: JAM_CASTER, 1: payer_shrine}, hands={0: [ANY_GJ, "Double Trouble"]})
    act(g, s, 0, f"play:{ANY_GJ}", "gem_type:Onyx", "play:Double Trouble")
    assert [e[2:] for e in s.events if e[1] == "jam"] == [[0, gem_type(g, "Onyx"), 36]]
    for c in first:
        assert deciding(g, s) == (1, "pay")
        act(g, s, 1, f"set:{slot(g, s, 1, c, [c])}", f"card:{c}")
        while s.decision.kind == "place":
            g.apply(s, 0, int(g.legal_actions(s, 0)[0]))
    while s.decision is not None and (s.decision.seat == 1 or s.decision.kind == "place"):  # paid, placed
        p = s.decision.seat
        g.apply(s, p, int(g.legal_actions(s, p)[0]))
    return s


def test_crowded_a_gem_jam_payment_reaches_the_gems_beyond_slot_23():
    # §14: the payer chooses each card until 36 is covered (38 eligible): it starts with the four
    # Moonstones made after 24 cheaper sets; nothing is forgiven
    s = jam_36(G2, CHEAP + [("Moonstone", ["Moonstone"])] * 4, first=["Moonstone"] * 4)
    paid = [e[4] for e in s.events if e[1] == "paid"]
    assert names(G2, paid[:4]) == ["Moonstone"] * 4
    assert sum(G2.manifest.gold[k] for k in paid) >= 36 and not [e for e in s.events if e[1] == "forgiven"]
    assert names(G2, paid).count("Moonstone") == 4


def test_crowded_a_short_payment_gives_everything_then_forgives_the_rest():
    # 30 eligible for 36: every Basic goes, 6 are forgiven; the wildcards stay
    s = jam_36(G2, CHEAP + [("Moonstone", ["Moonstone"])] * 2)
    assert [e[2:] for e in s.events if e[1] == "forgiven"] == [[1, 6]]
    assert all(G2.manifest.is_wild[k] for x in s.shrines[1] for k in x.gems) and len(s.shrines[1]) == 8


def test_crowded_armageddon_and_dragons_loot_reach_a_complete_set_beyond_slot_23():
    s = crowded(G2, {1: CROWDED}, hands={0: ["Armageddon", "Dragon's Loot"]})
    act(G2, s, 0, "play:Armageddon", "target_player:1")  # the only complete set: forced
    act(G2, s, 1, "pass")  # declines the draw
    assert names(G2, s.king) == ["Ice Shard", "Ice Shard"] and len(s.shrines[1]) == 25
    s = crowded(G2, {1: CROWDED}, hands={0: ["Dragon's Loot"]})
    act(G2, s, 0, "play:Dragon's Loot", "target_player:1")
    assert set_names(G2, s, 0) == [("Ice Shard", ["Ice Shard", "Ice Shard"], 0)]


def test_crowded_gem_guardian_and_a_received_guardian_reach_a_complete_set_beyond_slot_23():
    s = crowded(G2, {0: CROWDED}, hands={0: ["Gem Guardian"]})
    act(G2, s, 0, "play:Gem Guardian")
    assert ("Ice Shard", ["Ice Shard", "Ice Shard"], 1) in set_names(G2, s, 0)
    s = crowded(G2, {0: CROWDED, 1: [("Diamond", ["Diamond"] * 2, True)]}, hands={0: ["Shakedown"]})
    act(G2, s, 0, "play:Shakedown")  # the Guardian pays first (S-57)
    assert deciding(G2, s) == (0, "receive_guardian")
    act(G2, s, 0, f"set:{slot(G2, s, 0, 'Ice Shard', ['Ice Shard'] * 2)}")
    assert ("Ice Shard", ["Ice Shard", "Ice Shard"], 1) in set_names(G2, s, 0)


def test_crowded_tsunami_and_golem_grab_reach_the_only_unprotected_basic_beyond_slot_23():
    s = crowded(G2, {1: NO_BASIC}, hands={0: ["Tsunami"]})
    assert len(s.shrines[1]) == 25
    act(G2, s, 0, "play:Tsunami", "target_player:1")
    assert names(G2, s.king) == ["Sunstone"] and len(s.shrines[1]) == 24
    s = crowded(G2, {1: NO_BASIC}, hands={0: ["Golem Grab"]})
    act(G2, s, 0, "play:Golem Grab", "target_player:1")
    assert set_names(G2, s, 0) == [("Sunstone", ["Sunstone"], 0)]


@pytest.mark.parametrize("spell", ["Meteor Strike", "Rat!", "Forced Wager"])
def test_crowded_gem_spells_reach_a_gem_beyond_slot_23(spell):
    s = crowded(G2, {1: CROWDED}, hands={0: [spell]})
    act(G2, s, 0, f"play:{spell}", "target_player:1", f"set:{slot(G2, s, 1, 'Ruby', ['Ruby'])}", "card:Ruby")
    if spell == "Forced Wager":
        act(G2, s, 1, "pass")
    assert len(s.shrines[1]) == 25 and not any(kind(G2, "Ruby") in x.gems for x in s.shrines[1])
    where = {"Meteor Strike": names(G2, s.king), "Rat!": [c for x in set_names(G2, s, 0) for c in x[1]],
             "Forced Wager": names(G2, s.hands[0])}[spell]
    assert where == ["Ruby"]


def test_crowded_switch_swaps_gems_beyond_slot_23_on_both_sides():
    mine = ([(t, [t]) for t, n in (("Moonstone", 5), ("Onyx", 5), ("Quartz", 3), ("Diamond", 3)) for _ in range(n)]
            + [("Onyx", [w]) for w in ("Rainbow Gem", "Magic Mushroom", "Poison Cup", "Mirror Madness")] * 2
            + [("Emerald", ["Emerald/Sapphire Dual Gem"]), ("Ruby", ["Ruby"])])
    s = crowded(G2, {0: mine, 1: CROWDED}, hands={0: ["Switch"]})
    assert len(s.shrines[0]) == 26
    act(G2, s, 0, "play:Switch", f"set:{slot(G2, s, 0, 'Emerald', ['Emerald/Sapphire Dual Gem'])}",
        "card:Emerald/Sapphire Dual Gem", "target_player:1", f"set:{slot(G2, s, 1, 'Ruby', ['Ruby'])}", "card:Ruby")
    # the Ruby joins seat 0's Ruby set, its only destination (S-22): forced
    act(G2, s, 1, "gem_type:Sapphire")  # seat 1 types the Dual it receives (S-35), then chooses its set
    act(G2, s, 1, f"set:{slot(G2, s, 1, 'Sapphire', ['Sapphire'])}")
    assert ("Ruby", ["Ruby", "Ruby"], 0) in set_names(G2, s, 0)
    assert ("Sapphire", ["Emerald/Sapphire Dual Gem", "Sapphire"], 0) in set_names(G2, s, 1)


def test_crowded_counter_spell_returns_a_gem_beyond_slot_23():
    s = crowded(G2, {1: CROWDED}, hands={0: ["Take Two"], 1: ["Counter Spell"]})
    act(G2, s, 0, "play:Take Two")
    act(G2, s, 1, "play:Counter Spell", f"set:{slot(G2, s, 1, 'Ruby', ['Ruby'])}", "card:Ruby")
    assert names(G2, s.hands[1]) == ["Ruby"] and len(s.shrines[1]) == 25


ADJUSTABLE = ([("Sunstone", ["Rainbow Gem"])] + SINGLES[:23]
              + [("Ice Shard", ["Ice Shard"]), ("Ruby", ["Ruby"]),
                 ("Quartz", ["Ice Shard/Quartz Dual Gem", "Magic Mushroom"]), ("Quartz", ["Quartz"])])


def test_crowded_move_goes_to_the_set_with_room_beyond_slot_23_and_a_swap_repairs_a_set_there():
    s = crowded(G2, {0: ADJUSTABLE}, stage="adjust")
    assert len(s.shrines[0]) == 28
    act(G2, s, 0, "adjust:move", f"set:{slot(G2, s, 0, 'Sunstone', ['Rainbow Gem'])}", "card:Rainbow Gem",
        "gem_type:Ruby")
    # S-39: never a new set while a set of the type has room: the lone Ruby's set is the only
    # destination (forced); the Rainbow's emptied set is gone
    assert ("Ruby", ["Rainbow Gem", "Ruby"], 0) in set_names(G2, s, 0) and len(s.shrines[0]) == 27
    s = crowded(G2, {0: ADJUSTABLE}, stage="adjust")
    a = slot(G2, s, 0, "Quartz", ["Ice Shard/Quartz Dual Gem", "Magic Mushroom"])
    b = slot(G2, s, 0, "Quartz", ["Quartz"])
    first, second = sorted([(a, "Magic Mushroom"), (b, "Quartz")])
    act(G2, s, 0, "adjust:swap", f"set:{first[0]}", f"card:{first[1]}", f"set:{second[0]}", f"card:{second[1]}")
    assert ("Quartz", ["Ice Shard/Quartz Dual Gem", "Quartz"], 0) in set_names(G2, s, 0)
    assert ("Quartz", ["Magic Mushroom"], 0) in set_names(G2, s, 0)


def new_sets_only_without_room(g: GemJam, before, s) -> None:
    """S-22: over a step in which no gem left any set of a Shrine, a set made there for type t
    means that no set of t that had room before still has room."""
    from collections import Counter
    for q in range(g.num_players):
        old, now = {x.set_id: x for x in before.shrines[q]}, {x.set_id: x for x in s.shrines[q]}
        if any(i not in now or not Counter(x.gems) <= Counter(now[i].gems) for i, x in old.items()):
            continue
        for x in s.shrines[q]:
            if x.set_id >= before.next_set:
                size = g.cfg.set_size[x.gem_type]
                assert not [i for i, y in old.items()
                            if y.gem_type == x.gem_type and len(y.gems) < size and len(now[i].gems) < size]


@pytest.mark.parametrize("seed", range(6))
def test_crowded_random_continuations_keep_every_invariant_to_the_end(seed):
    # both Shrines beyond 24 sets: a legal action for whoever is to act at every decision, every
    # card in one zone, the observation unchanged by resampling what a seat cannot see
    from collections import Counter

    from test_gemjam_invariants import check
    deck = Counter(G2.cfg.deck)
    # seat 0: 24 sets of other types, then its six Onyx sets (all with room) beyond slot 23
    mine = ([(t, [t]) for t, n in (("Moonstone", 5), ("Quartz", 3), ("Diamond", 3), ("Ruby", 3)) for _ in range(n)]
            + [("Quartz", ["Ice Shard/Quartz Dual Gem"]), ("Amethyst", ["Amethyst/Dawnslight Dual Gem"])]
            + [("Diamond", [w]) for w in ("Magic Mushroom", "Poison Cup", "Mirror Madness") for _ in range(2)]
            + [("Moonstone", ["Moonstone/Sunstone Dual Gem"])] * 2
            + [("Onyx", ["Onyx"])] * 5 + [("Onyx", ["Rainbow Gem"])])
    assert len(mine) == 30
    s = crowded(G2, {0: mine, 1: CROWDED}, hands={0: ["Take Two"], 1: ["Meteor Strike"]}, stage="turn", seed=seed)
    rng = np.random.default_rng(seed)
    most = 0
    while not s.over:
        (p,) = G2.to_act(s)
        before = s.copy()
        G2.apply_legal(s, p, int(rng.choice(G2.legal_actions(s, p))))
        check(G2, s, deck)
        new_sets_only_without_room(G2, before, s)
        most = max(most, *map(len, s.shrines))
        if len(s.log) % 7 == 0 and not s.over:
            for o in range(2):
                r = G2.resample_hidden(s, o, rng)
                np.testing.assert_array_equal(G2.observe(r, o), G2.observe(s, o))
                np.testing.assert_array_equal(G2.legal_mask(r, o), G2.legal_mask(s, o))
    assert most > rules.MAX_SETS and s.winners


# ---------------------------------------------------------------------------------- a short payment's order

GJ_DO = "Diamond / Onyx Gem Jam"


def short_onyx_jam():
    """Seat 0 (Ruby [Ruby, Ruby], Onyx [Onyx x3]) casts a doubled Diamond / Onyx Gem Jam for Onyx
    (7 x 2 = 14) at seat 1, whose eligible cards, a Ruby [Ruby] set and a guarded Quartz [Quartz,
    Quartz] set, are worth 3 + 3 + 1 + 1 = 8: everything goes, 6 are forgiven."""
    s = table(G2, hands={0: [GJ_DO, "Double Trouble", "Gold 1"]},
              shrines={0: [("Ruby", ["Ruby"] * 2), ("Onyx", ["Onyx"] * 3)],
                       1: [("Ruby", ["Ruby"]), ("Quartz", ["Quartz"] * 2, True)]})
    assert rules.payable(s, G2.cfg, 1)[1] == 8
    act(G2, s, 0, f"play:{GJ_DO}", "gem_type:Onyx", "target_player:1", "play:Double Trouble")
    assert [e[2:] for e in s.events if e[1] == "jam"] == [[0, gem_type(G2, "Onyx"), 14]]
    return s


def paid_and_forgiven(s):
    """The cards paid (names, in order) and the forgiven amounts."""
    return ([G2.manifest.names[e[4]] for e in s.events if e[1] == "paid"],
            [e[2:] for e in s.events if e[1] == "forgiven"])


def test_a_short_payment_still_lets_the_payer_choose_the_order_of_its_cards():
    # docs/gemjam.md "Gem Jam and payments": even when everything eligible goes, the payer hands
    # over one card of its choice at a time and the receiver places each as it arrives, so the
    # order decides where cards land
    s = short_onyx_jam()
    assert deciding(G2, s) == (1, "pay")
    assert legal_names(G2, s, 1) == ["set[0]", "set[1]"]
    assert sorted(" ".join(G2.action_name(a) for a in c) for c in s.decision.answers) == [
        "set[0] card[Ruby]", "set[1] card[Gem Guardian]"]

    # the Guardian first: seat 0's Ruby set is not yet complete, so it can only bank it (forced)
    act(G2, s, 1, "set:1", "card:Gem Guardian")
    assert deciding(G2, s) == (1, "pay") and names(G2, s.vaults[0]) == ["Gem Guardian"]
    act(G2, s, 1, "set:0", "card:Ruby")  # completes seat 0's Ruby set; the Quartzes follow (forced)
    assert set_names(G2, s, 0) == [("Ruby", ["Ruby"] * 3, 0), ("Onyx", ["Onyx"] * 3, 0),
                                   ("Quartz", ["Quartz"] * 2, 0)]
    assert s.shrines[1] == [] and paid_and_forgiven(s) == (["Gem Guardian", "Ruby", "Quartz", "Quartz"], [[1, 6]])
    # its steps were chosen or forced (card[Ruby] after set[0]); seat 0's log does not tell which
    assert {e[2] for e in s.log if e[0] == 1} == {0, 1}
    assert [f for q, _, f in G2.visible_log(s, 0) if q == 1] == [None] * sum(e[0] == 1 for e in s.log)

    # the Ruby first: it completes seat 0's Ruby set, and the Guardian that follows may guard it
    s = short_onyx_jam()
    act(G2, s, 1, "set:0", "card:Ruby")
    assert set_names(G2, s, 0)[0] == ("Ruby", ["Ruby"] * 3, 0)
    assert deciding(G2, s) == (0, "receive_guardian")  # the Guardian, now seat 1's only card, was forced
    assert legal_names(G2, s, 0) == ["bank[Gem Guardian]", "set[0]"]
    act(G2, s, 0, "set:0")
    assert set_names(G2, s, 0) == [("Ruby", ["Ruby"] * 3, 1), ("Onyx", ["Onyx"] * 3, 0),
                                   ("Quartz", ["Quartz"] * 2, 0)]
    assert s.vaults[0] == [] and paid_and_forgiven(s) == (["Ruby", "Gem Guardian", "Quartz", "Quartz"], [[1, 6]])
