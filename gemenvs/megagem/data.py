"""MegaGem components as data: colours, value charts, auction cards, mission cards, setup table."""
from __future__ import annotations

from itertools import combinations

COLOURS = ("Blue", "Green", "Pink", "Purple", "Yellow")
NUM_COLOURS = len(COLOURS)
GEMS_PER_COLOUR = 6
NUM_GEMS = NUM_COLOURS * GEMS_PER_COLOUR  # 30

#: coin value of one Collection gem, indexed by that colour's Display count (5 or more: last entry)
VALUE_CHARTS = {
    "A": (0, 4, 8, 12, 16, 20),
    "B": (20, 16, 12, 8, 4, 0),
    "C": (0, 2, 5, 9, 14, 20),
    "D": (20, 18, 15, 11, 6, 0),
    "E": (0, 4, 10, 18, 6, 0),
}
CHART_NAMES = tuple(VALUE_CHARTS)

#: players -> (starting coins, gem cards dealt to each hand)
SETUP = {3: (35, 5), 4: (25, 4), 5: (20, 3)}

# Auction card kinds: (label, type, amount, copies). type: "treasure" (amount = gems),
# "loan" (amount = coins lent), "invest" (amount = coins paid at the end).
AUCTION_KINDS = (
    ("Treasure 1 gem", "treasure", 1, 12),
    ("Treasure 2 gems", "treasure", 2, 5),
    ("Loan 10", "loan", 10, 2),
    ("Loan 20", "loan", 20, 2),
    ("Invest 5", "invest", 5, 2),
    ("Invest 10", "invest", 10, 2),
)
NUM_AUCTION_KINDS = len(AUCTION_KINDS)
AUCTION_TYPE = tuple(k[1] for k in AUCTION_KINDS)
AUCTION_AMOUNT = tuple(k[2] for k in AUCTION_KINDS)
AUCTION_COPIES = tuple(k[3] for k in AUCTION_KINDS)
NUM_AUCTION_CARDS = sum(AUCTION_COPIES)  # 25
TOTAL_LOANS = sum(a * c for (_, t, a, c) in AUCTION_KINDS if t == "loan")  # 60
TOTAL_INVEST = sum(a * c for (_, t, a, c) in AUCTION_KINDS if t == "invest")  # 30


def _missions() -> tuple[tuple[str, int, str, tuple[int, ...]], ...]:
    """The 30 mission cards as (label, coins, kind, colours)."""
    out = [
        ("Shield: 4 different colours", 10, "different", (4,)),
        ("Shield: 2 pairs", 15, "two_pairs", ()),
        ("Pendant: a pair of any colour", 5, "same_any", (2,)),
    ]
    out += [(f"Pendant: 2 {COLOURS[c]}", 5, "same", (c,)) for c in range(NUM_COLOURS)]
    out += [(f"Pendant: {COLOURS[a]} + {COLOURS[b]}", 5, "each", (a, b))
            for a, b in combinations(range(NUM_COLOURS), 2)]
    out += [
        ("Crown: 3 of any one colour", 10, "same_any", (3,)),
        ("Crown: 3 different colours", 10, "different", (3,)),
    ]
    out += [(f"Crown: {COLOURS[a]} + {COLOURS[b]} + {COLOURS[c]}", 10, "each", (a, b, c))
            for a, b, c in combinations(range(NUM_COLOURS), 3)]
    return tuple(out)


MISSIONS = _missions()
NUM_MISSIONS = len(MISSIONS)  # 30
MISSIONS_IN_PLAY = 4
MISSION_VALUE = tuple(m[1] for m in MISSIONS)


def mission_met(mission: int, counts, two_pairs: str) -> bool:
    """Whether Collection colour ``counts`` meet mission card ``mission`` (``two_pairs``: "any"/"distinct")."""
    _, _, kind, arg = MISSIONS[mission]
    if kind == "each":
        return all(counts[c] >= 1 for c in arg)
    if kind == "same":
        return counts[arg[0]] >= 2
    if kind == "same_any":
        return max(counts) >= arg[0]
    if kind == "different":
        return sum(1 for x in counts if x > 0) >= arg[0]
    if kind == "two_pairs":
        if two_pairs == "distinct":
            return sum(1 for x in counts if x >= 2) >= 2
        return sum(x // 2 for x in counts) >= 2
    raise AssertionError(f"unknown mission kind {kind}")
