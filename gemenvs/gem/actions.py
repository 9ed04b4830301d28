"""The GEM action ids: one Discrete space whose blocks are the kinds of decision.

Blocks in order (C gem cards, K coin cards per player, B the largest possible bid):

===========  ==============  ==========================================================
kind         ids             meaning
===========  ==============  ==========================================================
``bid``      0 .. B          bid that many (auction phase)
``pass``     B+1             pass in this auction
``take``     B+2 .. B+1+C    take face-up gem card ``c`` (the auction winner)
``pay_coin`` next K          turn own coin card ``j`` to LEVERAGED (payment or credit)
``pay_card`` next C          turn own gem card ``c`` to LEVERAGED (payment or credit)
``reinvest`` next C          turn own LEVERAGED gem card ``c`` to INVESTED from credit
``end``      last            end one's reinvestment phase
===========  ==============  ==========================================================
"""
from __future__ import annotations

from dataclasses import dataclass, field

KINDS = ("bid", "pass", "take", "pay_coin", "pay_card", "reinvest", "end")


@dataclass(frozen=True)
class ActionLayout:
    """Offsets of each block of action ids for ``max_bid``, ``num_cards`` and ``num_coins``.

    Attributes (first id of each block): ``pass_``, ``take``, ``pay_coin``, ``pay_card``,
    ``reinvest``, ``end``; ``num_actions`` is the size of the space.
    """

    max_bid: int
    num_cards: int
    num_coins: int
    pass_: int = field(init=False)
    take: int = field(init=False)
    pay_coin: int = field(init=False)
    pay_card: int = field(init=False)
    reinvest: int = field(init=False)
    end: int = field(init=False)
    num_actions: int = field(init=False)

    def __post_init__(self):
        offsets = {"pass_": self.max_bid + 1, "take": self.max_bid + 2}
        offsets["pay_coin"] = offsets["take"] + self.num_cards
        offsets["pay_card"] = offsets["pay_coin"] + self.num_coins
        offsets["reinvest"] = offsets["pay_card"] + self.num_cards
        offsets["end"] = offsets["reinvest"] + self.num_cards
        offsets["num_actions"] = offsets["end"] + 1
        for name, value in offsets.items():
            object.__setattr__(self, name, value)

    def decode(self, action: int) -> tuple[str, int]:
        """``(kind, argument)`` of an action id: the bid, card or coin index (0 for pass/end)."""
        a = int(action)
        if not 0 <= a < self.num_actions:
            raise ValueError(f"action {a} is outside 0..{self.num_actions - 1}")
        if a <= self.max_bid:
            return "bid", a
        if a == self.pass_:
            return "pass", 0
        if a < self.pay_coin:
            return "take", a - self.take
        if a < self.pay_card:
            return "pay_coin", a - self.pay_coin
        if a < self.reinvest:
            return "pay_card", a - self.pay_card
        if a < self.end:
            return "reinvest", a - self.reinvest
        return "end", 0

    def encode(self, kind: str, arg: int = 0) -> int:
        """The action id of ``kind`` with argument ``arg`` (inverse of :meth:`decode`)."""
        base = {"bid": 0, "pass": self.pass_, "take": self.take, "pay_coin": self.pay_coin,
                "pay_card": self.pay_card, "reinvest": self.reinvest, "end": self.end}[kind]
        return base + int(arg)

    @classmethod
    def from_spec(cls, spec, num_actions: int) -> "ActionLayout":
        """Rebuild the layout from an observation spec and the action-space size (for agents)."""
        num_cards = spec["card_value"].size
        num_coins = spec["coins"].shape[1]
        layout = cls(num_actions - 3 - 3 * num_cards - num_coins, num_cards, num_coins)
        if layout.max_bid < 0:
            raise ValueError("this spec and action count do not describe a GEM game")
        return layout


__all__ = ["KINDS", "ActionLayout"]
