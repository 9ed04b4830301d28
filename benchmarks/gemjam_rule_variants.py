"""How much headroom does GemJamRuleAgent leave? Variants of it against two rule agents (issue 9).

Each variant plays ``--games`` 3-player games against two GemJamRuleAgents on the engine, seeds
``--seed`` .. ``--seed + games - 1`` (the same deals for every variant: common random numbers), its
seat rotated (game g puts it in seat g mod 3). A shared win counts 1/(number of winners). Printed:
win rate with its 95% normal interval (chance is 1/3) and mean margin (own completed sets minus the
best other's). The unchanged rule agent is the first row, the reference.

Variants (each changes one priority of the rule agent):

* ``react_all``: also answers opponents' spells that name no target player but hit it (Any 1 Gem
  Type Gem Jam, King's Ransom, Armageddon, ...), not only spells aimed at it;
* ``stealth``: does not place a gem that completes a set making it the sole leader before its
  fourth set (the rule agents attack the player with the most completed sets): banks or casts
  instead; ``stealth1``: the same with a lead of two;
* ``guard_first``: casts Gem Guardian before anything else.

    python benchmarks/gemjam_rule_variants.py                     # 900 games per variant, ~1 min each
    python benchmarks/gemjam_rule_variants.py --games 300 --variants rule,stealth
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from gemenvs import gemjam_v0
from gemenvs.agents.gemjam import GemJamRuleAgent
from gemenvs.arena.match import play_engine_game
from gemenvs.arena.tournament import progress_bar

#: spells that name no target player but hit every opponent (or any of them)
HITS_EVERYONE = ("any_gem_jam", "kings_ransom", "armageddon", "tsunami", "meteor_strike", "dragons_loot",
                 "rat", "golem_grab", "switch", "forced_wager", "basilisk", "greedy_goblin")


class ReactAll(GemJamRuleAgent):
    """GemJamRuleAgent that also reacts to untargeted opponent spells that can hit it."""

    def _score(self, d, why, chosen, a):
        if why != "react":
            return super()._score(d, why, chosen, a)
        name, arg = self.action_spec.decode(a)
        if name == "pass":
            return 0.0
        top = d["stack"][0]
        K, n = self.K, self.n
        kind, caster, target = int(np.argmax(top[:K])), int(np.argmax(top[K:K + n])), top[K + n:K + 2 * n]
        pref = {"chaos_cube": 3.0, "diabolic_denial": 2.0, "counter_spell": 1.0}[self.m.effect[arg]]
        if caster != 0 and (target[0] > 0 or (not target.any() and self.m.effect[kind] in HITS_EVERYONE)):
            return pref
        return -1.0


class Stealth(GemJamRuleAgent):
    """GemJamRuleAgent that holds back a gem completing a set which would make it the sole leader."""

    lead = 0  # completing is held back when it would put me more than ``lead`` sets ahead

    def _score(self, d, why, chosen, a):
        score = super()._score(d, why, chosen, a)
        name, arg = self.action_spec.decode(a)
        if why == "play" and name == "play" and self.m.is_gem[arg]:
            sets = np.rint(d["complete_sets"]).astype(int)
            completes = any(tt == t and not c and g + 1 >= self.m.set_size[t]
                            for t in self.m.types[arg] for tt, g, c in self._sets(d, 0))
            if completes and sets[0] + 1 > sets[1:].max() + self.lead and sets[0] + 1 < 4:
                return 0.9  # below banking gold, above banking a spell
        return score


class Stealth1(Stealth):
    """:class:`Stealth` with a lead of two sets allowed."""

    lead = 1


class GuardFirst(GemJamRuleAgent):
    """GemJamRuleAgent that casts Gem Guardian before any other play."""

    def _score(self, d, why, chosen, a):
        name, arg = self.action_spec.decode(a)
        if why == "play" and name == "play" and self.m.effect[arg] == "gem_guardian":
            return 20.0
        return super()._score(d, why, chosen, a)


VARIANTS = {"rule": GemJamRuleAgent, "react_all": ReactAll, "stealth": Stealth, "stealth1": Stealth1,
            "guard_first": GuardFirst}


def play(variant: type, games: int, seed: int, progress: bool | None = False, label: str = "games"
         ) -> tuple[float, float, float]:
    """Win rate, its 95% half-width and mean margin of ``variant`` against two rule agents (``progress``: a bar
    of the games on stderr named ``label``, see :func:`gemenvs.arena.tournament.progress_bar`)."""
    env = gemjam_v0.env(num_players=3)
    game = env.unwrapped.game
    focal = variant.for_env(env, seed=0)
    others = [GemJamRuleAgent.for_env(env, seed=1), GemJamRuleAgent.for_env(env, seed=2)]
    wins = margin = 0.0
    for g in progress_bar(games, label, progress, leave=False, iterable=range(seed, seed + games)):
        p = g % 3
        agents = others[:p] + [focal] + others[p:]
        r = game.results(play_engine_game(game, agents, g))
        wins += (p in r.winners) / len(r.winners)
        margin += r.scores[p] - max(s for q, s in enumerate(r.scores) if q != p)
    w = wins / games
    return w, 1.96 * (w * (1 - w) / games) ** 0.5, margin / games


def main(argv: list[str] | None = None) -> None:
    """Play every requested variant and print one row each."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=900, help="games per variant (default 900)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the first game")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated, from " + ", ".join(VARIANTS))
    ap.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="progress bars on stderr (default: only when stderr is a terminal)")
    args = ap.parse_args(argv)
    names = args.variants.split(",")
    unknown = [v for v in names if v not in VARIANTS]
    if unknown or args.games <= 0:
        ap.error(f"unknown variants {unknown} (known: {', '.join(VARIANTS)})" if unknown else "--games must be positive")
    print(f"Gem Jam, 3 players: each variant against two GemJamRuleAgents, {args.games} games, seeds "
          f"{args.seed}..{args.seed + args.games - 1}, its seat rotated (chance 33.3%)")
    for name in names:
        t = time.perf_counter()
        w, half, m = play(VARIANTS[name], args.games, args.seed, args.progress, name)
        print(f"{name:12s} win {w:6.1%} +-{half:.1%}  mean margin {m:+.2f}  {time.perf_counter() - t:.0f}s", flush=True)


if __name__ == "__main__":
    main()
