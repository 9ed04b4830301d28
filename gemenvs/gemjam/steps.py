"""The Gem Jam engine's tables, built here and nowhere else, and the loop that runs them.

How the game advances. ``state.tasks`` is a stack of pending steps (plain lists such as
``["pay", payer, receiver, amount]``, the first item the step's name); :func:`run` pops them and
calls :data:`STEPS` [name] until one asks a seat a question (:func:`gemenvs.gemjam.rules.ask`).
A question is ``state.decision``: a composite choice given by every legal complete answer as a
list of action ids; the seat answers one id at a time (:func:`answer`), and when the answer is
complete :data:`FINISH` [the decision's kind] applies it. :data:`CANDIDATES` rebuilds the
answers of the decisions that depend on hidden cards (when
:meth:`~gemenvs.gemjam.game.GemJam.resample_hidden` redraws them), and :data:`EFFECTS` holds the
function of every spell effect a card manifest may name.

Every table is a literal dict of functions of :mod:`~gemenvs.gemjam.rules` (the turn, gems,
payments, draws), :mod:`~gemenvs.gemjam.stack` (casting, windows, resolution) and
:mod:`~gemenvs.gemjam.spells` (the cards' effects, the play decision); those modules schedule
steps and ask decisions by name and never look a handler up themselves.
"""
from __future__ import annotations

from gemenvs.gemjam import rules, spells, stack
from gemenvs.gemjam.rules import Config, GemJamState

#: spell effect (a manifest's ``effect``) -> the card's function(state, cfg, stack entry)
EFFECTS = {
    "any_gem_jam": spells.any_gem_jam,
    "paired_gem_jam": spells.paired_gem_jam,
    "double_trouble": spells.double_trouble,
    "shakedown": spells.shakedown,
    "kings_ransom": spells.kings_ransom,
    "dragons_loot": spells.dragons_loot,
    "armageddon": spells.armageddon,
    "meteor_strike": spells.meteor_strike,
    "tsunami": spells.tsunami,
    "rat": spells.rat,
    "switch": spells.switch,
    "golem_grab": spells.golem_grab,
    "forced_wager": spells.forced_wager,
    "eye_see": spells.eye_see,
    "howling_fear": spells.howling_fear,
    "take_two": spells.take_two,
    "lucky_draw": spells.lucky_draw,
    "fire_reborn": spells.fire_reborn,
    "reanimate": spells.reanimate,
    "natures_rebirth": spells.natures_rebirth,
    "greedy_goblin": spells.greedy_goblin,
    "basilisk": spells.basilisk,
    "gem_guardian": spells.gem_guardian,
    "counter_spell": spells.counter_spell,
    "diabolic_denial": spells.diabolic_denial,
    "chaos_cube": spells.chaos_cube,
    "sleep_spell": spells.sleep_spell,
    "freeze": spells.freeze,
    "sirens_call": spells.sirens_call,
}


def resolve_step(state: GemJamState, cfg: Config, task: list) -> None:
    """``["resolve"]``: resolve the top of the stack (:func:`gemenvs.gemjam.stack.resolve_top`)
    and apply its card's effect from :data:`EFFECTS`."""
    entry = stack.resolve_top(state, cfg)
    if entry is not None:
        EFFECTS[cfg.effect[entry.kind]](state, cfg, entry)


#: step name (the first item of a ``state.tasks`` entry) -> its handler(state, cfg, task)
STEPS = {
    "turn_start": rules.turn_start_step,
    "adjust": rules.adjust_step,
    "after_adjust": rules.after_adjust_step,
    "plays": spells.plays_step,
    "turn_end": rules.turn_end_step,
    "draw": rules.draw_step,
    "discard": rules.discard_step,
    "yes_draw": rules.yes_draw_step,
    "pay": rules.pay_step,
    "receive": spells.receive_step,
    "window": stack.window_step,
    "resolve": resolve_step,
    "to_discard": stack.to_discard_step,
}

#: decision kind (``state.decision.kind``) -> the handler(state, cfg, seat, chosen ids, context)
#: that applies a complete answer
FINISH = {
    "adjust": rules.finish_adjust,
    "play": spells.finish_play,
    "react": stack.finish_react,
    "double": stack.finish_double,
    "pay": rules.finish_pay,
    "place": rules.finish_place,
    "receive_guardian": rules.finish_receive_guardian,
    "discard": rules.finish_discard,
    "bottom": rules.finish_bottom,
    "may_draw": rules.finish_may_draw,
    "timer": rules.finish_timer,
    "eye_see": spells.finish_eye_see,
    "lucky_draw": spells.finish_lucky_draw,
    "reanimate": spells.finish_reanimate,
    "greedy_goblin": spells.finish_greedy_goblin,
    "basilisk": spells.finish_basilisk,
    "counter_return": spells.finish_counter_return,
    "chaos_cube": stack.finish_chaos_cube,
}

#: decision kind -> builder(state, cfg, seat, context) of its complete answers, for the decisions
#: whose answers depend on hidden cards (rebuilt when they are redrawn)
CANDIDATES = {
    "play": spells.play_cands,
    "react": stack.react_cands,
    "double": stack.double_cands,
    "pay": rules.build_pay,
    "discard": rules.build_hand_choice,
    "bottom": rules.build_hand_choice,
    "eye_see": spells.build_aside_choice,
    "lucky_draw": spells.build_aside_choice,
    "greedy_goblin": spells.build_goblin,
    "basilisk": spells.build_basilisk,
}


def run(state: GemJamState, cfg: Config) -> None:
    """Run pending steps until a seat must decide or the game is over."""
    tasks = state.tasks
    while state.decision is None and not state.over:
        task = tasks.pop()
        STEPS[task[0]](state, cfg, task)


def answer(state: GemJamState, cfg: Config, p: int, a: int) -> None:
    """Apply one step ``a`` of the pending decision; finish it when an answer is complete, then run."""
    d = state.decision
    chosen = d.chosen
    chosen.append(a)
    k = len(chosen)
    answers = [c for c in d.answers if c[k - 1] == a]
    if len(answers[0]) == k:
        state.decision = None
        FINISH[d.kind](state, cfg, p, chosen, d.context)
        run(state, cfg)
    else:
        d.answers = answers
        d.options = sorted({c[k] for c in answers})


def new_game(cfg: Config, seed: int) -> GemJamState:
    """A dealt game (:func:`gemenvs.gemjam.rules.new_state`) run up to its first decision."""
    state = rules.new_state(cfg, seed)
    run(state, cfg)
    return state


__all__ = ["CANDIDATES", "EFFECTS", "FINISH", "STEPS", "answer", "new_game", "resolve_step", "run"]
