"""GemGreedyAgent: a GEM baseline that reads only its observation, through the named-slice spec.

It values each face-up card by the points it would add (its gems and the majorities it would
swing, counting every held card, INVESTED or LEVERAGED), bids the lowest amount that no later
bidder can beat if that fits its budget (its coin cards, less what it keeps back to reinvest),
pays with the coin cards that cover a debt with the least waste, and reinvests the LEVERAGED
cards with the best points per cost. It never pays with gem cards unless nothing else covers.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np

from gemenvs.agents.base import BaseAgent, legal_actions

PHASES = ("bid", "pay", "take", "reinvest")


def points(mine: np.ndarray, others: np.ndarray) -> float:
    """Points of gem counts ``mine`` (per type) against ``others`` (players x types): gems + majorities."""
    total = float(mine.sum())
    best_other = others.max(axis=0) if len(others) else np.zeros_like(mine)
    for t in range(mine.size):
        if mine[t] <= 0 or mine[t] < best_other[t]:
            continue
        total += 2.0 if (others[:, t] == mine[t]).any() else 3.0
    return total


class GemGreedyAgent(BaseAgent):
    """Greedy GEM baseline (see the module docstring); deterministic, it never uses its RNG."""

    name = "greedy"

    def __init__(self, spec=None, num_actions=None, seed=None, action_spec=None):
        super().__init__(spec, num_actions, seed, action_spec)
        if spec is None or action_spec is None:
            raise ValueError("GemGreedyAgent needs the observation and action specs (use GemGreedyAgent.for_env(env))")
        self.n = spec["capital"].size
        self.bids = action_spec["bid"]
        self.pass_ = action_spec["pass"].start
        self.take = action_spec["take"]
        self.pay_coin = action_spec["pay_coin"]
        self.pay_card = action_spec["pay_card"]
        self.reinvest = action_spec["reinvest"]
        self.end = action_spec["end"].start

    # ------------------------------------------------------------------ reading the observation
    def _read(self, observation: np.ndarray) -> dict:
        d = self.spec.decode(observation)
        n = self.n
        place = np.rint(d["card_place"]).astype(int)
        d["held_by"] = np.full(place.shape[0], -1)
        d["held_invested"] = np.zeros(place.shape[0], dtype=bool)
        for c in range(place.shape[0]):
            slot = int(np.argmax(place[c]))
            if slot >= 2:
                d["held_by"][c] = (slot - 2) % n
                d["held_invested"][c] = slot < 2 + n
        d["face_up"] = [c for c in range(place.shape[0]) if place[c, 1] == 1]
        d["gems"] = np.rint(d["card_gems"]).astype(int)
        d["potential"] = np.rint(d["invested_gems"] + d["leveraged_gems"]).astype(float)
        d["phase_name"] = PHASES[int(np.argmax(d["phase"]))]
        return d

    def _gain(self, d: dict, card: int, counts: np.ndarray | None = None) -> float:
        """Points card ``card`` adds to the observer's potential counts."""
        mine = d["potential"][0] if counts is None else counts
        others = d["potential"][1:]
        return points(mine + d["gems"][card], others) - points(mine, others)

    # ------------------------------------------------------------------ decisions
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = set(int(a) for a in legal_actions(action_mask))
        d = self._read(observation)
        phase = d["phase_name"]
        if phase == "bid":
            a = self._bid(d, legal)
        elif phase == "pay":
            a = self._pay(d, legal, int(round(d["owed"][0])))
        elif phase == "take":
            a = self._take(d, legal)
        else:
            a = self._reinvest(d, legal)
        if a in legal:
            return a
        for fallback in (self.pass_, self.end):
            if fallback in legal:
                return fallback
        return int(min(legal))

    def _coins(self, d: dict) -> list[tuple[int, int]]:
        """(coin index, value) of the observer's INVESTED coin cards."""
        up = np.rint(d["coins"][0]).astype(int)
        return [(j, int(round(d["coin_value"][j]))) for j in range(up.size) if up[j]]

    def _bid(self, d: dict, legal: set[int]) -> int:
        gains = {c: self._gain(d, c) for c in d["face_up"]}
        best = max(gains, key=gains.get)
        coin_capital = sum(v for _, v in self._coins(d))
        final = d["final_round"][0] > 0.5
        keep = 0 if final else int(round(d["card_cost"][best]))
        budget = coin_capital - keep
        high = int(round(d["high_bid"][0]))
        state = np.rint(d["bid_state"]).astype(int)
        anyone_bid = bool(state[:, 2].any())
        lowest = high + 1 if anyone_bid else 0
        later = [k for k in range(1, self.n) if state[k, 0] == 1]
        capitals = np.rint(d["capital"]).astype(int)
        safe = max([lowest] + [int(capitals[k]) for k in later])
        if gains[best] > 0 and safe <= budget and safe in legal:
            return safe
        if self.pass_ in legal:
            return self.pass_
        return min(a for a in legal if a in self.bids)

    def _pay(self, d: dict, legal: set[int], owed: int) -> int:
        """Pay with the coin subset of least total covering ``owed``; gem cards only if coins fall short."""
        coins = self._coins(d)
        best = None
        for r in range(1, len(coins) + 1):
            for sub in combinations(coins, r):
                total = sum(v for _, v in sub)
                if total >= owed and (best is None or total < best[0]):
                    best = (total, sub)
        if best is not None:
            j = max(best[1], key=lambda x: x[1])[0]
            return self.pay_coin[j]
        if coins:
            return self.pay_coin[max(coins, key=lambda x: x[1])[0]]
        # gem cards: the one losing the fewest points per unit paid
        mine = [c for c in range(len(d["held_by"])) if d["held_by"][c] == 0 and d["held_invested"][c]]
        if not mine:
            return min(legal)
        base = d["potential"][0]
        card = min(mine, key=lambda c: self._gain(d, c, base - d["gems"][c]) / max(d["card_value"][c], 1e-9))
        return self.pay_card[card]

    def _take(self, d: dict, legal: set[int]) -> int:
        options = [c for c in d["face_up"] if self.take[c] in legal]
        return self.take[max(options, key=lambda c: (self._gain(d, c), -d["card_cost"][c]))]

    def _reinvest(self, d: dict, legal: set[int]) -> int:
        credit = int(round(d["credit"][0]))
        # own LEVERAGED gem cards that did not pay into credit in this phase
        targets = [c for c in range(len(d["held_by"]))
                   if d["held_by"][c] == 0 and not d["held_invested"][c] and d["card_locked"][c, 0] < 0.5]
        if not targets:
            return self.end
        # points per cost: a LEVERAGED card already counts in the potential, so value its own gems
        # plus the majorities it secures against the INVESTED counts only
        inv = np.rint(d["invested_gems"]).astype(float)

        def worth(c):
            return points(inv[0] + d["gems"][c], d["potential"][1:]) - points(inv[0], d["potential"][1:])

        ranked = sorted(targets, key=lambda c: (-(worth(c) / max(d["card_cost"][c], 0.5)), c))
        coins = self._coins(d)
        coin_total = sum(v for _, v in coins)
        for c in ranked:
            cost = int(round(d["card_cost"][c]))
            if cost <= credit and self.reinvest[c] in legal:
                return self.reinvest[c]
            if cost <= credit + coin_total:
                return self._pay(d, legal, cost - credit)
        return self.end


__all__ = ["GemGreedyAgent", "points"]
