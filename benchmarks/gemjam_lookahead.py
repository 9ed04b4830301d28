"""Is a one-turn lookahead stronger than GemJamRuleAgent? GemJamLookaheadAgent against two rule agents.

Each row plays ``--games`` 3-player games of its agent against two GemJamRuleAgents on the engine,
seeds ``--seed`` .. ``--seed + games - 1`` (the same deals for every row: common random numbers), its
seat rotated (game g puts it in seat g mod 3). A shared win counts 1/(number of winners). Printed: win
rate with its 95% normal interval (chance is 1/3), mean margin (own completed sets minus the best
other's) and the CPU seconds of the agent's own decisions per game (``time.thread_time``).

    python benchmarks/gemjam_lookahead.py                                # rule, lookahead: 900 games each
    python benchmarks/gemjam_lookahead.py --games 300 --rows lookahead:2
    python benchmarks/gemjam_lookahead.py --fit 2500                     # refit the win model's weights
    python benchmarks/gemjam_lookahead.py --policy runs/gemjam_selfplay/best_model.npz --rows policy,policy_lookahead

``--policy PATH`` (a trained Gem Jam policy: a MaskablePPO ``.zip`` or a PolicyAgent ``.npz``) adds two rows:
``policy`` (the policy alone, its most likely legal action) and ``policy_lookahead[:SAMPLES]`` (the lookahead
around it: the policy's choice where nothing is searched and on ties, and the policy playing every seat in
the rollouts, instead of GemJamRuleAgent).

A policy trained on the lookahead's advice as observation features (``env.features: gemjam_lookahead_advice``,
the default config's) plays through the same ``policy`` row; a line after the table then says on what share of its
decisions with more than one legal action it played what the features advised (the lookahead's choice).

``--fit N`` plays N games of three rule agents (seeds from 200000; the shipped weights: N = 2500), keeps
every player's :data:`~gemenvs.gemjam.winmodel.VALUE_FEATURES` at each turn start, fits the conditional-logit
win model by maximum likelihood and prints the weights (what ``gemenvs.gemjam.winmodel.VALUE_WEIGHTS`` holds).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from gemenvs import gemjam_v0
from gemenvs.agents.gemjam import GemJamLookaheadAgent, GemJamRuleAgent, parse_name
from gemenvs.gemjam.winmodel import VALUE_FEATURES, player_features
from gemenvs.arena.match import TimedAgent, play_engine_game
from gemenvs.agents.policy import PolicyAgent
from gemenvs.arena.tournament import progress_bar

#: extra rows: name -> keyword arguments of GemJamLookaheadAgent
ROWS = {
    "lookahead_play": {"decisions": ("play",)},
    "lookahead_2turns": {"turns": 2},
    "lookahead_keep3": {"keep": 3},
    # other weights of the win model: v1 without the hand and Vault features (fit on 1,500 games), v2 with them
    "lookahead_v1": {"weights": (0.381, 0.660, 2.699, 0.129, -0.030, 0.163, -0.092, 0.487, 0.030, 0.033, 0.273, 0.147,
                                 0, 0, 0, 0, 0, 0, 0, 0)},
    "lookahead_v2": {"weights": (0.397, 0.664, 2.684, 0.142, -0.036, 0.172, -0.096, 0.511, -0.009, 0.014, 0.282, 0.155,
                                 0.069, 0.142, 0.133, 0.023, 0.108, 0.068, 0, 0)},
}


def make(env, row: str, policy: str | None = None):
    """The focal agent of a row: ``rule``, ``lookahead[:SAMPLES]``, a name of :data:`ROWS` (``[:SAMPLES]`` too), or
    with ``policy`` (a file) ``policy`` and ``policy_lookahead[:SAMPLES]``."""
    if row == "rule":
        return GemJamRuleAgent.for_env(env)
    if row == "policy" or row.partition(":")[0] == "policy_lookahead":
        if policy is None:
            raise ValueError(f"row {row!r} needs --policy PATH (a trained Gem Jam policy)")
        agent = PolicyAgent.load(policy)
        agent.check_fits(env, f"the policy {policy}")
        if row == "policy":
            return agent
        return GemJamLookaheadAgent.for_env(env, policy=agent, **parse_name("lookahead" + row[len("policy_lookahead"):]))
    base = row.partition(":")[0]
    if base in ROWS:
        return GemJamLookaheadAgent.for_env(env, **ROWS[base], **parse_name("lookahead" + row[len(base):]))
    return GemJamLookaheadAgent.for_env(env, **parse_name(row))


class AdviceAgreement:
    """A policy that reads advising state features (``gemjam_lookahead_advice``), counting how often it plays the
    advised action (``agree`` of ``decisions`` with more than one legal action); its choices are the policy's."""

    needs_state = True

    def __init__(self, policy: PolicyAgent):
        self.policy, self.agree, self.decisions = policy, 0, 0

    def reset(self, seed: int | None = None) -> None:
        self.policy.reset(seed)

    def act_with_state(self, state, seat: int, observation, action_mask) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 1:
            return int(legal[0])
        row = self.policy.features.augment_state(observation, state, seat)
        a = self.policy.act_inputs(row, action_mask)
        self.agree += a == self.policy.features.advised(row)
        self.decisions += 1
        return a


def play(env, row: str, games: int, seed: int, policy: str | None = None,
         progress: bool | None = False) -> tuple[float, float, float, float]:
    """Win rate, its 95% half-width, mean margin and CPU seconds per game of the row's agent (``progress``: a
    bar of the games on stderr)."""
    game = env.unwrapped.game
    agent = make(env, row, policy)
    if isinstance(agent, PolicyAgent) and callable(getattr(agent.features, "advised", None)):
        agent = AdviceAgreement(agent)
    focal = TimedAgent(agent)
    others = [GemJamRuleAgent.for_env(env), GemJamRuleAgent.for_env(env)]
    wins = margin = 0.0
    for g in progress_bar(games, row, progress, leave=False, iterable=range(seed, seed + games)):
        p = g % 3
        r = game.results(play_engine_game(game, others[:p] + [focal] + others[p:], g))
        wins += (p in r.winners) / len(r.winners)
        margin += r.scores[p] - max(s for q, s in enumerate(r.scores) if q != p)
    w = wins / games
    note = None
    if isinstance(agent, AdviceAgreement):
        note = (f"{row} played the advised action at {agent.agree / max(agent.decisions, 1):.1%} of its "
                f"{agent.decisions} decisions with a choice")
    return w, 1.96 * (w * (1 - w) / games) ** 0.5, margin / games, focal.seconds / games, note


def fit(env, games: int, progress: bool | None = False) -> np.ndarray:
    """Weights of the conditional-logit win model fitted on ``games`` rule-agent games (see the module docstring;
    ``progress``: a bar of the games on stderr)."""
    from scipy.optimize import minimize

    game = env.unwrapped.game
    rule = GemJamRuleAgent.for_env(env)
    X, Y = [], []
    for g in progress_bar(games, "rule-agent games", progress, leave=False, iterable=range(200_000, 200_000 + games)):
        s = game.new_state(g)
        turn, rows = s.turn, []
        while not s.over:
            p = s.decision.seat
            game.apply_legal(s, p, rule.act(game.observe(s, p), game.legal_mask(s, p)))
            if not s.over and s.turn != turn:
                turn = s.turn
                rows.append([player_features(s, game.cfg, q) for q in range(s.n)])
        y = np.zeros(s.n)
        y[s.winners] = 1 / len(s.winners)
        X += rows
        Y += [y] * len(rows)
    X, Y = np.asarray(X, float), np.asarray(Y)

    def loss(w):
        u = X @ w
        u -= u.max(axis=1, keepdims=True)
        logp = u - np.log(np.exp(u).sum(axis=1, keepdims=True))
        grad = -np.einsum("gq,gqf->f", Y - np.exp(logp), X)
        return -(Y * logp).sum() + 0.5e-3 * w @ w, grad + 1e-3 * w

    w = minimize(loss, np.zeros(X.shape[2]), jac=True, method="L-BFGS-B").x
    u = X @ w
    hit = Y[np.arange(len(X)), u.argmax(axis=1)].sum() / len(X)
    print(f"{len(X)} positions of {games} games; the model's favourite wins {hit:.1%}")
    return w


def main(argv: list[str] | None = None) -> None:
    """Play every requested row and print a markdown table, a row each (or fit the win model with ``--fit``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=900, help="games per row (default 900)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the first game")
    ap.add_argument("--rows", default="rule,lookahead",
                    help="comma-separated: rule, lookahead, lookahead:SAMPLES, and " + ", ".join(ROWS)
                    + " (:SAMPLES too)")
    ap.add_argument("--policy", metavar="PATH", help="a trained Gem Jam policy: adds the rows policy and "
                    "policy_lookahead[:SAMPLES]")
    ap.add_argument("--fit", type=int, default=0, metavar="GAMES", help="fit the win model on GAMES rule-agent games")
    ap.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="progress bars on stderr (default: only when stderr is a terminal)")
    args = ap.parse_args(argv)
    env = gemjam_v0.env(num_players=3)
    if args.fit:
        w = fit(env, args.fit, args.progress)
        print("VALUE_WEIGHTS = (" + ", ".join(f"{x:.3f}" for x in w) + ")  # " + ", ".join(VALUE_FEATURES))
        return
    rows = args.rows.split(",")
    for row in rows:
        try:
            make(env, row, args.policy)
        except (ValueError, FileNotFoundError) as e:
            ap.error(str(e))
    if args.games <= 0:
        ap.error("--games must be positive")
    print(f"Gem Jam, 3 players: each agent against two GemJamRuleAgents, {args.games} games, seeds "
          f"{args.seed}..{args.seed + args.games - 1}, its seat rotated (chance 33.3%)")
    print("\n| agent | games | win rate | 95% CI | mean margin (sets) | CPU s per game (own decisions) | wall s |")
    print("|---|---|---|---|---|---|---|")
    notes = []
    for row in rows:
        t = time.perf_counter()
        w, half, m, sec, note = play(env, row, args.games, args.seed, args.policy, args.progress)
        print(f"| {row} | {args.games} | {w:.1%} | {max(0.0, w - half):.1%} - {min(1.0, w + half):.1%} | {m:+.2f} | "
              f"{sec:.3f} | {time.perf_counter() - t:.0f} |", flush=True)
        notes += [note] if note else []
    for note in notes:
        print(f"\n{note}.")


if __name__ == "__main__":
    main()
