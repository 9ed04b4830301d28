"""Can a network learn where the lookahead improves on the rule agent? A residual probe (issue 9).

GemJamLookaheadAgent wins about 57% against two GemJamRuleAgents and the rule agent 35%. Cloning the
lookahead's choices into the policy lost its strength (docs/results.md), partly because a copy errs
on the rule agent's own choices too. This probe takes the imitation of the rule agent out of the
question: the agent is the rule agent, except where a network predicts that another action is
better by more than ``delta``.

1. Data: ``--games`` 3-player games on the engine, one seat (game g: seat g mod 3) played by the
   lookahead, two by rule agents; at every decision of every seat that the lookahead searches
   (``SEARCHED``, more than one legal action) it records the seat's observation, mask, the rule
   agent's choice and the lookahead's mean score of every legal action
   (:meth:`GemJamLookaheadAgent.action_values`: chance to win under the win model after the rule
   agents' play to the end of the turn, two redrawn hidden states; the rule agent's choice with the
   lookahead's tie bonus of 0.001). ``--workers`` processes.
2. Fit (``--mode q``): an MLP from the observation plus a one-hot of the rule agent's choice to
   each action's advantage over that choice (``10 * (score[a] - score[rule])``, squared error on
   the legal actions), a tenth of the games held out; or (``--mode ce``) the masked cross-entropy of
   the lookahead's choice. Printed per epoch: held-out agreement with the lookahead's choice, how
   often the agent leaves the rule agent's choice, and its mean regret under the lookahead's scores.
3. Play: the residual agent against two rule agents, ``--eval-games`` games from seed 0, seat
   rotated, for each ``--deltas`` value (win rate with its 95% interval; chance is 1/3).

    python benchmarks/gemjam_search_distill.py                       # 600 games of data, ~10 min on 2 cores
    python benchmarks/gemjam_search_distill.py --games 1800 --deltas 0.3,0.6 --eval-games 600
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch import nn

from gemenvs.agents.gemjam import DECISIONS, SEARCHED, GemJamLookaheadAgent, GemJamRuleAgent
from gemenvs.arena.match import play_engine_game
from gemenvs.gemjam.game import GemJam
from gemenvs.arena.benchmark import map_games
from gemenvs.arena.tournament import progress_bar

#: advantages are win-chance differences (a few hundredths): scaled for the regression
SCALE = 10.0


def collect(seeds: list[int]) -> dict[str, np.ndarray]:
    """The labelled decisions of games ``seeds`` (see the module docstring, step 1)."""
    game = GemJam(num_players=3)
    rows: dict[str, list] = {"obs": [], "mask": [], "rule": [], "score": [], "game": []}
    for seed in seeds:
        agents = [GemJamLookaheadAgent(game, seed=seed * 7 + i) for i in range(3)]
        searcher = seed % 3
        state = game.new_state(seed)
        while not game.is_over(state):
            p = game.to_act(state)[0]
            choice, value = agents[p].action_values(state, p)
            action = choice
            if value is not None:
                score = np.full(game.num_actions, np.nan, np.float32)
                score[list(value)] = list(value.values())  # (the rule's choice with its tie bonus)
                rows["obs"].append(game.observe(state, p).astype(np.float16))
                rows["mask"].append(game.legal_mask(state, p).astype(bool))
                rows["rule"].append(choice)
                rows["score"].append(score)
                rows["game"].append(seed)
                if p == searcher:
                    action = max(value, key=lambda a: (value[a], a == choice, -a))
            game.apply_legal(state, p, action)
    return {k: np.asarray(v) for k, v in rows.items()}


def inputs(obs: np.ndarray, rule: np.ndarray, num_actions: int) -> np.ndarray:
    """The network's input: the observation and a one-hot of the rule agent's choice."""
    advice = np.zeros((len(obs), num_actions), np.float32)
    advice[np.arange(len(obs)), rule] = 1.0
    return np.concatenate([obs.astype(np.float32), advice], axis=1)


def lookahead_choice(adv: np.ndarray, legal: np.ndarray, rule: np.ndarray) -> np.ndarray:
    """The lookahead's choice per row (the rule agent's on ties)."""
    bonus = 1e-6 * (np.arange(adv.shape[1]) == rule[:, None])
    return np.argmax(np.where(legal, adv + bonus, -np.inf), axis=1)


def residual_choice(pred: np.ndarray, legal: np.ndarray, rule: np.ndarray, delta: float, mode: str) -> np.ndarray:
    """The agent's choice per row: the best predicted action where it beats the rule agent's by more than
    ``delta`` (mode q), the argmax of the logits (mode ce)."""
    if mode == "ce":
        return np.argmax(np.where(legal, pred, -np.inf), axis=1)
    gain = np.where(legal, pred - pred[np.arange(len(pred)), rule][:, None], -np.inf)
    best = np.argmax(gain, axis=1)
    return np.where(gain[np.arange(len(pred)), best] > delta, best, rule)


def fit(data: dict[str, np.ndarray], epochs: int, mode: str, deltas: list[float], seed: int = 0) -> nn.Module:
    """The network of step 2, trained for ``epochs`` epochs; prints the held-out figures after each."""
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    legal, rule = data["mask"], data["rule"]
    base = data["score"][np.arange(len(rule)), rule]
    adv = np.where(legal, (data["score"] - base[:, None]) * SCALE, 0.0).astype(np.float32)
    games = np.unique(data["game"])
    held = np.isin(data["game"], rng.choice(games, max(1, len(games) // 10), replace=False))
    x = torch.from_numpy(inputs(data["obs"], rule, legal.shape[1]))
    y, m = torch.from_numpy(adv), torch.from_numpy(legal)
    target = torch.from_numpy(lookahead_choice(adv, legal, rule))
    net = nn.Sequential(nn.Linear(x.shape[1], 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                        nn.Linear(256, legal.shape[1]))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    train = np.flatnonzero(~held)
    for epoch in range(epochs):
        start = time.time()
        rng.shuffle(train)
        for i in range(0, len(train), 256):
            j = torch.from_numpy(train[i:i + 256])
            out = net(x[j])
            if mode == "q":
                loss = (((out - y[j]) ** 2) * m[j]).sum() / m[j].sum()
            else:
                loss = nn.functional.cross_entropy(out.masked_fill(~m[j], -1e9), target[j])
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            pred = net(x[torch.from_numpy(np.flatnonzero(held))]).numpy()
        a, lg, r, look = adv[held], legal[held], rule[held], target.numpy()[held]
        line = [f"epoch {epoch + 1}: {time.time() - start:.0f} s"]
        for delta in deltas if mode == "q" else [0.0]:
            ch = residual_choice(pred, lg, r, delta, mode)
            regret = (a[np.arange(len(a)), look] - a[np.arange(len(a)), ch]).mean() / SCALE
            line.append(f"delta {delta:g}: agrees with the lookahead {np.mean(ch == look):.1%}, leaves the rule "
                        f"{np.mean(ch != r):.1%}, regret {regret:.4f}")
        rule_regret = a[np.arange(len(a)), look].mean() / SCALE
        print(" | ".join(line) + f" (the lookahead leaves the rule {np.mean(look != r):.1%}; the rule's regret "
              f"{rule_regret:.4f})", flush=True)
    return net


class ResidualAgent(GemJamRuleAgent):
    """GemJamRuleAgent, except where the network of :func:`fit` prefers another action (step 3)."""

    name = "residual"

    def __init__(self, game: GemJam, net: nn.Module, delta: float, mode: str):
        super().__init__(game.spec, game.num_actions, None, game.action_spec, manifest=game.opts.manifest)
        self.net, self.delta, self.mode = net, delta, mode
        self.kinds = {DECISIONS.index(k) for k in SEARCHED}
        self.decision = game.spec.slices[0]  # the decision-kind one-hot opens the observation

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The rule agent's choice, or the network's where it is searched and predicted better."""
        rule = super().act(observation, action_mask)
        kind = int(np.argmax(observation[self.decision.offset:self.decision.stop]))
        if action_mask.sum() <= 1 or kind not in self.kinds:
            return rule
        obs = observation.astype(np.float16)[None]  # (as the data stored it)
        with torch.no_grad():
            pred = self.net(torch.from_numpy(inputs(obs, np.array([rule]), len(action_mask)))).numpy()
        return int(residual_choice(pred, action_mask.astype(bool)[None], np.array([rule]), self.delta, self.mode)[0])


def play(game: GemJam, agent, games: int, progress: bool | None = False) -> tuple[float, float]:
    """Win rate of ``agent`` against two rule agents over ``games`` games from seed 0, seat rotated, and
    its 95% half-width (``progress``: a bar of the games on stderr)."""
    others = [GemJamRuleAgent(game.spec, game.num_actions, None, game.action_spec, manifest=game.opts.manifest)
              for _ in range(2)]
    wins = 0.0
    for g in progress_bar(games, "residual agent", progress, leave=False, iterable=range(games)):
        p = g % 3
        r = game.results(play_engine_game(game, others[:p] + [agent] + others[p:], g))
        wins += (p in r.winners) / len(r.winners)
    w = wins / games
    return w, 1.96 * (w * (1 - w) / games) ** 0.5


def main(argv: list[str] | None = None) -> None:
    """Collect, fit and play (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=600, help="games of lookahead data (default 600)")
    ap.add_argument("--seed", type=int, default=100_000, help="seed of the first data game (default 100000)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--mode", choices=["q", "ce"], default="q")
    ap.add_argument("--deltas", default="0,0.3", help="comma-separated thresholds of mode q (default 0,0.3)")
    ap.add_argument("--eval-games", type=int, default=300)
    ap.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="progress bars on stderr (default: only when stderr is a terminal)")
    args = ap.parse_args(argv)
    deltas = [float(d) for d in args.deltas.split(",")]
    torch.set_num_threads(max(1, args.workers))
    start = time.time()
    seeds = list(range(args.seed, args.seed + args.games))
    chunks = [seeds[i:i + 25] for i in range(0, len(seeds), 25)]
    parts = map_games(args.workers, collect, chunks, sizes=[len(c) for c in chunks],
                      desc="lookahead games", progress=args.progress)
    data = {k: np.concatenate([p[k] for p in parts if len(p["rule"])]) for k in parts[0]}
    print(f"{args.games} games, {len(data['rule'])} searched decisions labelled, {time.time() - start:.0f} s",
          flush=True)
    net = fit(data, args.epochs, args.mode, deltas)
    game = GemJam(num_players=3)
    for delta in deltas if args.mode == "q" else [0.0]:
        w, half = play(game, ResidualAgent(game, net, delta, args.mode), args.eval_games, args.progress)
        print(f"residual agent ({args.mode}, delta {delta:g}) against two rule agents: {w:.1%} +- {half:.1%} "
              f"over {args.eval_games} games", flush=True)


if __name__ == "__main__":
    main()
