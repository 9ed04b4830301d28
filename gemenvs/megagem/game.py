"""The MegaGem engine: the :class:`~gemenvs.core.engine.Game` protocol over rules, encoder and renderer."""
from __future__ import annotations

import numpy as np

from gemenvs.core.engine import MAX_SEED, Game, Results
from gemenvs.megagem import rules
from gemenvs.megagem.data import AUCTION_AMOUNT, AUCTION_TYPE, COLOURS, NUM_AUCTION_CARDS, NUM_COLOURS, SETUP
from gemenvs.megagem.encode import Encoder
from gemenvs.megagem.render import render_text
from gemenvs.megagem.rules import BID, REVEAL, MegaGemState, Options

#: divisor turning a final score into a reward for reward="score" / "margin"
SCORE_SCALE = 100.0


class MegaGem(Game):
    """MegaGem for 3-5 players; options as in :class:`~gemenvs.megagem.rules.Options`.

    Actions (``action_spec``): ``bid[k]`` bids k coins (0..max_bid); ``reveal[colour]`` moves a
    gem card of that colour from hand to the Value Display. A bidder whose bid limit is 0 and a
    winner whose hand holds a single colour have one legal action: the core plays and logs it.
    """

    name = "megagem"
    version = 0
    player_counts = (3, 4, 5)
    score_scale = SCORE_SCALE
    #: a forced reveal tells that the hand holds a single colour: others may not learn it
    forced_is_public = False

    def __init__(self, num_players: int = 4, value_chart: str = "A", tie_break: str = "rulebook",
                 reveal_after: str = "every_auction", two_pairs: str = "any", public_bids: bool = True):
        self.opts = Options(num_players, value_chart, tie_break, reveal_after, two_pairs, public_bids)
        self.num_players = self.opts.num_players
        self.encoder = Encoder(self.opts)
        self.spec = self.encoder.spec
        self.action_spec = self.encoder.action_spec
        self.max_bid = self.opts.max_bid
        self._bids = self.action_spec["bid"]
        self._reveals = self.action_spec["reveal"]
        self._bid_zero, self._reveal_start = self._bids[0], self._reveals.start
        # every auction card bid on by every seat, plus one reveal per card dealt to a hand
        self.max_decisions = NUM_AUCTION_CARDS * self.num_players + self.num_players * SETUP[self.num_players][1]

    def options(self) -> dict:
        return dict(vars(self.opts))

    def initial_state(self, seed: int) -> MegaGemState:
        return rules.new_state(self.opts, seed)

    def to_act(self, state: MegaGemState) -> tuple[int, ...]:
        return rules.to_act(state)

    def legal_mask(self, state: MegaGemState, player: int) -> np.ndarray:
        return self.encoder.mask(state, player)

    def forced_action(self, state: MegaGemState, player: int) -> int | None:
        """Bid 0 for a bidder whose bid limit is 0; reveal the colour of a winner's one-colour hand; else None."""
        if state.phase == BID:  # (called after every decision: kept cheap)
            if state.coins[player] == 0 and state.bids[player] is None and rules.bid_limit(state, player) == 0:
                return self._bid_zero
        elif state.phase == REVEAL and state.winner == player:
            hand = state.hands[player]
            if hand.count(0) == NUM_COLOURS - 1:
                return self._reveal_start + next(c for c, k in enumerate(hand) if k)
        return None

    def forcing_possible(self, state: MegaGemState) -> bool:
        """Only at the start of a round or a reveal: within a round the bid limits do not change,
        so a bidder forced to bid 0 was already played when the round began."""
        return state.phase != BID or all(b is None for b in state.bids)

    def explain(self, state: MegaGemState, player: int, action: int) -> str:
        kind, arg = self.action_spec.decode(action)
        if state.phase == BID:
            if kind == "reveal":
                return "this is a bidding decision; reveal actions are not allowed"
            limit = rules.bid_limit(state, player)
            return f"bid {arg} exceeds the limit of {limit} (coins{' + loan' if limit > state.coins[player] else ''})"
        if kind == "bid":
            return "the winner must reveal a gem from its hand, not bid"
        return f"no {COLOURS[arg]} gem in hand"

    def play(self, state: MegaGemState, player: int, action: int) -> None:
        if state.phase == BID:
            rules.place_bid(state, self.opts, player, action - self._bids.start)
        else:
            rules.reveal(state, self.opts, player, action - self._reveals.start)

    def is_over(self, state: MegaGemState) -> bool:
        return state.phase == rules.OVER

    def results(self, state: MegaGemState) -> Results:
        if state.phase != rules.OVER:
            raise ValueError("results() needs a finished game")
        return rules.results(state)

    def observe(self, state: MegaGemState, player: int) -> np.ndarray:
        return self.encoder.observe(state, player)

    def render(self, state: MegaGemState, viewer: int | None = None) -> str:
        return render_text(state, viewer, self.opts.public_bids)

    # ------------------------------------------------------------------ hidden information

    def log_action_hidden(self, state: MegaGemState, index: int, viewer: int) -> bool:
        """Another seat's bid is sealed while its round is being bid, and for good when
        ``public_bids=False``; reveals are public (the gem lands in the Value Display)."""
        if state.log[index][1] not in self._bids:
            return False
        if not self.opts.public_bids:
            return True
        # while bidding, the bids made so far this round are the last entries of the log
        return state.phase == BID and index >= len(state.log) - _bids_in(state)

    def resample_hidden(self, state: MegaGemState, observer: int, rng: np.random.Generator) -> MegaGemState:
        """A copy of ``state`` with what ``observer`` cannot see drawn afresh from ``rng``.

        Redrawn: the other hands (sizes kept) and the gem deck, dealt from the gems the observer
        cannot locate (other hands + deck); the auction deck order (the kinds left are public);
        the other seats' bids of the round being bid (any legal bid) and, with
        ``public_bids=False``, the losing bids of earlier rounds (any bid under the winner's,
        which its coins made public); the RNG. The log is rewritten to match: those bids, and
        whether other seats' decisions were forced. Not replayable from ``seed`` and ``log``.
        """
        s = state.copy()
        n = s.num_players
        others = [p for p in range(n) if p != observer]
        pool = [c for p in others for c in range(NUM_COLOURS) for _ in range(s.hands[p][c])] + s.gem_deck
        # sorted first: the draw depends only on what the observer sees and on rng (search agents rely on it)
        pool = [int(c) for c in rng.permutation(sorted(pool))]
        for p in others:
            size = sum(s.hands[p])
            s.hands[p] = [0] * NUM_COLOURS
            for c in pool[:size]:
                s.hands[p][c] += 1
            del pool[:size]
        s.gem_deck = pool
        s.auction_deck = [int(a) for a in rng.permutation(sorted(s.auction_deck))]
        s.rng = np.random.default_rng(int(rng.integers(0, MAX_SEED)))
        self._redraw_bids(s, observer, rng)
        if s.phase != rules.OVER:  # (at the end the hands are emptied without log entries)
            self._refresh_forced_flags(s, observer)
        return s

    def _redraw_bids(self, s: MegaGemState, observer: int, rng: np.random.Generator) -> None:
        """Redraw the bids of other seats that ``observer`` cannot see, in the bids, history and log."""
        n = s.num_players
        entries = [e for e in s.log if e[1] in self._bids]
        current = _bids_in(s)
        if s.phase == BID:
            for entry in entries[len(entries) - current:]:
                p = entry[0]
                if p != observer:
                    entry[1] = s.bids[p] = int(rng.integers(0, rules.bid_limit(s, p) + 1))
        if self.opts.public_bids:
            return
        coins = [self.opts.start_coins] * n  # coins before each auction, replayed from the history
        first = len(entries) - current - n * len(s.history)  # log entry of the first auction's first bid
        for r, rec in enumerate(s.history):
            loan = AUCTION_AMOUNT[rec.card] if AUCTION_TYPE[rec.card] == "loan" else 0
            top = rec.bids[rec.winner]
            at = first + r * n
            if top > 0 and at >= 0:  # (a state built by hand may lack the log of its history)
                for entry in entries[at:at + n]:
                    p = entry[0]
                    if p != observer and p != rec.winner:  # the winner's price is public through its coins
                        entry[1] = rec.bids[p] = int(rng.integers(0, min(coins[p] + loan, top - 1) + 1))
            coins[rec.winner] += loan - top

    def _refresh_forced_flags(self, s: MegaGemState, observer: int) -> None:
        """Mark other seats' reveals as forced exactly when their (redrawn) hand then held one colour."""
        hands = [list(h) for h in s.hands]  # walked backwards: a hand before each of its reveals
        for entry in reversed(s.log):
            p, a = entry[0], entry[1]
            if a in self._reveals:
                hands[p][a - self._reveals.start] += 1
                if p != observer:
                    entry[2] = int(sum(1 for k in hands[p] if k) == 1)


def _bids_in(state: MegaGemState) -> int:
    """How many seats have bid in the round being bid (0 outside bidding)."""
    return sum(1 for b in state.bids if b is not None) if state.phase == BID else 0


__all__ = ["MegaGem"]
