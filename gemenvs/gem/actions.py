"""The GEM action ids: one Discrete space whose named ranges are the kinds of decision.

:func:`build_action_spec` is the one place the layout is defined; the game publishes it as
``Gem.action_spec`` and rules, encoder, agents and docs all read it from there. Ranges in order
(C gem cards, K coin cards per player, B the largest possible bid):

============  ==========  ============================================================
range         ids         meaning (argument)
============  ==========  ============================================================
``bid``       B + 1       bid that many (auction phase)
``pass``      1           pass in this auction
``take``      C           take face-up gem card ``c`` (the auction winner; label: card id)
``pay_coin``  K           turn own coin card ``j`` to LEVERAGED (label: its value)
``pay_card``  C           turn own gem card ``c`` to LEVERAGED (payment or credit)
``reinvest``  C           turn own LEVERAGED gem card ``c`` to INVESTED from credit
``end``       1           end one's reinvestment phase
============  ==========  ============================================================
"""
from __future__ import annotations

from gemenvs.core.spec import ActionSpec
from gemenvs.gem.data import Manifest

KINDS = ("bid", "pass", "take", "pay_coin", "pay_card", "reinvest", "end")


def coin_labels(manifest: Manifest) -> tuple[str, ...]:
    """Labels of the coin cards: their values, with the index added where a value repeats."""
    values = manifest.coin_values
    if len(set(values)) == len(values):
        return tuple(str(v) for v in values)
    return tuple(f"{v} (coin card {j})" for j, v in enumerate(values))


def build_action_spec(manifest: Manifest) -> ActionSpec:
    """The named action ranges of a GEM game over ``manifest`` (the same for every player count)."""
    cards = [str(c) for c in range(manifest.num_cards)]
    spec = ActionSpec()
    spec.add("bid", manifest.max_capital + 1,
             "bid that many (auction: this seat's turn; more than the highest bid, at most its capital)")
    spec.add("pass", 1, "pass in this auction (not the opener, unless opener_may_pass)")
    spec.add("take", meaning="take face-up gem card *c* (the auction winner, once paid)", labels=cards)
    spec.add("pay_coin", meaning="turn own INVESTED coin card of that value to LEVERAGED (payment or credit)",
             labels=coin_labels(manifest))
    spec.add("pay_card", meaning="turn own INVESTED gem card *c* to LEVERAGED (payment or credit)", labels=cards)
    spec.add("reinvest", meaning="turn own LEVERAGED gem card *c* to INVESTED, paid from credit", labels=cards)
    spec.add("end", 1, "end one's reinvestment phase (unspent credit is lost)")
    return spec


__all__ = ["KINDS", "build_action_spec", "coin_labels"]
