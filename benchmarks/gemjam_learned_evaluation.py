"""Can the search's evaluation be learned instead of the hand-featured win model? (issue 9)

GemJamLookaheadAgent scores the positions its rollouts reach with the win model: a conditional logit
over 20 hand-chosen features per player, 20 weights fitted on rule-agent games. A trained agent that
searches with its own networks would need a learned evaluation instead. Two probes:

1. ``--games`` (default 2,000) games of three GemJamRuleAgents (seeds from 300000); at every turn
   start, every seat's observation and the win model's chances; the winner. Conditional logits over
   the three seats (player q wins with probability softmax over seats of f(observation of q)), f
   linear or an MLP with 64 tanh units, AdamW with weight decay 1e-3 and 1e-2, 30 epochs, one game in
   five held out: the best held-out log-loss (chance ln 3 = 1.099) and how often the favourite wins,
   beside the win model's on the same positions.
2. With ``--policy PATH`` (a MaskablePPO ``.zip`` of the Gem Jam config, which holds the critic):
   the lookahead around that policy (its choice, its rollouts) with the critic's value of the
   seat's observation in place of the win model, at the end of the turn or (``--at next``) at the
   seat's next decision after it, against two rule agents (``--eval-games``, seat rotated).

    python benchmarks/gemjam_learned_evaluation.py                                   # probe 1: ~3 min
    python benchmarks/gemjam_learned_evaluation.py --games 0 --policy runs/gj_pre/final_model.zip --eval-games 150
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread a process: two workers on two cores share no core

import argparse
import re
import time

import numpy as np

from gemenvs.agents.gemjam import GemJamLookaheadAgent, GemJamRuleAgent
from gemenvs.arena.benchmark import map_games
from gemenvs.gemjam.game import GemJam
from gemenvs.gemjam.winmodel import win_chances


def collect(seeds: list[int]) -> tuple[np.ndarray, ...]:
    """Turn-start positions of rule-agent games: observations (positions, 3, obs), win-model chances, winners, games."""
    game = GemJam(num_players=3)
    rule = GemJamRuleAgent(game.spec, game.num_actions, None, game.action_spec, manifest=game.opts.manifest)
    X, W, Y, G = [], [], [], []
    for seed in seeds:
        s = game.new_state(seed)
        turn, rows, chances = s.turn, [], []
        while not s.over:
            p = s.decision.seat
            game.apply_legal(s, p, rule.act(game.observe(s, p), game.legal_mask(s, p)))
            if not s.over and s.turn != turn:
                turn = s.turn
                rows.append(np.stack([game.observe(s, q) for q in range(3)]).astype(np.float16))
                chances.append(win_chances(s, game.cfg))
        y = np.zeros(3)
        y[s.winners] = 1 / len(s.winners)
        X += rows
        W += chances
        Y += [y] * len(rows)
        G += [seed] * len(rows)
    return np.asarray(X, np.float16).reshape(-1, 3, game.spec.size), np.asarray(W), np.asarray(Y), np.asarray(G)


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    return float(-(y * np.log(np.clip(p, 1e-9, 1))).sum(1).mean())


def favourite_wins(p: np.ndarray, y: np.ndarray) -> float:
    return float(y[np.arange(len(y)), p.argmax(1)].mean())


def fit_evaluators(X, W, Y, G, epochs: int = 30) -> None:
    """Probe 1: print the win model's and each learned evaluator's best held-out log-loss."""
    import torch
    from torch import nn

    X = X.astype(np.float32)
    X = X[..., np.flatnonzero(X.reshape(-1, X.shape[-1]).std(0) > 0)]  # inputs that vary
    test = G % 5 == 0
    print(f"{len(X)} positions, {int(test.sum())} held out; inputs that vary: {X.shape[-1]}; chance log-loss "
          f"{np.log(3):.3f}")
    print(f"  win model (20 features)   held-out log-loss {log_loss(W[test], Y[test]):.3f}, favourite wins "
          f"{favourite_wins(W[test], Y[test]):.1%}", flush=True)
    xt, yt, xv = torch.tensor(X[~test]), torch.tensor(Y[~test], dtype=torch.float32), torch.tensor(X[test])
    for arch in ("linear", "mlp64"):
        for decay in (1e-3, 1e-2):
            torch.manual_seed(0)
            d = X.shape[-1]
            net = nn.Linear(d, 1) if arch == "linear" else nn.Sequential(nn.Linear(d, 64), nn.Tanh(), nn.Linear(64, 1))
            opt = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=decay)
            best = (np.inf, 0, 0.0)
            for epoch in range(epochs):
                for b in torch.randperm(len(xt)).split(512):
                    loss = -(yt[b] * torch.log_softmax(net(xt[b]).squeeze(-1), 1)).sum(1).mean()
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                with torch.no_grad():
                    p = torch.softmax(net(xv).squeeze(-1), 1).numpy()
                if log_loss(p, Y[test]) < best[0]:
                    best = (log_loss(p, Y[test]), epoch + 1, favourite_wins(p, Y[test]))
            print(f"  {arch:6s} weight decay {decay:g}  held-out log-loss {best[0]:.3f} (best epoch {best[1]} of "
                  f"{epochs}), favourite wins {best[2]:.1%}", flush=True)


class CriticLookahead(GemJamLookaheadAgent):
    """The lookahead around a policy, scoring the positions it reaches by the policy's critic (probe 2)."""

    def __init__(self, game, path: str, at: str, **kwargs):
        from gemenvs.agents.policy import PolicyAgent, read_sb3_zip
        _, params = read_sb3_zip(path, ("policy",))
        state = params["policy"]
        hidden = sorted({int(m.group(1)) for k in state
                         if (m := re.fullmatch(r"mlp_extractor\.value_net\.(\d+)\.weight", k))})
        names = [f"mlp_extractor.value_net.{i}" for i in hidden] + ["value_net"]
        critic = [(state[f"{n}.weight"].numpy().T.copy(), state[f"{n}.bias"].numpy().copy()) for n in names]
        self.critic = PolicyAgent(critic, "tanh")  # (a one-output network: its "logits" are the value)
        self.at = at
        super().__init__(game, policy=PolicyAgent.load(path), **kwargs)

    def play_out(self, s, seat: int, turn: int) -> None:
        super().play_out(s, seat, turn)  # to the end of the turn
        for _ in range(4000):  # --at next: on to the seat's next decision
            if self.at == "end" or s.over or s.decision.seat == seat:
                break
            p = s.decision.seat
            self.game.apply_legal(s, p, self.base_act(self.game.observe(s, p), self.game.legal_mask(s, p)))

    def evaluate(self, s, seat: int) -> float:
        if s.over:
            r = self.game.results(s).scores
            return (r[seat] - max(x for q, x in enumerate(r) if q != seat)) / self.game.score_scale
        return float(self.critic.logits(self.game.observe(s, seat))[0])


def play_critic(path: str, at: str, seeds: list[int]) -> float:
    """Wins of the critic lookahead against two rule agents on ``seeds`` (seat ``g % 3``)."""
    from gemenvs.arena.match import rotated_wins
    game = GemJam(num_players=3)
    others = [GemJamRuleAgent(game.spec, game.num_actions, None, game.action_spec, manifest=game.opts.manifest)
              for _ in range(2)]
    return rotated_wins(game, CriticLookahead(game, path, at, seed=1), others, seeds)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=2000, help="rule-agent games of probe 1 (0: skip it)")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--policy", metavar="PATH", help="a MaskablePPO .zip of the Gem Jam config: runs probe 2")
    ap.add_argument("--at", choices=["end", "next"], default="end",
                    help="probe 2: score at the end of the turn, or at the seat's next decision after it")
    ap.add_argument("--eval-games", type=int, default=150)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="progress bars on stderr (default: only when stderr is a terminal)")
    args = ap.parse_args(argv)
    if args.games < 0 or args.games == 1 or args.epochs < 1 or args.eval_games < 1 or args.workers < 1:
        ap.error("--games must be 0 or at least 2; --epochs, --eval-games and --workers at least 1")
    if args.games:
        start = time.time()
        seeds = list(range(300_000, 300_000 + args.games))
        chunks = [seeds[i::8] for i in range(8)]
        parts = [p for p in map_games(args.workers, collect, chunks, sizes=[len(c) for c in chunks],
                                      desc="probe 1: rule-agent games", progress=args.progress) if len(p[0])]
        X, W, Y, G = (np.concatenate([p[i] for p in parts]) for i in range(4))
        print(f"probe 1: {args.games} games of three rule agents, {time.time() - start:.0f} s")
        fit_evaluators(X, W, Y, G, args.epochs)
    if args.policy:
        CriticLookahead(GemJam(num_players=3), args.policy, args.at)  # a bad file fails here, clearly
        seeds = list(range(args.eval_games))
        chunks = [seeds[i::args.workers] for i in range(args.workers)]
        wins = sum(map_games(args.workers, play_critic, [args.policy] * args.workers, [args.at] * args.workers,
                             chunks, sizes=[len(c) for c in chunks], desc="probe 2: games", progress=args.progress))
        w = wins / args.eval_games
        print(f"probe 2: the lookahead around {args.policy} scored by its critic (at {args.at}) against two rule "
              f"agents: {w:.1%} +- {1.96 * (w * (1 - w) / args.eval_games) ** 0.5:.1%} over {args.eval_games} games")


if __name__ == "__main__":
    main()
