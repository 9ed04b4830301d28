"""The Gem Jam engine: the :class:`~gemenvs.core.engine.Game` protocol over the step tables of
:mod:`~gemenvs.gemjam.steps` (rules, stack, spells), the encoder and the renderer."""
from __future__ import annotations

from bisect import insort

import numpy as np

from gemenvs.core.engine import Game, Results
from gemenvs.gemjam import rules, steps
from gemenvs.gemjam.encode import Encoder
from gemenvs.gemjam.render import event_text, render_text
from gemenvs.gemjam.rules import GemJamState, Options
from gemenvs.gemjam.winmodel import win_chances

#: decisions whose answer other seats may not see in the log (a card put face down or taken
#: privately); ``bank`` ids are hidden in every decision
PRIVATE_ANSWERS = ("bottom", "eye_see", "basilisk", "greedy_goblin")


class GemJam(Game):
    """Gem Jam for 2-4 players (default 3); options as in :class:`~gemenvs.gemjam.rules.Options`.

    Every decision is one id of ``action_spec`` (play, bank, end_plays, adjust, gem_type,
    target_player, king_vault, set, new_set, card, yes, pass); a composite choice (a spell and
    its targets, a gem and its type and set, a payment card) is a sequence of such decisions,
    each exactly masked. See ``docs/gemjam.md``.
    """

    name = "gemjam"
    version = 0
    score_scale = 4.0
    forced_is_public = False
    player_counts = rules.PLAYER_COUNTS

    def __init__(self, num_players: int = 3, turn_decision_limit: int | None = None, sirens_call: bool = False,
                 max_rounds: int = 100, manifest=None):
        self.opts = Options(num_players, turn_decision_limit, sirens_call, max_rounds, manifest)
        self.cfg = rules.Config(self.opts)
        self.manifest = self.cfg.manifest
        self.num_players = self.opts.num_players
        self.action_spec = self.cfg.actions
        self.encoder = Encoder(self.cfg)
        self.spec = self.encoder.spec
        # a generous bound (docs/gemjam.md): per turn at most 3 + 2 Nature's Rebirth plays, each
        # with its own choices, windows, payments and placements, all bounded by the cards in play
        self.max_decisions = self.opts.max_rounds * self.num_players * 2_000

    def options(self) -> dict:
        return dict(vars(self.opts))

    # ------------------------------------------------------------------ the rules

    def initial_state(self, seed: int) -> GemJamState:
        return steps.new_game(self.cfg, seed)

    def to_act(self, state: GemJamState) -> tuple[int, ...]:
        if state.over or state.decision is None:
            return ()
        return (state.decision.seat,)

    def legal_mask(self, state: GemJamState, player: int) -> np.ndarray:
        mask = np.zeros(self.cfg.num_actions, np.int8)
        d = state.decision
        if not state.over and d is not None and d.seat == player:
            mask[d.options] = 1
        return mask

    def forced_action(self, state: GemJamState, player: int) -> int | None:
        d = state.decision
        if d is not None and d.seat == player and len(d.options) == 1:
            return d.options[0]
        return None

    def explain(self, state: GemJamState, player: int, action: int) -> str:
        d = state.decision
        m = self.manifest
        name, arg = self.action_spec.decode(action)
        what = {"adjust": "the Stage 1 adjustment", "play": "the next play", "react": "a response window",
                "double": "the Gem Jam about to resolve", "pay": "a payment", "place": "placing a gem",
                "receive_guardian": "placing a received Guardian", "discard": "a discard",
                "bottom": "the hand limit", "may_draw": "an optional draw", "timer": "the timer penalty"}
        ctx = what.get(d.kind, d.kind.replace("_", " "))
        legal = sorted({self.action_spec.decode(a)[0] for a in d.options})
        if name not in legal:
            return f"this is {ctx}; it takes {', '.join(legal)}"
        if d.kind == "play" and not d.chosen and name in ("play", "bank"):
            card = m.names[arg]
            if arg not in state.hands[player]:
                return f"no {card} in hand"
            if state.plays <= 0:
                return "no play left this turn"
            if name == "bank":
                return f"{card} is a Gem Card: it goes to the Shrine, never to the Vault"
            if m.is_gem[arg]:
                if state.frozen:
                    return "Freeze: no Gem Card from hand this turn"
                return f"no Basic Gem in an opponent's Shrine for {card} to copy"
            if m.reactive[arg]:
                return f"{card} is cast only in a response window"
            if state.asleep:
                return "Sleep Spell: no spell this turn"
            return f"{card} has no valid target now"
        if name == "card" and not d.chosen and d.kind in ("discard", "bottom", "pay"):
            return f"no payable {m.names[arg]} in the Vault" if d.kind == "pay" else f"no {m.names[arg]} in hand"
        return f"not one of the choices of {ctx} now ({len(d.options)} legal; check the mask)"

    def play(self, state: GemJamState, player: int, action: int) -> None:
        d = state.decision
        if (d.kind in PRIVATE_ANSWERS) or self.cfg.BANK <= action < self.cfg.BANK + self.cfg.num_kinds:
            state.hidden.append(len(state.log) - 1)
        steps.answer(state, self.cfg, player, action)

    def log_action_hidden(self, state: GemJamState, index: int, viewer: int) -> bool:
        return index in state.hidden

    def is_over(self, state: GemJamState) -> bool:
        return bool(state.over)

    def results(self, state: GemJamState) -> Results:
        if not state.over:
            raise ValueError("results() needs a finished game")
        n = state.n
        sets = [rules.complete_sets(state, self.cfg, p) for p in range(n)]
        won = [int(p in state.winners) for p in range(n)]
        return Results(scores=[float(s) for s in sets],
                       breakdown=[{"completed_sets": float(sets[p]), "won": float(won[p])} for p in range(n)],
                       winners=list(state.winners), extra={"end_reason": state.end_reason},
                       rank_keys=[(won[p], sets[p]) for p in range(n)])

    def progress(self, state: GemJamState, player: int) -> float:
        """``player``'s way towards the four completed sets that win, in [0, 1]: each completed set
        counts 1/4, and each of the fullest incomplete sets that could make up the four half its
        share of gems (a full set still missing its Basic counting one gem short); 1.0 from four
        completed sets on. A potential for reward shaping, never part of the rules."""
        complete, fills = 0, []
        for s in state.shrines[player]:
            if rules.is_complete(self.cfg, s):
                complete += 1
            else:
                size = self.cfg.set_size[s.gem_type]
                fills.append(min(len(s.gems), size - 1) / size)
        if complete >= 4:
            return 1.0
        fills.sort(reverse=True)
        return (complete + 0.5 * sum(fills[:4 - complete])) / 4

    def win_chance(self, state: GemJamState, player: int) -> float:
        """``player``'s chance to win from ``state`` by the fitted win model
        (:func:`gemenvs.gemjam.winmodel.win_chances`; exact once the game is over). It reads the whole
        state, other hands included: a potential for reward shaping, never part of the rules or of an
        observation."""
        return float(win_chances(state, self.cfg)[player])

    def observe(self, state: GemJamState, player: int) -> np.ndarray:
        return self.encoder.observe(state, player)

    def render(self, state: GemJamState, viewer: int | None = None) -> str:
        return render_text(state, self.cfg, viewer)

    def game_log_size(self, state: GemJamState) -> int:
        return len(state.events)

    def game_log_entries(self, state: GemJamState, start: int = 0) -> list[tuple[int, str]]:
        """The game's events from index ``start`` (spells cast, countered, resolved, payments,
        Siren's Call ...): ``(-1 or the one seat that may see it, sentence)``."""
        return [(ev[0], event_text(self.cfg, ev)) for ev in state.events[start:]]

    # ------------------------------------------------------------------ hidden information

    def resample_hidden(self, state: GemJamState, observer: int, rng: np.random.Generator) -> GemJamState:
        """Redraw what ``observer`` cannot see: other hands and Vaults (sizes kept, cards it knows there
        kept), the King's Vault, the Draw Pile (positions it knows kept), cards set aside for another seat,
        the RNG, and which Nature's Rebirth copies there are spent (how many is public, docs/gemjam.md "Engine
        choices"; they are dealt again among the redrawn zones' copies outside the King's Vault, which a spent
        card never reaches). What other seats know of the redrawn zones is hidden from the observer: they are
        taken to know there exactly what it knows there. The draw depends only on what the observer sees and
        on ``rng`` (search agents rely on it)."""
        s = state.copy()
        n, o = s.n, observer
        d = s.decision
        pending = []
        if d is not None and d.seat != o and d.chosen and d.kind == "play" \
                and self.cfg.PLAY <= d.chosen[0] < self.cfg.BANK:
            pending = [d.chosen[0] - self.cfg.PLAY]  # a card it has begun to play is known to be in hand
        # the cards the observer cannot place: a multiset it can count (every card minus those it sees)
        zones = []  # (where, seat, size, what the observer knows there)
        pool = []
        for q in range(n):
            if q != o:
                zones.append(("hand", q, len(s.hands[q]),
                              sorted(s.seen_hand[o][q] + (pending if d is not None and q == d.seat else []))))
                zones.append(("vault", q, len(s.vaults[q]), s.seen_vault[o][q]))
                pool += s.hands[q] + s.vaults[q]
        zones.append(("king", n, len(s.king), s.seen_vault[o][n]))
        pool += s.king
        draw_free = [i for i, bits in enumerate(s.draw_seen) if not bits >> o & 1]
        pool += [s.draw[i] for i in draw_free]
        # cards set aside for another seat are unknown, unless they came from the observer's own
        # hand or Vault (the victim of Eye See! or Basilisk knows which of its cards they are)
        redraw_aside = s.aside is not None and o not in (s.aside.seat, s.aside.source)
        if redraw_aside:
            pool += s.aside.cards
        pool.sort()  # (not in the order the cards lie: that is hidden)
        # what the observer knows in a zone stays there; its knowledge may be out of date (a card
        # taken unseen, e.g. banked or taken by Greedy Goblin), so only as far as the unplaced cards
        # allow and the zone holds
        slots = []  # (where, seat, size, kept)
        for where, q, size, seen in zones:
            kept = []
            for k in seen:
                if k in pool:
                    pool.remove(k)
                    kept.append(k)
            if len(kept) > size:
                chosen = sorted(int(i) for i in rng.choice(len(kept), size=size, replace=False))
                pool += [k for i, k in enumerate(kept) if i not in chosen]
                kept = [kept[i] for i in chosen]
                pool.sort()
            slots.append((where, q, size, kept))
        redrawn = [f"{where}{q}" for where, q, _, _ in slots if where != "king"] + ["draw"] + \
            (["aside"] if redraw_aside else [])
        marks = [m for m in s.spent_rebirths if m[0] in redrawn]
        cards = pool
        while True:  # (again only while the spent marks would not fit: a rare rejection)
            order = rng.permutation(len(cards))
            pool = [cards[int(i)] for i in order]
            for where, q, size, kept in slots:
                take, pool = pool[:size - len(kept)], pool[size - len(kept):]
                zone = sorted(kept + take)
                if where == "hand":
                    s.hands[q] = zone
                elif where == "vault":
                    s.vaults[q] = zone
                else:
                    s.king = zone
            for i in draw_free:
                s.draw[i] = pool.pop()
                s.draw_seen[i] = 0  # a redrawn card is nobody's knowledge
            if redraw_aside:
                s.aside.cards = [pool.pop() for _ in s.aside.cards]
            if not marks or _deal_spent_marks(s, marks, redrawn, rng):
                break
        # other seats' knowledge of the redrawn zones: what the observer knows there (their own is
        # hidden from it); of the observer's zones: what is still true
        for where, r, _, kept in slots:
            for q in range(n):
                if q != o and q != r:
                    (s.seen_hand if where == "hand" else s.seen_vault)[q][r] = sorted(kept)
        for q in range(n):
            if q != o:
                s.seen_hand[q][o] = _common(s.seen_hand[q][o], s.hands[o])
                s.seen_vault[q][o] = _common(s.seen_vault[q][o], s.vaults[o])
        s.rng = np.random.Generator(np.random.PCG64(int(rng.integers(0, 2**63 - 1))))
        if d is not None and d.seat != o and d.kind in steps.CANDIDATES:
            cands = steps.CANDIDATES[d.kind](s, self.cfg, d.seat, d.context)
            for k, a in enumerate(d.chosen):
                cands = [c for c in cands if c[k] == a]
            if cands:
                s.decision.answers = cands
                s.decision.options = sorted({c[len(d.chosen)] for c in cands})
        return s


def _deal_spent_marks(state: GemJamState, marks: list, zones: list, rng: np.random.Generator) -> bool:
    """Give the spent marks ``marks`` ([zone, kind] pairs) to random copies of their kinds in
    ``zones``; False (nothing changed) when the zones hold too few copies."""
    keep = [m for m in state.spent_rebirths if m[0] not in zones]
    dealt = []
    for k in sorted({m[1] for m in marks}):
        copies = [z for z in zones for c in rules.zone_cards(state, z) if c == k]
        want = sum(1 for m in marks if m[1] == k)
        if len(copies) < want:
            return False
        dealt += [[copies[int(i)], k] for i in rng.choice(len(copies), size=want, replace=False)]
    state.spent_rebirths = sorted(keep + dealt)
    return True


def _common(seen: list, zone: list) -> list:
    """The part of ``seen`` (a sorted multiset) that ``zone`` still holds."""
    rest, out = list(zone), []
    for k in seen:
        if k in rest:
            rest.remove(k)
            insort(out, k)
    return out


__all__ = ["GemJam"]
