"""GemJamRuleAgent: a Gem Jam baseline that reads only its observation, through the named-slice spec.

Rules of thumb: place gems where they bring a set closest to complete; cast the spells that gain
the most (Dragon's Loot, Gem Jams worth a lot, Guardians, card draw) before banking gold; keep
reactions in hand and answer spells aimed at itself (Chaos Cube, then Diabolic Denial, then
Counter Spell); attach every Double Trouble; attack the opponent with the most completed sets;
pay and discard its least valuable cards. Card facts (category, gold, types) come from the
card manifest, which is public data; everything about the game in progress from the observation.
"""
from __future__ import annotations

import numpy as np

from gemenvs.agents.base import BaseAgent, legal_actions
from gemenvs.gemjam.data import load_manifest
from gemenvs.gemjam.encode import DECISIONS
from gemenvs.gemjam.winmodel import VALUE_FEATURES, VALUE_WEIGHTS, win_chances

#: how much the agent likes to cast each spell (0: never from choice)
CAST_VALUE = {
    "dragons_loot": 9, "gem_guardian": 7, "golem_grab": 6, "take_two": 5, "lucky_draw": 5, "armageddon": 5,
    "natures_rebirth": 4, "greedy_goblin": 4, "basilisk": 4, "shakedown": 4, "kings_ransom": 4, "rat": 4,
    "tsunami": 4, "eye_see": 3, "reanimate": 3, "sleep_spell": 3, "freeze": 3, "howling_fear": 3,
    "meteor_strike": 3, "fire_reborn": 2, "switch": 1, "sirens_call": 2, "double_trouble": 1, "forced_wager": 0,
}
#: spells kept in hand rather than banked
KEEP = ("counter_spell", "diabolic_denial", "chaos_cube", "double_trouble")


class GemJamRuleAgent(BaseAgent):
    """Rule-of-thumb Gem Jam baseline (see the module docstring); deterministic."""

    name = "rule"

    def __init__(self, spec=None, num_actions=None, seed=None, action_spec=None, manifest=None):
        super().__init__(spec, num_actions, seed, action_spec)
        if spec is None or action_spec is None:
            raise ValueError("GemJamRuleAgent needs the observation and action specs (use GemJamRuleAgent.for_env(env))")
        self.m = m = load_manifest(manifest)
        if tuple(action_spec["play"].labels) != m.names:
            raise ValueError("GemJamRuleAgent: the env's cards differ from the manifest it was given")
        self.n = spec["hand_sizes"].size
        self.r = {name: action_spec[name] for name in action_spec.names}
        self.K = m.num_kinds
        self.T = m.num_types

    # ------------------------------------------------------------------ reading
    def _card_value(self, k: int) -> float:
        """How much the agent wants to hold card kind ``k``."""
        m = self.m
        if m.is_spell[k]:
            return 6.0 if m.effect[k] in KEEP else 2.0 + CAST_VALUE.get(m.effect[k], 2) / 2
        if m.is_gem[k]:
            return 4.5
        return float(m.gold[k]) / 2

    def _sets(self, d: dict, rel: int) -> list[tuple[int, int, bool]]:
        """(type, gems, complete) of each set of the player ``rel`` seats to the left."""
        memo = d.setdefault("_sets", {})  # read once per decision, not once per scored action
        if rel in memo:
            return memo[rel]
        T = self.T
        rows = d["shrines"][rel]
        rows = rows[rows[:, :T].any(axis=1)]  # the slots that hold a set, in order
        types = rows[:, :T].argmax(axis=1).tolist()
        gems = np.rint(rows[:, T:T + 6].sum(axis=1) * 4).astype(int).tolist()
        complete = (rows[:, T + 6] != 0).tolist()
        out = memo[rel] = list(zip(types, gems, complete))
        return out

    def _best_opponent(self, d: dict, legal_rel: list[int]) -> int:
        """The opponent (relative seat) with the most completed sets, then the most gems."""
        def key(r):
            return (d["complete_sets"][r], sum(g for _, g, _ in self._sets(d, r)), -r)
        return max(legal_rel, key=key)

    # ------------------------------------------------------------------ deciding
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        if legal.size == 1:
            return int(legal[0])
        d = self.spec.decode(observation)
        why = DECISIONS[int(np.argmax(d["decision"]))]
        chosen = list(np.flatnonzero(d["my_choices"]))
        scores = {int(a): self._score(d, why, chosen, int(a)) for a in legal}
        return max(scores, key=lambda a: (scores[a], -a))

    def _score(self, d: dict, why: str, chosen: list[int], a: int) -> float:
        m = self.m
        name, arg = self.action_spec.decode(a)
        mine = self._sets(d, 0)
        if why == "adjust":
            return 1.0 if name == "adjust" and arg == 0 else 0.0
        if why == "react":
            if name == "pass":
                return 0.0
            top = d["stack"][0]
            aimed_at_me = top[self.K + self.n] > 0  # target player slot 0 = me
            eff = m.effect[arg]
            pref = {"chaos_cube": 3.0, "diabolic_denial": 2.0, "counter_spell": 1.0}[eff]
            return pref if aimed_at_me else -1.0
        if why == "double":
            return 1.0 if name == "play" else 0.0
        if why in ("may_draw", "timer"):
            return 1.0 if name == "yes" else 0.0
        if why == "pay":
            if name == "card":
                return 10.0 - m.gold[arg]
            if name == "set" and arg < len(mine):
                return -float(mine[arg][1]) - (5.0 if mine[arg][2] else 0.0)
        if why in ("discard", "bottom", "lucky_draw"):
            return -self._card_value(arg) if name == "card" else 0.0
        if why in ("eye_see", "reanimate", "greedy_goblin", "basilisk"):
            return self._card_value(arg) if name == "card" else 0.0
        if why == "receive_guardian":
            return 1.0 if name == "set" else 0.0
        if why == "counter_return":
            if name == "set":
                return -(mine[arg][1] if arg < len(mine) else 0) - 10 * (arg < len(mine) and mine[arg][2])
            return 0.0
        # play, place, chaos_cube: composite choices
        if name == "end_plays":
            return 0.5
        if name == "bank":
            if m.is_spell[arg] and m.effect[arg] in KEEP:
                return -1.0
            return 1.0 + m.gold[arg] / 4 if not m.is_spell[arg] else 0.8
        if name == "play":
            if m.is_gem[arg]:
                best = 0
                for t in m.types[arg]:
                    best = max([best] + [g for tt, g, c in mine if tt == t and not c])
                return 5.0 + best
            eff = m.effect[arg]
            if eff in ("any_gem_jam", "paired_gem_jam"):
                count = max([0] + [sum(g for tt, g, _ in mine if tt == t) for t in m.types[arg]])
                return 2.0 + count * (2 if eff == "any_gem_jam" else 1)
            return float(CAST_VALUE.get(eff, 1))
        if name == "gem_type":
            return sum(g for t, g, c in mine if t == arg and not c) + (0.5 if any(t == arg for t, _, _ in mine) else 0.0)
        if name == "target_player":
            if arg == 0:
                return -5.0
            return 10.0 if arg == self._best_opponent(d, list(range(1, self.n))) else float(d["complete_sets"][arg])
        if name == "king_vault":
            return 0.5
        if name == "set":
            target = self._target_rel(chosen)
            sets = self._sets(d, target)
            if arg >= len(sets):
                return 0.0
            return sets[arg][1] + (3.0 if sets[arg][2] else 0.0)
        if name == "new_set":
            return 0.0
        if name == "card":
            return 2.0 if m.is_basic[arg] else 1.0
        return 0.0

    def _target_rel(self, chosen: list[int]) -> int:
        """The player (relative) whose sets a pending composite choice refers to."""
        tp = self.r["target_player"]
        for a in reversed(chosen):
            if a in tp:
                return a - tp.start
        return 0





# ---------------------------------------------------------------------------------- the lookahead agent

# the win model that scores the positions the lookahead reaches lives beside the engine (it is also a shaping
# potential, GemJam.win_chance): gemenvs.gemjam.winmodel


#: the decisions the lookahead agent searches (the others it takes as GemJamRuleAgent does)
SEARCHED = ("play", "react", "chaos_cube", "place", "double")


class GemJamLookaheadAgent(GemJamRuleAgent):
    """GemJamRuleAgent improved by a one-turn lookahead with a static win model.

    At each of its decisions of a kind in ``decisions`` with more than one legal action, it redraws
    what its seat cannot see (``resample_hidden``, ``samples`` times), and for every legal action
    plays it on a copy of each sampled state, lets GemJamRuleAgent play every seat (its own
    included) until the current turn ends (``turns`` = 2: and the next one too), and scores the
    position reached by its chance to win under the win model (:func:`gemenvs.gemjam.winmodel.win_chances`; the exact
    result when the game ended). It takes the action with the best mean score, the rule agent's
    own choice on ties (within ``margin``). Every action is tried on the same sampled states
    (common random numbers); with ``keep`` only the ``keep`` best actions on the first sample (and
    the rule agent's choice) are tried on the others. Other decisions: the rule agent's.

    With ``policy`` (a trained :class:`~gemenvs.agents.policy.PolicyAgent` for this game) the policy
    takes the rule agent's place everywhere: its most likely legal action is the choice where nothing
    is searched and on ties, and it plays every seat in the rollouts (a search around a trained policy).

    Like :class:`~gemenvs.agents.search.ISMCTSAgent` it needs the engine state
    (``needs_state = True``; the match runner hands it over) and reads it only through
    ``resample_hidden``, so it decides the same in every state its seat cannot tell apart.
    """

    name = "lookahead"
    needs_state = True

    def __init__(self, game, samples: int = 2, decisions=SEARCHED, weights=VALUE_WEIGHTS, margin: float = 1e-3,
                 turns: int = 1, keep: int | None = None, seed: int | None = None, spec=None,
                 num_actions: int | None = None, action_spec=None, policy=None):
        if not hasattr(game, "resample_hidden") or getattr(game, "name", None) != "gemjam":
            raise TypeError(f"GemJamLookaheadAgent searches the Gem Jam engine (env.unwrapped.game); "
                            f"got {type(game).__name__}")
        super().__init__(game.spec if spec is None else spec, game.num_actions if num_actions is None else num_actions,
                         seed, game.action_spec if action_spec is None else action_spec, manifest=game.opts.manifest)
        if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1:
            raise ValueError(f"samples must be an integer >= 1; got {samples!r}")
        unknown = sorted(set(decisions) - set(DECISIONS))
        if unknown:
            raise ValueError(f"unknown decisions {unknown}; known: {', '.join(DECISIONS)}")
        if len(weights) != len(VALUE_FEATURES):
            raise ValueError(f"weights must give {len(VALUE_FEATURES)} numbers ({', '.join(VALUE_FEATURES)}); "
                             f"got {len(weights)}")
        self.game, self.samples, self.margin, self.turns = game, int(samples), float(margin), int(turns)
        self.keep = None if keep is None else int(keep)
        self._blocks = {b.name: (b.offset, b.stop, b.shape, b.scale) for b in self.spec.slices}
        self.decisions = frozenset(decisions)
        self.weights = np.asarray(weights, float)
        if policy is not None:
            if not callable(getattr(policy, "logits", None)):
                raise TypeError(f"policy must be a PolicyAgent (gemenvs.agents.policy); got {type(policy).__name__}")
            if getattr(policy, "needs_state", False):
                raise ValueError("the policy reads observation features computed from the engine state (a search "
                                 "already); the lookahead runs around policies that read their observation only")
            if (policy.observation_size, policy.num_actions) != (self.spec.size, self.num_actions):
                raise ValueError(f"the policy reads {policy.observation_size} inputs and gives {policy.num_actions} "
                                 f"actions, but this game's observations have {self.spec.size} and its actions "
                                 f"{self.num_actions}: was it trained on another game or player count?")
        self.policy = policy

    @classmethod
    def for_env(cls, env, seed: int | None = None, **kwargs) -> "GemJamLookaheadAgent":
        """The agent for an environment: it searches ``env.unwrapped.game`` (kwargs: see the class)."""
        return cls(env.unwrapped.game, seed=seed, **kwargs)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Not available: the lookahead decides from the engine state (:meth:`act_with_state`)."""
        raise TypeError("GemJamLookaheadAgent needs the engine state: play it through gemenvs.arena.match (play_game, "
                        "play_engine_game, decide), which call act_with_state for agents with needs_state = True")

    def rule_act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """GemJamRuleAgent's choice (the rollout policy of every seat): :meth:`GemJamRuleAgent.act`, with the
        observation's blocks decoded only when read (a test checks that both choose alike)."""
        legal = legal_actions(action_mask)
        if legal.size == 1:
            return int(legal[0])
        d = _Blocks(self._blocks, np.asarray(observation, np.float64))
        why = DECISIONS[int(np.argmax(d["decision"]))]
        chosen = list(np.flatnonzero(d["my_choices"]))
        scores = {int(a): self._score(d, why, chosen, int(a)) for a in legal}
        return max(scores, key=lambda a: (scores[a], -a))

    def base_act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The choice the search starts from and every seat's rollout policy: the policy's most likely legal action
        (with ``policy``), else :meth:`rule_act`."""
        if self.policy is None:
            return self.rule_act(observation, action_mask)
        legal = legal_actions(action_mask)
        if legal.size == 1:
            return int(legal[0])
        return int(legal[int(np.argmax(self.policy.logits(observation, action_mask)[legal]))])

    def act_with_state(self, state, seat: int, observation: np.ndarray | None = None,
                       action_mask: np.ndarray | None = None) -> int:
        """A legal action of ``seat``, found on states redrawn from ``state`` by ``resample_hidden``."""
        return self.best(*self.action_values(state, seat))

    @staticmethod
    def best(choice: int, value: dict[int, float] | None) -> int:
        """The action the lookahead plays given :meth:`action_values`' answer: the best mean score, the base
        choice on ties, then the lowest id; the base choice where nothing was searched."""
        if value is None:
            return choice
        return max(value, key=lambda a: (value[a], a == choice, -a))

    def action_values(self, state, seat: int) -> tuple[int, dict[int, float] | None]:
        """The base choice for ``seat`` (:meth:`base_act`: the rule agent's, or the policy's) and the lookahead's
        mean score of each legal action it tried (the base choice with its tie bonus ``margin``), or None where
        the decision is not searched (one legal action, or a kind outside ``decisions``). Reads ``state`` only
        through ``resample_hidden``."""
        game = self.game
        first = game.resample_hidden(state, seat, self.rng)
        del state  # from here on, only what the seat's view allows
        obs, mask = game.observe(first, seat), game.legal_mask(first, seat)
        legal = legal_actions(mask)  # raises when the seat is not to act
        choice = self.base_act(obs, mask)
        if legal.size == 1 or first.decision.kind not in self.decisions:
            return choice, None
        samples = [first] + [game.resample_hidden(first, seat, self.rng) for _ in range(self.samples - 1)]
        for s in samples:  # private copies: their logs (which no rule reads) need not be copied per rollout
            s.log, s.events, s.hidden = [], [], []
        bonus = {choice: self.margin}  # ties go to the base choice
        cands = [int(a) for a in legal]
        value = {a: self._value(samples[:1], seat, a) + bonus.get(a, 0.0) for a in cands}
        if len(samples) > 1:
            if self.keep is not None:  # the other samples only for the best few of the first (and the base choice)
                cands = sorted(cands, key=lambda a: -value[a])[:self.keep]
                cands += [choice] if choice not in cands else []
            value = {a: (value[a] + self._value(samples[1:], seat, a) * (len(samples) - 1)) / len(samples)
                     for a in cands}
        return choice, value

    def _value(self, samples, seat: int, a: int) -> float:
        """Mean :meth:`evaluate` of ``seat`` after action ``a`` and the :meth:`play_out` that follows, over
        ``samples``."""
        total = 0.0
        for sample in samples:
            s = sample.copy()
            turn = s.turn
            self.game.apply_legal(s, seat, a)
            self.play_out(s, seat, turn)
            total += self.evaluate(s, seat)
        return total / len(samples)

    def play_out(self, s, seat: int, turn: int) -> None:
        """Play every seat's :meth:`base_act` on ``s`` until ``turns`` turns, counted from turn ``turn`` (the one
        the searched action was taken in), have ended (or the game)."""
        game = self.game
        ends, steps = 0, 0
        while not s.over and steps < 2000 * self.turns:
            if s.turn != turn:
                turn, ends = s.turn, ends + 1
                if ends == self.turns:
                    break
            p = s.decision.seat
            game.apply_legal(s, p, self.base_act(game.observe(s, p), game.legal_mask(s, p)))
            steps += 1

    def evaluate(self, s, seat: int) -> float:
        """``seat``'s chance to win from the position ``s`` a rollout reached, by the win model (exact once over)."""
        return float(win_chances(s, self.game.cfg, self.weights)[seat])


class _Blocks(dict):
    """An observation's blocks in game units, as ``ObservationSpec.decode`` gives them, each sliced when first read."""

    def __init__(self, blocks: dict, obs: np.ndarray):
        super().__init__()
        self._b, self._o = blocks, obs

    def __missing__(self, name: str) -> np.ndarray:
        start, stop, shape, scale = self._b[name]
        value = self[name] = self._o[start:stop].reshape(shape) * scale
        return value


def parse_name(name: str) -> dict:
    """Keyword arguments of a lookahead agent's registry name: ``"lookahead"`` -> ``{}`` (two samples),
    ``"lookahead:4"`` -> ``{"samples": 4}`` (hidden states redrawn per decision); a ``ValueError`` says what is
    wrong with a bad one."""
    prefix, sep, rest = name.partition(":") if isinstance(name, str) else (name, "", "")
    if prefix != GemJamLookaheadAgent.name:
        raise ValueError(f"{name!r} is not a {GemJamLookaheadAgent.name} agent name")
    if not sep:
        return {}
    if not (rest.isdigit() and rest[0] != "0" and len(rest) <= 3):
        raise ValueError(f"bad agent name {name!r}: after 'lookahead:' comes the number of hidden states sampled "
                         f"per decision, 1 to 999 (e.g. lookahead:4); plain 'lookahead' samples two")
    return {"samples": int(rest)}


parse_member = parse_name  # the registry's name check for the entry's families


def make_lookahead(env, name: str, seed: int | None = None) -> GemJamLookaheadAgent:
    """The lookahead agent named ``name`` (``lookahead`` or ``lookahead:SAMPLES``) for ``env`` (the registry's
    builder)."""
    agent = GemJamLookaheadAgent.for_env(env, seed=seed, **parse_name(name))
    agent.name = name
    return agent


__all__ = ["GemJamLookaheadAgent", "GemJamRuleAgent", "SEARCHED", "make_lookahead", "parse_member", "parse_name"]
