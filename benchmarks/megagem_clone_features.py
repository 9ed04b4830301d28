"""What does a clone of the tuned bidder miss? Its valuation or its opponent memory (issue 12).

The make-train learner starts from a behaviour clone of the tuned bidder that copies only 44-48% of its
bids. This probe asks which of the bidder's own quantities the network lacks:

1. Data: ``--games`` 4-player games of four tuned bidders (``value_chart: random``, seeds from
   500000), every decision with a choice: the observation, the mask, the bid, and two feature sets of
   the deciding bidder, read right after its choice: its **valuation** (``last_valuation``: the lot's
   value, the cost of a coin, the largest bid it considered; 3 numbers) and its **memory** of each
   opponent (mean, min, max and count of the bid/value ratios, mean and count of bid/limit on value
   lots and on Loans; 8 numbers per opponent).
2. Fit: a [256, 256] tanh MLP by masked cross-entropy, ``--epochs`` epochs, one game in six held out,
   for each input (the observation; + memory; + valuation; + both): held-out agreement, exact and
   within one coin.
3. Play (``--eval-games``, 0 to skip): the clones fitted on all games, from the observation and with
   both feature sets (a tuned bidder beside the clone computes them from the same observations),
   and the tuned bidder itself, each against three HeuristicBidders, seat rotated (chance 25%).

    python benchmarks/megagem_clone_features.py                  # 6,000 games, 800 per row: ~6 min on 2 cores
    python benchmarks/megagem_clone_features.py --games 1000 --eval-games 0
    python benchmarks/megagem_clone_features.py --features-from neutral --eval-games 0   # weight-free features

With ``--features-from neutral`` the features come from a ParametricBidder with the neutral weights
(HeuristicBidder's reasoning) seeing the same observations, while the tuned bidder still decides.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from gemenvs.arena.benchmark import map_games

PLAYERS = 4


def features(bidder) -> list[float]:
    """The valuation (3 numbers, scaled) then the opponent memory (8 per opponent) of a tuned bidder after its
    last decision; the valuation is cleared, so a reveal decision reads zeros."""
    value, cost, top = bidder.last_valuation or (0.0, 0.0, 0)
    bidder.last_valuation = None
    out = [value / 20, cost, top / 20]
    for p in range(1, PLAYERS):
        r, f, lo = bidder._ratios[p], bidder._fracs[p], bidder._loan_fracs[p]
        out += [np.mean(r) if r else 0.0, min(r, default=0.0), max(r, default=0.0), len(r) / 10,
                np.mean(f) if f else 0.0, len(f) / 10, np.mean(lo) if lo else 0.0, len(lo) / 10]
    return out


def _env():
    from gemenvs import megagem_v0
    return megagem_v0.env(num_players=PLAYERS, value_chart="random")


def shadow_bidder(env, source: str):
    """The bidder whose valuation and memory are the features: the tuned bidder, or a ParametricBidder with the
    neutral weights (HeuristicBidder's reasoning, no tuned weight)."""
    from gemenvs.agents import make_agent
    from gemenvs.agents.megagem.tuned import ParametricBidder

    if source == "tuned":
        return make_agent("megagem", "tuned", env)
    return ParametricBidder.for_env(env)


def collect(seeds: list[int], source: str = "tuned") -> tuple[np.ndarray, ...]:
    """Observations, masks, bids, features (of the tuned bidder deciding, or of a ``neutral`` shadow bidder seeing
    the same observations) and game seeds of every decision with a choice (step 1)."""
    from gemenvs.agents import make_agent

    env = _env()
    game = env.unwrapped.game
    agents = [make_agent("megagem", "tuned", env) for _ in range(PLAYERS)]
    shadows = agents if source == "tuned" else [shadow_bidder(env, source) for _ in range(PLAYERS)]
    rows: dict[str, list] = {"obs": [], "mask": [], "action": [], "feat": [], "game": []}
    for seed in seeds:
        state = game.new_state(seed)
        for i in range(PLAYERS):
            agents[i].reset(seed=seed * 10 + i)
            if shadows is not agents:
                shadows[i].reset(seed=seed * 10 + i)
        while not game.is_over(state):
            chosen = []
            for p in game.to_act(state):
                obs, mask = game.observe(state, p), game.legal_mask(state, p)
                a = agents[p].act(obs, mask)
                if shadows is not agents:
                    shadows[p].act(obs, mask)  # (its choice unused: it computes the features)
                f = features(shadows[p])
                if np.count_nonzero(mask) > 1:
                    for k, x in zip(rows, (obs.astype(np.float16), mask.astype(bool), a, f, seed)):
                        rows[k].append(x)
                chosen.append((p, a))
            for p, a in chosen:
                game.apply(state, p, a)
    return tuple(np.asarray(rows[k]) for k in rows)


def fit(x: np.ndarray, masks: np.ndarray, actions: np.ndarray, epochs: int, held: np.ndarray | None = None):
    """A clone's layers ``[(weight, bias)]`` fitted on the rows outside ``held``; with ``held``, also its held-out
    agreement per epoch (exact, within one coin)."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(x.shape[1], 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh(),
                        nn.Linear(256, masks.shape[1]))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    train = np.ones(len(x), bool) if held is None else ~held
    xt, mt, at = (torch.tensor(v[train]) for v in (x, masks, actions))
    scores = []
    for _ in range(epochs):
        for b in torch.randperm(len(xt)).split(512):
            loss = nn.functional.cross_entropy(net(xt[b]).masked_fill(~mt[b], -1e9), at[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
        if held is not None:
            with torch.no_grad():
                pred = net(torch.tensor(x[held])).masked_fill(~torch.tensor(masks[held]), -1e9).argmax(1).numpy()
            scores.append((np.mean(pred == actions[held]), np.mean(np.abs(pred - actions[held]) <= 1)))
    layers = [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in net
              if isinstance(m, nn.Linear)]
    return layers, scores


class FeatureClone:
    """A clone (a PolicyAgent over the observation, plus the features of a bidder shadowing the same decisions)."""

    def __init__(self, layers, env, with_features: bool, source: str = "tuned"):
        from gemenvs.agents.policy import PolicyAgent
        self.policy, self.with_features = PolicyAgent(layers, "tanh"), with_features
        self.shadow = shadow_bidder(env, source)

    def reset(self, seed: int | None = None) -> None:
        self.shadow.reset(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        self.shadow.act(observation, action_mask)  # keeps its memory and computes the valuation
        f = features(self.shadow)
        x = np.concatenate([observation, f]) if self.with_features else observation
        return self.policy.act(x, action_mask)


def play(row: str, layers, seeds: list[int], source: str = "tuned") -> float:
    """Wins (shared wins split) of ``row``'s agent against three HeuristicBidders on ``seeds``."""
    from gemenvs.agents import make_agent
    from gemenvs.arena.match import rotated_wins

    env = _env()
    focal = make_agent("megagem", "tuned", env) if row == "tuned" else FeatureClone(layers, env, row == "both", source)
    others = [make_agent("megagem", "heuristic", env) for _ in range(PLAYERS - 1)]
    return rotated_wins(env.unwrapped.game, focal, others, seeds)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=6000, help="games of tuned-bidder data (default 6000)")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--eval-games", type=int, default=800, help="games per row of step 3 (0: skip)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--features-from", choices=["tuned", "neutral"], default="tuned",
                    help="the bidder computing the features: the tuned bidder itself (default), or a ParametricBidder "
                    "with neutral weights seeing the same observations")
    ap.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="progress bars on stderr (default: only when stderr is a terminal)")
    args = ap.parse_args(argv)
    if args.games < 12 or args.epochs < 1 or args.eval_games < 0 or args.workers < 1:
        ap.error("--games must be at least 12, --epochs and --workers at least 1, --eval-games at least 0")
    import torch
    torch.set_num_threads(args.workers)
    start = time.time()
    seeds = list(range(500_000, 500_000 + args.games))
    chunks = [seeds[i::8] for i in range(8)]
    parts = map_games(args.workers, collect, chunks, [args.features_from] * 8, sizes=[len(c) for c in chunks],
                      desc="tuned-bidder games", progress=args.progress)
    obs, masks, actions, feats, games = (np.concatenate([p[i] for p in parts]) for i in range(5))
    obs = obs.astype(np.float32)
    feats = feats.astype(np.float32)
    print(f"{args.games} games of four tuned bidders, {len(actions)} decisions with a choice, "
          f"{time.time() - start:.0f} s", flush=True)
    held = games % 6 == 0
    inputs = {"the observation": obs, "+ memory": np.concatenate([obs, feats[:, 3:]], 1),
              "+ valuation": np.concatenate([obs, feats[:, :3]], 1), "+ both": np.concatenate([obs, feats], 1)}
    for name, x in inputs.items():
        _, scores = fit(x, masks, actions, args.epochs, held)
        exact, near = scores[-1]
        print(f"{name:16s} held-out agreement after {args.epochs} epochs: exact {exact:.1%}, within one coin "
              f"{near:.1%}", flush=True)
    if not args.eval_games:
        return
    clones = {"tuned": None, "observation": fit(obs, masks, actions, args.epochs)[0],
              "both": fit(inputs["+ both"], masks, actions, args.epochs)[0]}
    seeds = list(range(700_000, 700_000 + args.eval_games))
    for row, layers in clones.items():
        chunks = [seeds[i::args.workers] for i in range(args.workers)]
        wins = sum(map_games(args.workers, play, [row] * args.workers, [layers] * args.workers, chunks,
                             [args.features_from] * args.workers, sizes=[len(c) for c in chunks],
                             desc=f"{row} vs heuristic", progress=args.progress))
        w = wins / args.eval_games
        label = {"tuned": "the tuned bidder", "observation": "clone, observation", "both": "clone, + both"}[row]
        half = 1.96 * (w * (1 - w) / args.eval_games) ** 0.5
        print(f"{label:20s} against three HeuristicBidders: {w:.1%} +- {half:.1%} over {args.eval_games} games",
              flush=True)


if __name__ == "__main__":
    main()
