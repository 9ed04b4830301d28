"""Write one picture of each game to docs/img/<game>_frame.png (the frames shown in the README).

Each game is played by seeded random legal moves until an instructive moment (MegaGem: a sealed
bid round half way through; GEM: an auction in round 3 with bids made; Gem Jam: a spell on the
response stack), drawn as the seat to decide sees it. Rerun after changing the pictures::

    python docs/make_frames.py
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from gemenvs import pictures
from gemenvs.gem.game import Gem
from gemenvs.gemjam.game import GemJam
from gemenvs.megagem.game import MegaGem

OUT = Path(__file__).resolve().parent / "img"

#: file stem -> (game, seed, the moment to picture)
MOMENTS = {
    "megagem": (MegaGem(num_players=4), 3,
                lambda s: s.round >= 9 and s.phase == "bid" and sum(b is not None for b in s.bids) == 2),
    "gem": (Gem(num_players=3), 1,
            lambda s: s.round >= 3 and s.phase == "bid" and sum(b is not None for b in s.bids) >= 2),
    "gemjam": (GemJam(num_players=3), 2, lambda s: s.round >= 6 and bool(s.stack) and s.decision is not None),
}


def moment(game, seed: int, wanted):
    """The first state of a seeded random game where ``wanted(state)`` holds (else its end)."""
    rng = np.random.default_rng(seed)
    s = game.new_state(seed)
    while not game.is_over(s) and not wanted(s):
        p = game.to_act(s)[0]
        game.apply_legal(s, p, int(rng.choice(game.legal_actions(s, p))))
    return s


def main() -> None:
    """Draw and write every game's frame."""
    OUT.mkdir(parents=True, exist_ok=True)
    for stem, (game, seed, wanted) in MOMENTS.items():
        s = moment(game, seed, wanted)
        viewer = None if game.is_over(s) else game.to_act(s)[0]
        path = OUT / f"{stem}_frame.png"
        Image.fromarray(pictures.draw(game, s, viewer)).save(path, optimize=True)
        print(f"wrote {path} ({path.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()
