"""Every card's effect, written once, named after the card, and the turn player's play decision
(which cards it may play, bank or cast, and how).

What a spell may target is in :mod:`gemenvs.gemjam.targets`: targets are chosen at cast and
checked again here, at resolution; a target that is gone or no longer eligible makes the spell
fail. Anything that depends on cards revealed or drawn is chosen at resolution (docs/gemjam.md
"Spells: casting and the stack", "Spells, one by one"). :data:`gemenvs.gemjam.steps.EFFECTS`
maps each effect name of the card manifest to its function here.
"""
from __future__ import annotations

from bisect import insort

from gemenvs.gemjam.rules import (
    MAX_SETS, Aside, StackEntry, arrange, ask, check_win, destinations, discard_card, draw_cards,
    draw_one, event, find_set, gem_types_for, hand_add_public, hand_remove, is_complete, move_all_rebirths,
    move_rebirth, put_gem, receive_gem, remove_gem, spent_in, timer_due, to_king, vault_remove,
)
from gemenvs.gemjam.stack import cancel_top, cast, recast
from gemenvs.gemjam.targets import entry_with_targets, opponents, target_tails


# ---------------------------------------------------------------------------------- the play decision


def play_cands(state, cfg, p: int, ctx=None) -> list:
    """The turn player's next play (docs/gemjam.md "Setup and turn"): end plays; bank a gold or spell card; a
    gem to the Shrine (type, set) unless frozen; cast a spell (targets) unless asleep. One play each."""
    arrange(state, cfg)  # whatever the hand: the order of the sets tells nothing about it
    out = [[cfg.END_PLAYS]]
    if state.plays <= 0:
        return out
    m = cfg.manifest
    for k in sorted(set(state.hands[p])):
        if m.bankable[k]:
            out.append([cfg.BANK + k])
        if m.is_gem[k]:
            if not state.frozen:
                out += [[cfg.PLAY + k, cfg.GEM_TYPE + t, d] for t in gem_types_for(state, cfg, p, k)
                        for d in destinations(state, cfg, p, t)]
        elif m.is_spell[k] and not state.asleep and not m.reactive[k]:
            out += [[cfg.PLAY + k] + tail for tail in target_tails(state, cfg, p, k)]
    return out


def plays_step(state, cfg, t):
    """``["plays", timer_asked]``: the turn player's next play, after the win check (and the
    timer penalty question, unless it was just asked)."""
    if check_win(state, cfg):
        return
    _, timer_asked = t
    if not timer_asked and timer_due(state, cfg, "plays"):
        return
    ask(state, cfg, state.turn, "play", play_cands(state, cfg, state.turn))


def finish_play(state, cfg, p, pre, ctx):
    a = pre[0]
    if a == cfg.END_PLAYS:
        state.tasks.append(["turn_end"])
        return
    state.plays -= 1
    state.tasks.append(["plays", 0])
    if a < cfg.BANK:
        k = a - cfg.PLAY
        if cfg.manifest.is_gem[k]:
            play_gem(state, cfg, p, k, pre[1] - cfg.GEM_TYPE, pre[2])
        else:
            cast(state, cfg, p, entry_with_targets(state, cfg, p, k, pre[1:]))
    else:
        k = a - cfg.BANK
        move_rebirth(state, cfg, k, f"hand{p}", f"vault{p}", "spent")
        hand_remove(state, p, k, public=False)
        insort(state.vaults[p], k)
        event(state, "bank", p)


def play_gem(state, cfg, p: int, k: int, t: int, dest: int) -> None:
    """A gem from hand into the Shrine; Magic Mushroom then draws, Poison Cup discards (docs/gemjam.md "Sets in the
    Shrine")."""
    hand_remove(state, p, k)
    put_gem(state, cfg, p, k, t, dest)
    event(state, "gem", p, k, t)
    if cfg.effect[k] == "magic_mushroom":
        magic_mushroom(state, cfg, p)
    elif cfg.effect[k] == "poison_cup":
        poison_cup(state, cfg, p)


def magic_mushroom(state, cfg, p: int) -> None:
    """Magic Mushroom played from hand: draw one card (mandatory, docs/gemjam.md "Sets in the Shrine")."""
    draw_cards(state, cfg, p, 1)


def poison_cup(state, cfg, p: int) -> None:
    """Poison Cup played from hand: discard one card of one's choice, if possible (docs/gemjam.md "Sets in the
    Shrine")."""
    state.tasks.append(["discard", p, 1])


# ---------------------------------------------------------------------------------- Gem Jam & payments


def _gem_jam(state, cfg, e: StackEntry, payers: list[int]) -> None:
    c, t = e.caster, e.gem_type
    sets = [s for s in state.shrines[c] if s.gem_type == t]
    gems = sum(len(s.gems) for s in sets)
    guards = sum(1 for s in sets if s.guarded and is_complete(cfg, s))
    # the amount is fixed once, at resolution, before any payment, x2 per Double Trouble
    # (docs/gemjam.md "Gem Jam and payments")
    amount = cfg.manifest.jam_amount(t, gems, guards) << e.doublings
    event(state, "jam", c, t, amount)
    for q in reversed(payers):
        state.tasks.append(["pay", q, c, amount])


def any_gem_jam(state, cfg, e):
    """Any 1 Gem Type Gem Jam: every opponent pays, clockwise from the caster's left (docs/gemjam.md "Gem Jam and
    payments")."""
    _gem_jam(state, cfg, e, opponents(state, e.caster))


def paired_gem_jam(state, cfg, e):
    """A paired Gem Jam (Ruby / Starfire, ...): the chosen opponent pays for the chosen type."""
    _gem_jam(state, cfg, e, [e.target_player])


def double_trouble(state, cfg, e):
    """Double Trouble: doubles the Gem Jam it is attached to, or the target discards a card (docs/gemjam.md "Spells:
    casting and the stack")."""
    if e.attached:
        state.stack[-1].doublings += 1
    else:
        state.tasks.append(["discard", e.target_player, 1])


def shakedown(state, cfg, e):
    """Shakedown: the chosen opponent pays 5."""
    state.tasks.append(["pay", e.target_player, e.caster, 5])


def kings_ransom(state, cfg, e):
    """King's Ransom: every opponent pays 3, clockwise from the caster's left."""
    for q in reversed(opponents(state, e.caster)):
        state.tasks.append(["pay", q, e.caster, 3])


# ---------------------------------------------------------------------------------- gem manipulation


def _target_set(state, e: StackEntry):
    """The targeted set if it is still the target player's (else None: the spell fails)."""
    return find_set(state, e.target_player, e.target_set)


def _fail(state, e: StackEntry) -> None:
    event(state, "fail", e.caster, e.kind)


def dragons_loot(state, cfg, e):
    """Dragon's Loot: steal one completed, unprotected set; it moves intact (docs/gemjam.md "Spells, one by one")."""
    s = _target_set(state, e)
    if s is None or s.guarded or not is_complete(cfg, s):
        return _fail(state, e)
    state.shrines[e.target_player].remove(s)
    s.broken = 0
    state.shrines[e.caster].append(s)


def armageddon(state, cfg, e):
    """Armageddon: destroy one completed, unprotected set (King's Vault); its owner may draw one."""
    s = _target_set(state, e)
    if s is None or s.guarded or not is_complete(cfg, s):
        return _fail(state, e)
    state.shrines[e.target_player].remove(s)
    to_king(state, s.gems)
    state.tasks.append(["yes_draw", e.target_player, "armageddon"])


def meteor_strike(state, cfg, e):
    """Meteor Strike: destroy one gem not in a completed set."""
    s = _target_set(state, e)
    if s is None or is_complete(cfg, s) or e.target_gem not in s.gems:
        return _fail(state, e)
    remove_gem(state, e.target_player, s, e.target_gem)
    to_king(state, [e.target_gem])


def tsunami(state, cfg, e):
    """Tsunami: destroy one Basic Gem, also from an unprotected completed set (no penalty)."""
    s = _target_set(state, e)
    if s is None or s.guarded or cfg.basic_of[s.gem_type] not in s.gems:
        return _fail(state, e)
    b = cfg.basic_of[s.gem_type]
    remove_gem(state, e.target_player, s, b)
    to_king(state, [b])


def rat(state, cfg, e):
    """Rat!: steal one gem not in a completed set; the thief types and places it (docs/gemjam.md "Spells, one by
    one")."""
    s = _target_set(state, e)
    if s is None or is_complete(cfg, s) or e.target_gem not in s.gems:
        return _fail(state, e)
    t = s.gem_type
    remove_gem(state, e.target_player, s, e.target_gem)
    receive_gem(state, cfg, e.caster, e.target_gem, keep_type=t)


def golem_grab(state, cfg, e):
    """Golem Grab: steal one Basic Gem, also from an unprotected completed set."""
    s = _target_set(state, e)
    if s is None or s.guarded or cfg.basic_of[s.gem_type] not in s.gems:
        return _fail(state, e)
    b = cfg.basic_of[s.gem_type]
    remove_gem(state, e.target_player, s, b)
    receive_gem(state, cfg, e.caster, b)


def switch(state, cfg, e):
    """Switch: swap one own gem with one opponent's gem, neither in a completed set (docs/gemjam.md "Spells, one by
    one")."""
    c, q = e.caster, e.target_player
    mine, theirs = find_set(state, c, e.own_set), _target_set(state, e)
    if (mine is None or theirs is None or is_complete(cfg, mine) or is_complete(cfg, theirs)
            or e.own_gem not in mine.gems or e.target_gem not in theirs.gems):
        return _fail(state, e)
    t_mine, t_theirs = mine.gem_type, theirs.gem_type
    remove_gem(state, c, mine, e.own_gem)
    remove_gem(state, q, theirs, e.target_gem)
    state.transit.append(e.own_gem)
    state.tasks.append(["receive", q, e.own_gem, t_mine])
    receive_gem(state, cfg, c, e.target_gem, keep_type=t_theirs)


def receive_step(state, cfg, t):
    """``["receive", p, kind, type]``: a gem in transit arrives in ``p``'s Shrine."""
    _, p, kind, gem_type = t
    state.transit.remove(kind)
    receive_gem(state, cfg, p, kind, keep_type=gem_type)


def forced_wager(state, cfg, e):
    """Forced Wager: a gem not in a completed set (own allowed) to the caster's hand; its owner may draw."""
    s = _target_set(state, e)
    if s is None or is_complete(cfg, s) or e.target_gem not in s.gems:
        return _fail(state, e)
    remove_gem(state, e.target_player, s, e.target_gem)
    hand_add_public(state, e.caster, e.target_gem)
    state.tasks.append(["yes_draw", e.target_player, "forced_wager"])


# ---------------------------------------------------------------------------------- hand, deck and vault


def eye_see(state, cfg, e):
    """Eye See!: up to two random cards of the opponent's hand are shown to the caster; it keeps
    one (with one card it may keep or return it) (docs/gemjam.md "Spells, one by one")."""
    q, c = e.target_player, e.caster
    hand = state.hands[q]
    if not hand:
        return _fail(state, e)
    idx = sorted(int(i) for i in state.rng.choice(len(hand), size=min(2, len(hand)), replace=False))
    cards = [hand[i] for i in idx]
    for k in cards:
        move_rebirth(state, cfg, k, f"hand{q}", "aside", "random")
        hand_remove(state, q, k, public=False)
        if k in state.seen_hand[c][q]:
            state.seen_hand[c][q].remove(k)  # now seen aside; it is known again there if it goes back
    state.aside = Aside(c, q, cards)
    event(state, "shown", q, cards, to=c)
    ask(state, cfg, c, "eye_see", build_aside_choice(state, cfg, c, {"may_decline": len(cards) == 1}),
        {"may_decline": len(cards) == 1})


def build_aside_choice(state, cfg, p, ctx):
    """One [card] answer per distinct kind set aside for ``p`` (plus [pass] when it may decline)."""
    out = [[cfg.CARD + k] for k in sorted(set(state.aside.cards))]
    return out + ([[cfg.PASS]] if ctx.get("may_decline") else [])


def finish_eye_see(state, cfg, p, pre, ctx):
    aside = state.aside
    q, cards = aside.source, list(aside.cards)
    if pre[0] != cfg.PASS:
        move_rebirth(state, cfg, pre[0] - cfg.CARD, "aside", f"hand{p}", "unspent")
    move_all_rebirths(state, "aside", f"hand{q}")
    state.aside = None
    if pre[0] != cfg.PASS:
        k = pre[0] - cfg.CARD
        cards.remove(k)
        insort(state.hands[p], k)
        insort(state.seen_hand[q][p], k)  # the victim knows which card left (docs/gemjam.md "Spells, one by one")
        event(state, "eye_see_keep", p, q, k, to=p)
        event(state, "eye_see_keep", p, q, k, to=q)
    for k in cards:
        insort(state.hands[q], k)
        insort(state.seen_hand[p][q], k)  # the caster saw it go back
    event(state, "eye_see", p, q)


def howling_fear(state, cfg, e):
    """Howling Fear: the chosen opponent discards two, then each other opponent one, clockwise
    from the caster's left; each discarder chooses (docs/gemjam.md "Spells, one by one")."""
    for q in reversed(opponents(state, e.caster)):
        if q != e.target_player:
            state.tasks.append(["discard", q, 1])
    state.tasks.append(["discard", e.target_player, 2])


def take_two(state, cfg, e):
    """Take Two: draw two cards."""
    draw_cards(state, cfg, e.caster, 2)


def lucky_draw(state, cfg, e):
    """Lucky Draw: draw three, discard one of them, keep two; each opponent may draw one (docs/gemjam.md "Spells,
    one by one")."""
    c = e.caster
    got = []
    for _ in range(3):
        k = draw_one(state, cfg, c, "aside")
        if k < 0:
            move_all_rebirths(state, "aside", f"hand{c}")
            for x in got:
                insort(state.hands[c], x)
            return
        state.hands[c].remove(k)
        got.append(k)
    state.aside = Aside(c, c, got)
    ask(state, cfg, c, "lucky_draw", build_aside_choice(state, cfg, c, {}))


def finish_lucky_draw(state, cfg, p, pre, ctx):
    k = pre[0] - cfg.CARD
    cards = state.aside.cards
    # the discard is one of the three (docs/gemjam.md "Engine choices")
    move_rebirth(state, cfg, k, "aside", "discard", "spent")
    move_all_rebirths(state, "aside", f"hand{p}")
    state.aside = None
    for x in cards:
        insort(state.hands[p], x)
    hand_remove(state, p, k)  # public: whoever knew this card in p's hand (put under the pile) no longer does
    discard_card(state, k)
    event(state, "discard", p, k)
    for q in reversed(opponents(state, p)):
        state.tasks.append(["yes_draw", q, "lucky_draw"])


def fire_reborn(state, cfg, e):
    """Fire Reborn: discard two (one if that is all), chosen one at a time, then draw five."""
    c = e.caster
    state.tasks.append(["draw", c, 5])
    state.tasks.append(["discard", c, min(2, len(state.hands[c]))])


def reanimate(state, cfg, e):
    """Reanimate: any one card of the Discard Pile to hand (public)."""
    if not state.discard:
        return _fail(state, e)
    ask(state, cfg, e.caster, "reanimate", [[cfg.CARD + k] for k in sorted(set(state.discard))])


def finish_reanimate(state, cfg, p, pre, ctx):
    k = pre[0] - cfg.CARD
    move_rebirth(state, cfg, k, "discard", f"hand{p}", "unspent")
    state.discard.remove(k)
    hand_add_public(state, p, k)
    event(state, "reanimate", p, k)


def natures_rebirth(state, cfg, e):
    """Nature's Rebirth: a random card of the Discard Pile to hand (public) and one more play,
    each copy at most once a turn (docs/gemjam.md "Spells, one by one", "Engine choices")."""
    c = e.caster
    if state.discard:
        i = int(state.rng.integers(len(state.discard)))
        move_rebirth(state, cfg, state.discard[i], "discard", f"hand{c}", "random")
        k = state.discard.pop(i)
        hand_add_public(state, c, k)
        event(state, "rebirth", c, k)
    # the copy resolving is the one Nature's Rebirth of the stack (it is cast only as a play and
    # no reaction takes it over); a spent copy grants nothing, a copy that grants is spent
    if c == state.turn and not spent_in(state, "stack", e.kind):
        insort(state.spent_rebirths, ["stack", e.kind])
        state.plays += 1


def greedy_goblin(state, cfg, e):
    """Greedy Goblin: search any Vault (own, another's, the King's); take one card (docs/gemjam.md "Spells, one by
    one")."""
    v, c = e.vault, e.caster
    zone = state.king if v == state.n else state.vaults[v]
    if not zone:
        return _fail(state, e)
    if v != c:
        state.seen_vault[c][v] = list(zone)
        event(state, "shown_vault", v, list(zone), to=c)
    ask(state, cfg, c, "greedy_goblin", build_goblin(state, cfg, c, {"vault": v}), {"vault": v})


def build_goblin(state, cfg, p, ctx):
    """One [card] answer per distinct kind in the searched Vault."""
    v = ctx["vault"]
    zone = state.king if v == state.n else state.vaults[v]
    return [[cfg.CARD + k] for k in sorted(set(zone))]


def finish_greedy_goblin(state, cfg, p, pre, ctx):
    k, v = pre[0] - cfg.CARD, ctx["vault"]
    if v < state.n:
        move_rebirth(state, cfg, k, f"vault{v}", f"hand{p}", "unspent")
    vault_remove(state, v, k, public=False)
    if k in state.seen_vault[p][v]:
        state.seen_vault[p][v].remove(k)
    insort(state.hands[p], k)
    if v < state.n and v != p:
        insort(state.seen_hand[v][p], k)  # the Vault's owner learns which card left
        event(state, "goblin_took", p, v, k, to=v)
    event(state, "goblin", p, v)


def basilisk(state, cfg, e):
    """Basilisk: two random cards of another Vault (the King's included); the caster puts one in
    hand and one in its Vault (one card: it chooses where) (docs/gemjam.md "Spells, one by one")."""
    v, c = e.vault, e.caster
    zone = state.king if v == state.n else state.vaults[v]
    if not zone:
        return _fail(state, e)
    idx = sorted(int(i) for i in state.rng.choice(len(zone), size=min(2, len(zone)), replace=False))
    cards = [zone[i] for i in idx]
    for k in cards:
        if v < state.n:
            move_rebirth(state, cfg, k, f"vault{v}", "aside", "random")
        vault_remove(state, v, k, public=False)
        if k in state.seen_vault[c][v]:
            state.seen_vault[c][v].remove(k)
    state.aside = Aside(c, v, cards)
    if v < state.n:
        event(state, "basilisk_took", c, v, cards, to=v)
    event(state, "shown", v, cards, to=c)
    ask(state, cfg, c, "basilisk", build_basilisk(state, cfg, c, {}))


def build_basilisk(state, cfg, p, ctx):
    """[card] sends that card to hand (the other to the Vault); with one card also [bank]."""
    cards = state.aside.cards
    out = [[cfg.CARD + k] for k in sorted(set(cards))]
    return out + ([[cfg.BANK + cards[0]]] if len(cards) == 1 else [])


def finish_basilisk(state, cfg, p, pre, ctx):
    cards = list(state.aside.cards)
    a = pre[0]
    if a >= cfg.CARD:
        move_rebirth(state, cfg, a - cfg.CARD, "aside", f"hand{p}", "unspent")
    move_all_rebirths(state, "aside", f"vault{p}")
    state.aside = None
    if a >= cfg.CARD:
        k = a - cfg.CARD
        cards.remove(k)
        insort(state.hands[p], k)
    for k in cards:
        insort(state.vaults[p], k)  # a gem card in a Vault is payable at its gold (docs/gemjam.md "Sets in the Shrine")
    event(state, "basilisk", p)


# ---------------------------------------------------------------------------------- protection & disruption


def gem_guardian(state, cfg, e):
    """Gem Guardian: attach to the caster's completed, unprotected set, if it still is one (docs/gemjam.md "Spells:
    casting and the stack")."""
    s = find_set(state, e.caster, e.target_set)
    state.resolving.remove(e.kind)
    if s is None or s.guarded or not is_complete(cfg, s):
        _fail(state, e)
        state.discard.append(e.kind)
        return
    s.guarded = 1
    event(state, "guard", e.caster, s.set_id)


def counter_spell(state, cfg, e):
    """Counter Spell: cancel the spell below; then return one own unprotected gem to hand if
    possible, even from a completed set, without penalty (docs/gemjam.md "Spells: casting and the stack")."""
    cancel_top(state)
    c = e.caster
    arrange(state, cfg)
    cands = [[cfg.SET + i, cfg.CARD + k] for i, s in enumerate(state.shrines[c][:MAX_SETS]) if not s.guarded
             for k in sorted(set(s.gems))]
    if cands:
        ask(state, cfg, c, "counter_return", cands)


def finish_counter_return(state, cfg, p, pre, ctx):
    s = state.shrines[p][pre[0] - cfg.SET]
    k = pre[1] - cfg.CARD
    remove_gem(state, p, s, k)
    hand_add_public(state, p, k)
    event(state, "returned", p, k)


def diabolic_denial(state, cfg, e):
    """Diabolic Denial: cancel the spell below; then discard one card if possible (docs/gemjam.md "Spells: casting
    and the stack")."""
    cancel_top(state)
    state.tasks.append(["discard", e.caster, 1])


def chaos_cube(state, cfg, e):
    """Chaos Cube: take control of the spell below and recast it at new targets (the stack's
    recast, :func:`gemenvs.gemjam.stack.recast`) (docs/gemjam.md "Spells: casting and the stack")."""
    recast(state, cfg, e)


def sleep_spell(state, cfg, e):
    """Sleep Spell: every opponent casts no spell in its own next turn (banking allowed) (docs/gemjam.md "Spells,
    one by one")."""
    for q in opponents(state, e.caster):
        state.sleep_next[q] = 1


def freeze(state, cfg, e):
    """Freeze: every opponent plays no Gem Card from hand in its own next turn (docs/gemjam.md "Spells, one by one")."""
    for q in opponents(state, e.caster):
        state.freeze_next[q] = 1


def sirens_call(state, cfg, e):
    """Siren's Call (option): the named player is an event; the caster draws one card (docs/gemjam.md "Spells, one
    by one")."""
    event(state, "siren", e.caster, e.target_player)
    draw_cards(state, cfg, e.caster, 1)


__all__ = ["play_cands", "plays_step"]
