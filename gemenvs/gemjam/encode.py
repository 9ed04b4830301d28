"""The Gem Jam observation of one seat: a flat float32 vector laid out by an ObservationSpec.

Seat-relative: row 0 of every per-player block is the observer, row r the player r seats to its left. What a
seat may see (docs/gemjam.md "Hidden information"): its own hand and Vault; every Shrine; the Discard Pile;
pile and hand/Vault sizes; the response stack; the pending decision (its own choices so far and cards shown to
it); the cards it has been shown in others' hands and Vaults. Never another hand or Vault's contents, the
King's Vault or the Draw Pile. This module is the only place that turns a state into what a seat sees.
"""
from __future__ import annotations

import numpy as np

from gemenvs.core.spec import ObservationSpec
from gemenvs.gemjam.rules import MAX_SETS, STACK_SHOWN, Config, is_complete

#: every kind of decision, in the order of the ``decision`` one-hot
DECISIONS = ("adjust", "play", "react", "double", "pay", "place", "receive_guardian", "discard", "bottom",
             "may_draw", "timer", "eye_see", "lucky_draw", "reanimate", "greedy_goblin", "basilisk",
             "counter_return", "chaos_cube")
_DECISION_INDEX = {d: i for i, d in enumerate(DECISIONS)}
WILD_EFFECTS = ("rainbow_gem", "magic_mushroom", "poison_cup", "mirror_madness")


class Encoder:
    """Builds the observation of a seat (see the module docstring for what it holds)."""

    def __init__(self, cfg: Config):
        self.cfg = cfg
        n, K, T = cfg.num_players, cfg.num_kinds, cfg.num_types
        m = cfg.manifest
        self.wild_slot = {k: WILD_EFFECTS.index(m.effect[k]) for k in range(K) if m.is_wild[k]}
        self.set_features = T + 2 + len(WILD_EFFECTS) + 3
        #: per gem kind: its count slot within a set's features (Basic, Dual, or its wildcard)
        self.gem_slot = tuple(T if m.is_basic[k] else T + 1 if m.is_dual[k] else T + 2 + self.wild_slot[k]
                              if m.is_wild[k] else -1 for k in range(K))
        most = max(m.count) / 4  # the largest count of one kind, as stored
        sp = self.spec = ObservationSpec()
        sp.add("decision", len(DECISIONS), "one-hot: the kind of my pending decision (" + ", ".join(DECISIONS) + "); "
                                            "zeros when another seat decides")
        sp.add("my_turn_to_decide", 1, "1 when I decide now (who else decides is not shown)")
        sp.add("turn_player", n, "one-hot: whose turn it is")
        sp.add("my_choices", cfg.num_actions, "the action ids I chose so far in my pending composite decision")
        sp.add("turn_state", 6, "plays left /5, turn player asleep, frozen, timer decisions this turn /50, "
                                "timer penalty used, round / max_rounds", scale=1.0)
        sp.add("sleep_next", n, "per player: under Sleep Spell in its next turn")
        sp.add("freeze_next", n, "per player: under Freeze in its next turn")
        sp.add("hand", K, "my hand: cards of each kind", scale=4.0, high=most)
        sp.add("vault", K, "my Vault: cards of each kind", scale=4.0, high=most)
        sp.add("hand_sizes", n, "cards in each player's hand", scale=20.0, high=10.0)
        sp.add("vault_sizes", n, "cards in each player's Vault", scale=20.0, high=10.0)
        sp.add("known_hands", (n, K), "cards I was shown that are in each other player's hand (row 0 unused)",
               scale=4.0, high=most)
        sp.add("known_vaults", (n + 1, K), "cards I was shown in each other player's Vault; last row: the King's "
                                           "Vault", scale=4.0, high=most)
        sp.add("shrines", (n, MAX_SETS, self.set_features),
               "per player, per set slot: type one-hot, Basic gems /4, Dual gems /4, each wildcard /4 "
               "(Rainbow, Mushroom, Poison, Mirror), complete, guarded, broken this turn")
        sp.add("complete_sets", n, "completed sets per player", scale=4.0, high=20.0)
        sp.add("type_progress", (n, T, 4),
               "per player, per gem type (a summary of the Shrine): fill of its fullest incomplete set of "
               "the type (gems / set size), whether that set holds the type's Basic, completed sets of "
               "the type /4, gems representing the type in all its sets /4 (what a Gem Jam counts)",
               high=6.0)
        sp.add("discard", K, "the Discard Pile: cards of each kind", scale=4.0, high=most)
        sp.add("piles", 4, "Draw Pile size, Discard Pile size, King's Vault size (/172), Discard Pile recycled",
               high=2.0)
        sp.add("stack", (STACK_SHOWN, K + 2 * n + T + 3),
               "the response stack from the top: card kind one-hot, caster one-hot, target player one-hot, "
               "Gem Jam type one-hot, cancelled, Double Troubles /2, attached Double Trouble", high=4.0)
        sp.add("shown", K, "cards set aside and shown to me now (Eye See!, Lucky Draw, Basilisk)", scale=4.0, high=most)
        sp.add("payment", 2 + n, "payment I am making: amount left /50, 1, receiver one-hot", high=10.0)
        sp.add("transit", K, "gems and Guardians in transit, about to be placed", scale=4.0, high=most)
        sp.add("rule_options", 4, "turn_decision_limit /50 (0: none), a timer is in force, sirens_call, "
                                  "max_rounds /1000", high=20.0)
        self.o = {s.name: s.offset for s in sp.slices}
        self.size = sp.size  # a property that computes; read once

    def _type_progress(self, x: np.ndarray, base: int, shrine: list, complete: list) -> None:
        """Write one player's ``type_progress`` rows (T x 4, see the spec) at ``x[base:]``."""
        size, basic_of = self.cfg.set_size, self.cfg.basic_of
        for s, done in zip(shrine, complete):
            t = s.gem_type
            f = base + 4 * t
            gems = s.gems
            x[f + 3] += len(gems) / 4
            if done:
                x[f + 2] += 0.25
                continue
            fill = len(gems) / size[t]
            if fill > x[f] or (fill == x[f] and not x[f + 1]):
                x[f] = fill
                x[f + 1] = basic_of[t] in gems

    def observe(self, state, p: int) -> np.ndarray:
        """The observation of seat ``p``."""
        cfg, o = self.cfg, self.o
        n, K, T = cfg.num_players, cfg.num_kinds, cfg.num_types
        gem_slot, flags = self.gem_slot, T + 2 + len(WILD_EFFECTS)
        x = np.zeros(self.size, np.float32)
        d = state.decision
        if d is not None and not state.over and d.seat == p:
            # only one's own pending decision: that another seat is deciding a reaction would tell
            # that it holds one, as seats without one pass automatically (docs/gemjam.md "Hidden information")
            x[o["decision"] + _DECISION_INDEX[d.kind]] = 1
            x[o["my_turn_to_decide"]] = 1
            for a in d.chosen:
                x[o["my_choices"] + a] = 1
            if d.kind == "pay":
                x[o["payment"]] = d.context["amount_left"] / 50
                x[o["payment"] + 1] = 1
                x[o["payment"] + 2 + (d.context["receiver"] - p) % n] = 1
        x[o["turn_player"] + (state.turn - p) % n] = 1
        b = o["turn_state"]
        x[b] = state.plays / 5
        x[b + 1] = state.asleep
        x[b + 2] = state.frozen
        x[b + 3] = state.timer / 50
        x[b + 4] = state.timer_used
        x[b + 5] = state.round / cfg.options.max_rounds
        for q in range(n):
            r = (q - p) % n
            x[o["sleep_next"] + r] = state.sleep_next[q]
            x[o["freeze_next"] + r] = state.freeze_next[q]
            x[o["hand_sizes"] + r] = len(state.hands[q]) / 20
            x[o["vault_sizes"] + r] = len(state.vaults[q]) / 20
            complete = [is_complete(cfg, s) for s in state.shrines[q]]
            x[o["complete_sets"] + r] = sum(complete) / 4
            if r:
                base = o["known_hands"] + r * K
                for k in state.seen_hand[p][q]:
                    x[base + k] += 0.25
                base = o["known_vaults"] + r * K
                for k in state.seen_vault[p][q]:
                    x[base + k] += 0.25
            self._type_progress(x, o["type_progress"] + r * T * 4, state.shrines[q], complete)
            base = o["shrines"] + r * MAX_SETS * self.set_features
            for i, s in enumerate(state.shrines[q][:MAX_SETS]):
                f = base + i * self.set_features
                x[f + s.gem_type] = 1
                for k in s.gems:
                    x[f + gem_slot[k]] += 0.25
                f += flags
                if complete[i]:  # only non-zero flags are written (x starts at zero)
                    x[f] = 1
                if s.guarded:
                    x[f + 1] = 1
                if s.broken:
                    x[f + 2] = 1
        base = o["known_vaults"] + n * K
        for k in state.seen_vault[p][n]:
            x[base + k] += 0.25
        for k in state.hands[p]:
            x[o["hand"] + k] += 0.25
        for k in state.vaults[p]:
            x[o["vault"] + k] += 0.25
        if state.discard:  # long: counted at once
            x[o["discard"]:o["discard"] + K] = np.bincount(state.discard, minlength=K) * 0.25
        for k in state.transit:
            x[o["transit"] + k] += 0.25
        b = o["piles"]
        x[b] = len(state.draw) / 172
        x[b + 1] = len(state.discard) / 172
        x[b + 2] = len(state.king) / 172
        x[b + 3] = state.recycled
        width = K + 2 * n + T + 3
        for j, e in enumerate(reversed(state.stack[-STACK_SHOWN:])):
            f = o["stack"] + j * width
            x[f + e.kind] = 1
            x[f + K + (e.caster - p) % n] = 1
            if e.target_player >= 0:
                x[f + K + n + (e.target_player - p) % n] = 1
            if e.gem_type >= 0:
                x[f + K + 2 * n + e.gem_type] = 1
            f += K + 2 * n + T
            x[f] = e.cancelled
            x[f + 1] = e.doublings / 2
            x[f + 2] = e.attached
        if state.aside is not None and state.aside.seat == p:
            for k in state.aside.cards:
                x[o["shown"] + k] += 0.25
        b = o["rule_options"]
        lim = cfg.options.turn_decision_limit
        x[b] = (lim or 0) / 50
        x[b + 1] = lim is not None
        x[b + 2] = cfg.options.sirens_call
        x[b + 3] = cfg.options.max_rounds / 1000
        return x
