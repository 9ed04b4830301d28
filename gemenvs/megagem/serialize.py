"""MegaGem state <-> JSON-safe dict, with a full consistency check on the way in."""
from __future__ import annotations

import numpy as np

from gemenvs.megagem.data import (
    AUCTION_AMOUNT, AUCTION_COPIES, AUCTION_TYPE, CHART_NAMES, GEMS_PER_COLOUR, MISSIONS, MISSIONS_IN_PLAY,
    NUM_AUCTION_KINDS, NUM_COLOURS, NUM_MISSIONS, mission_met,
)
from gemenvs.megagem.rules import _PLAIN_FIELDS, BID, OVER, PHASES, REVEAL, AuctionRecord, MegaGemState, Options


class StateError(ValueError):
    """A serialized MegaGem state that is malformed or breaks the rules' invariants."""


def _need(cond: bool, what: str) -> None:
    if not cond:
        raise StateError(f"invalid MegaGem state: {what}")


def _int(x, name: str):
    """``x`` if it is a plain integer (not a bool)."""
    _need(isinstance(x, int) and not isinstance(x, bool), f"{name} must be an integer, found {x!r}")
    return x


def _ints(x, name: str, length: int | None = None, lo: int | None = 0) -> list[int]:
    _need(isinstance(x, list), f"{name} must be a list")
    _need(length is None or len(x) == length, f"{name} must have length {length}, has {len(x)}")
    for v in x:
        _need(isinstance(v, int) and not isinstance(v, bool), f"{name} must hold integers, found {v!r}")
        _need(lo is None or v >= lo, f"{name} must hold values >= {lo}, found {v}")
    return list(x)


def state_from_dict(d: dict, opts: Options) -> MegaGemState:
    """Rebuild a state from :meth:`MegaGemState.to_dict` output, rejecting anything inconsistent."""
    _need(isinstance(d, dict), "expected a dict")
    expected = set(_PLAIN_FIELDS) | {"rng", "history"}
    _need(set(d) == expected, f"keys differ: missing {sorted(expected - set(d))}, unknown {sorted(set(d) - expected)}")
    n = _int(d["num_players"], "num_players")
    _need(n == opts.num_players, f"num_players is {n!r}, the game has {opts.num_players}")
    _need(d["chart"] in CHART_NAMES, f"chart {d['chart']!r} is not one of {CHART_NAMES}")
    _need(opts.value_chart in ("random", d["chart"]), f"chart {d['chart']!r} differs from option {opts.value_chart!r}")
    coins = _ints(d["coins"], "coins", n, lo=None)
    hands = [_ints(h, "hand", NUM_COLOURS) for h in _list(d["hands"], "hands", n)]
    cols = [_ints(h, "collection", NUM_COLOURS) for h in _list(d["collections"], "collections", n)]
    loans = [_ints(x, "loans") for x in _list(d["loans"], "loans", n)]
    invs = [[_ints(x, "investment", 2) for x in _list(p, "investments")] for p in _list(d["investments"], "investments", n)]
    display = _ints(d["display"], "display", NUM_COLOURS)
    deck = _ints(d["gem_deck"], "gem_deck")
    row = _ints(d["gem_row"], "gem_row")
    _need(len(row) <= 2, "gem_row holds at most 2 gems")
    _need(all(c < NUM_COLOURS for c in deck + row), "gem colours must be < 5")
    for c in range(NUM_COLOURS):
        total = sum(h[c] for h in hands) + sum(h[c] for h in cols) + display[c] + deck.count(c) + row.count(c)
        _need(total == GEMS_PER_COLOUR, f"colour {c} has {total} gems in play, not {GEMS_PER_COLOUR}")
    auction = _ints(d["auction_deck"], "auction_deck")
    _need(all(a < NUM_AUCTION_KINDS for a in auction), "auction card ids must be < 6")
    missions = _ints(d["missions"], "missions", MISSIONS_IN_PLAY)
    _need(len(set(missions)) == MISSIONS_IN_PLAY and max(missions) < NUM_MISSIONS, "missions must be 4 distinct ids < 30")
    owners = _ints(d["mission_owner"], "mission_owner", MISSIONS_IN_PLAY, lo=-1)
    _need(max(owners) < n, "mission_owner must be -1 or a seat")
    phase = d["phase"]
    _need(phase in PHASES, f"phase {phase!r} is not one of {PHASES}")
    history = [_record(r, n) for r in _list(d["history"], "history")]
    card = _int(d["auction_card"], "auction_card")
    _need(-1 <= card < NUM_AUCTION_KINDS, "auction_card must be -1..5")
    _need((card == -1) == (phase == OVER), "auction_card is -1 exactly when the game is over")
    rnd = _int(d["round"], "round")
    _need(rnd == len(history) + (phase == BID), f"round {rnd!r} does not match {len(history)} finished auctions")
    if phase == REVEAL:
        _need(history and history[-1].card == card, "the revealing round's card must be the last auction")
        _need(history[-1].revealed == -1, "the revealing round's auction already has a reveal")
        _need(opts.reveal_after == "every_auction" or AUCTION_TYPE[card] == "treasure",
              "no reveal follows a Loan or Invest auction when reveal_after='treasure_only'")
    if opts.reveal_after == "treasure_only":
        _need(all(r.revealed == -1 for r in history if AUCTION_TYPE[r.card] != "treasure"),
              "a Loan or Invest auction has a reveal although reveal_after='treasure_only'")
    if phase == BID:
        _need(bool(row) and (len(row) == 2 or not deck), "gem_row must hold 2 gems while the deck has more")
    elif phase == REVEAL:
        _need(bool(row or deck), "a round that sold the last gem has no reveal")
    else:
        _need(not row and not deck, "the game is over only when every gem has been sold")
    used = [r.card for r in history] + ([card] if phase == BID else [])
    for k in range(NUM_AUCTION_KINDS):
        _need(auction.count(k) + used.count(k) == AUCTION_COPIES[k], f"auction card kind {k} is not accounted for")
    start = opts.start_coins
    held = [start] * n  # replay the coins: nobody ever bid more than it could
    for r in history:
        kind, amount = AUCTION_TYPE[r.card], AUCTION_AMOUNT[r.card]
        _need(all(b <= held[q] + (amount if kind == "loan" else 0) for q, b in enumerate(r.bids)),
              "a history bid exceeds what its player could bid at the time")
        held[r.winner] += (amount if kind == "loan" else 0) - r.bids[r.winner]
    for p in range(n):
        expect, exp_loans, exp_inv = start, [], []
        for r in history:
            if r.winner != p:
                continue
            price, kind, amount = r.bids[p], AUCTION_TYPE[r.card], AUCTION_AMOUNT[r.card]
            if kind == "loan":
                expect += amount - price
                exp_loans.append(amount)
            else:
                expect -= price
                if kind == "invest":
                    exp_inv.append([amount, price])
        _need(coins[p] == expect, f"player {p} has {coins[p]} coins, its auctions account for {expect}")
        _need(loans[p] == exp_loans and invs[p] == exp_inv, f"player {p}'s loans/investments do not match its auctions")
    for p in range(n):
        bought = [0] * NUM_COLOURS
        for r in history:
            if r.winner == p:
                for c in r.gems:
                    bought[c] += 1
        _need(cols[p] == bought, f"player {p}'s collection does not match the gems it bought")
    revealed = [sum(1 for r in history if r.revealed == c) for c in range(NUM_COLOURS)]
    if phase != OVER:
        for p in range(n):
            left = opts.hand_size - sum(1 for r in history if r.winner == p and r.revealed >= 0)
            _need(sum(hands[p]) == left,
                  f"player {p} holds {sum(hands[p])} gem cards in hand, its reveals leave {left}")
    if phase == OVER:
        _need(all(display[c] >= revealed[c] for c in range(NUM_COLOURS)), "display lacks revealed gems")
    else:
        _need(display == revealed, "display does not match the gems revealed after auctions")
    bids = d["bids"]
    winner = _int(d["winner"], "winner")
    if phase == BID:
        _need(isinstance(bids, list) and len(bids) == n, "bids must list one entry per player while bidding")
        _need(all(b is None or (isinstance(b, int) and not isinstance(b, bool) and b >= 0) for b in bids),
              "bids must be None or integers >= 0")
        limit = [coins[p] + (AUCTION_AMOUNT[card] if AUCTION_TYPE[card] == "loan" else 0) for p in range(n)]
        _need(all(b is None or b <= limit[p] for p, b in enumerate(bids)), "a bid exceeds its player's limit")
        _need(any(b is None for b in bids), "a bidding round with every bid in should have been resolved")
        _need(winner == -1, "winner must be -1 while bidding")
    elif phase == REVEAL:
        _need(bids == [], "bids must be empty outside bidding")
        _need(0 <= winner < n and sum(hands[winner]) > 0, "the revealing winner needs cards in hand")
        _need(winner == history[-1].winner, "the revealing winner must be the last auction's winner")
    else:
        _need(all(sum(h) == 0 for h in hands), "all hands are revealed at the end")
        _need(winner == -1, "winner must be -1 when over")
    last_winner = _int(d["last_winner"], "last_winner")
    _need(last_winner == (history[-1].winner if history else -1), "last_winner must be the last auction's winner")
    for i, m in enumerate(missions):  # claims are automatic after every auction (the winner's wait for its reveal)
        o = owners[i]
        if o >= 0:
            _need(mission_met(m, cols[o], opts.two_pairs),
                  f"mission {MISSIONS[m][0]!r} is claimed by player {o}, whose collection does not meet it")
        else:
            waiting = winner if phase == REVEAL else -1
            _need(not any(mission_met(m, cols[p], opts.two_pairs) for p in range(n) if p != waiting),
                  f"open mission {MISSIONS[m][0]!r} is met by a collection and should have been claimed")
    queue = d["tie_queue"]
    if opts.tie_break == "queue":
        _need(sorted(_ints(queue, "tie_queue")) == list(range(n)), "tie_queue must be a permutation of the seats")
    else:
        _need(queue == [], "tie_queue must be empty unless tie_break='queue'")
    rng = _rng(d["rng"])
    return MegaGemState(
        num_players=n, chart=d["chart"], rng=rng, coins=coins, hands=hands, collections=cols, loans=loans,
        investments=invs, display=display, gem_deck=deck, gem_row=row, auction_deck=auction, missions=missions,
        mission_owner=owners, auction_card=card, phase=phase, round=rnd, bids=list(bids) if phase == BID else [],
        winner=winner, last_winner=last_winner, tie_queue=list(queue), history=history,
    )


def _list(x, name: str, length: int | None = None) -> list:
    _need(isinstance(x, list), f"{name} must be a list")
    _need(length is None or len(x) == length, f"{name} must have length {length}")
    return x


def _record(r, n: int) -> AuctionRecord:
    _need(isinstance(r, dict) and set(r) == {"card", "bids", "winner", "gems", "revealed"}, "malformed history entry")
    _need(0 <= _int(r["card"], "history card") < NUM_AUCTION_KINDS, "history card id out of range")
    bids = _ints(r["bids"], "history bids", n)
    _need(0 <= _int(r["winner"], "history winner") < n, "history winner out of range")
    _need(bids[r["winner"]] == max(bids), "a history winner must hold the top bid")
    gems = _ints(r["gems"], "history gems")
    _need(all(c < NUM_COLOURS for c in gems), "history gem colours must be < 5")
    if AUCTION_TYPE[r["card"]] == "treasure":
        _need(1 <= len(gems) <= AUCTION_AMOUNT[r["card"]], "a Treasure auction buys 1 gem, or 2 on a 2-gem card")
    else:
        _need(not gems, "a Loan or Invest auction buys no gems")
    _need(-1 <= _int(r["revealed"], "history reveal") < NUM_COLOURS, "history reveal out of range")
    return AuctionRecord(card=r["card"], bids=bids, winner=r["winner"], gems=gems, revealed=r["revealed"])


_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")


def _rng(state) -> np.random.Generator:
    _need(isinstance(state, dict) and state.get("bit_generator") in _BIT_GENERATORS,
          f"rng state must be a numpy bit generator state ({', '.join(_BIT_GENERATORS)})")
    try:
        bitgen = getattr(np.random, state["bit_generator"])()
        bitgen.state = state
    except Exception as err:  # noqa: BLE001 - any failure here means a corrupt RNG record
        raise StateError(f"invalid MegaGem state: rng state is not a numpy bit generator state ({err})") from None
    return np.random.Generator(bitgen)
