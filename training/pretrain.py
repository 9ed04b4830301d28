"""Behaviour-cloning warm start: the policy first imitates a teacher agent, then self-play takes over.

Long games with a reward only at the end give PPO little to learn from while its policy is
random. Starting from a copy of a competent agent is the usual remedy (AlphaStar's supervised
stage; "kickstarting", Schmitt et al. 2018): the learner begins where the teacher is and PPO
only has to find what the teacher does wrong. Two steps, both before ``model.learn``:

1. :func:`collect` plays ``games`` games with the teacher in every seat, through the engine (the
   same observations and masks as the environment), and keeps every decision of every seat:
   observation, mask, the teacher's action and the seat's discounted final reward (the
   configured ``env.reward``, discounted by ``ppo.gamma`` per decision of that seat, as the
   learner's own returns are).
2. :func:`clone` fits the MaskablePPO policy to them: the masked cross-entropy of the
   teacher's action for the actor, and the squared error of the return for the critic (so the
   first PPO updates are not driven by an untrained value function), with Adam over shuffled
   minibatches. It reports the actor's agreement with the teacher on a held-out tenth of the games.

The teacher is any opponent spec the pool takes (a baseline name of the game, or a saved policy), or an
agent that reads the engine state (``needs_state``, e.g. Gem Jam's ``lookahead``): it is handed the
state of the game in progress, as in matches (:func:`gemenvs.agents.base.decide`).

Observation features computed from the engine state (``needs_state``, e.g. ``gemjam_lookahead_advice``)
are computed in the games themselves, for every kept decision; and the teacher :data:`ADVICE` plays
what those features advise (their ``advised`` action: for ``gemjam_lookahead_advice``, the lookahead's
choice), so the clone learns to read them.
"""
from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from concurrent.futures import as_completed
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from gemenvs.agents.base import decide
from gemenvs.agents.features import features_from_dict
from gemenvs.arena.lockstep import CopiesTable, games_table
from gemenvs.core.rewards import terminal_rewards
from gemenvs.training.budget import TimeLimit, count
from gemenvs.arena.resolve import resolve_agent
from gemenvs.arena.single_agent import make_aec_env
from gemenvs.core.entry import game_pool

#: teacher games per unit of work: the progress bar moves, and the time limit is checked, once a chunk
CHUNK_GAMES = 25


@dataclass
class Demonstrations:
    """Decisions of a teacher: one row per decision of any seat, grouped by game."""

    obs: np.ndarray       # (N, obs_dim) float32
    masks: np.ndarray     # (N, n_actions) bool
    actions: np.ndarray   # (N,) int64
    returns: np.ndarray   # (N,) float32: the seat's final reward, discounted to this decision
    game: np.ndarray      # (N,) int32: index of the game the row comes from

    def __len__(self) -> int:
        return len(self.actions)

    def subset(self, rows: np.ndarray) -> "Demonstrations":
        """The rows ``rows`` of every array."""
        return Demonstrations(self.obs[rows], self.masks[rows], self.actions[rows], self.returns[rows],
                              self.game[rows])


#: the teacher that plays what the run's observation features advise (features that need the state and have
#: an ``advised`` action, e.g. ``gemjam_lookahead_advice``)
ADVICE = "advice"


def _play_games(env_id: str, options: dict, teacher: str, reward: str, gamma: float, seeds: list[int],
                student=None, features: dict | None = None):
    """Games ``seeds`` on the engine, as rows of :class:`Demonstrations`.

    Without ``student`` the teacher plays every seat and every seat's decisions are kept. With a
    ``student`` (an agent) it takes seat ``seed % n`` against the teacher in the others, and only
    its decisions are kept, labelled with the action the teacher would have taken there (DAgger).
    ``features`` (the plain-JSON description of observation features that need the engine state): each
    kept row is the observation with their numbers appended, computed here from the state.
    """
    env = make_aec_env(env_id, **options)
    game = env.unwrapped.game
    n = len(env.possible_agents)
    feats = features_from_dict(features) if features is not None else None
    if feats is not None and not feats.needs_state:
        raise ValueError(f"{feats.name} is computed from observations: append it after collecting (with_features)")
    if teacher == ADVICE and feats is None:
        raise ValueError(f"the teacher {ADVICE!r} plays what observation features that need the state advise; "
                         f"none were given")
    obs, masks, actions, returns, index = [], [], [], [], []
    table = None  # the teacher's games table, when one call can decide for every game (gemenvs.arena.lockstep)
    if feats is None and teacher != ADVICE and seeds:
        table = games_table(resolve_agent(game.name, teacher, env, seed=seeds[0] * 1009), len(seeds) * n)
        table = None if isinstance(table, CopiesTable) else table
    played = _lockstep_games(game, table, seeds, student) if table is not None else None
    for j, seed in enumerate(seeds):
        if played is not None:
            state, rows = played[j]
            seats = [p for p, _, _, _ in rows]
            for _, o, m, a in rows:
                obs.append(o)
                masks.append(m.astype(bool))
                actions.append(a)
        else:
            state, seats = _serial_game(game, teacher, env, n, seed, student, feats, obs, masks, actions)
        res = game.results(state)
        final = terminal_rewards(reward, res.scores, game.score_scale, res.rank_keys)
        # a seat's k-th decision before its last is worth gamma**k of the final reward
        later = np.zeros(n, dtype=np.int64)
        ret = np.empty(len(seats), np.float32)
        for k in range(len(seats) - 1, -1, -1):
            p = seats[k]
            ret[k] = final[p] * gamma ** later[p]
            later[p] += 1
        returns.append(ret)
        index.append(np.full(len(seats), seed, np.int32))
    env.close()
    return (np.asarray(obs, np.float32).reshape(len(actions), -1), np.asarray(masks, bool).reshape(len(actions), -1),
            np.asarray(actions, np.int64), np.concatenate(returns), np.concatenate(index))


def _serial_game(game, teacher, env, n: int, seed: int, student, feats, obs: list, masks: list, actions: list):
    """One game of :func:`_play_games` played decision by decision (each seat's teacher built for it); its kept
    rows appended to ``obs``, ``masks``, ``actions``; the final state and the seat of every kept row."""
    agents = [None if teacher == ADVICE else resolve_agent(game.name, teacher, env, seed=seed * 1009 + i)
              for i in range(n)]
    learner = seed % n if student is not None else None
    if student is not None:
        student.reset(seed=seed)
    if feats is not None:
        feats.reset(seed=seed * 7919 + 17)
    state = game.new_state(seed)
    seats = []
    while not game.is_over(state):
        p = game.to_act(state)[0]
        o, m = game.observe(state, p), game.legal_mask(state, p)
        keep = learner is None or p == learner
        row = feats.augment_state(o, state, p) if feats is not None and (keep or teacher == ADVICE) else o
        if teacher == ADVICE:
            a = feats.advised(row)
        else:
            a = decide(agents[p], state, p, o, m)  # (a search teacher, needs_state, is handed the state)
        if keep:
            obs.append(row)
            masks.append(m.astype(bool))
            actions.append(a)
            seats.append(p)
        if p == learner:  # (a student reading state features chooses from the row that holds them)
            a = student.act_inputs(row, m) if feats is not None else student.act(o, m)
        game.apply(state, p, a)
    return state, seats


def _lockstep_games(game, teacher_table, seeds: list[int], student) -> list[tuple]:
    """The games of :func:`_serial_game` (no state features) played side by side: at each round the teacher's
    table decides for every game (game ``k``, seat ``p`` its game ``k * n + p``) and the student for the games
    where its seat is to act. Per game: (final state, its kept rows (seat, observation, mask, teacher's action)
    in order)."""
    n = game.num_players
    states = [game.new_state(seed) for seed in seeds]
    rows: list[list] = [[] for _ in seeds]
    learner = [seed % n if student is not None else None for seed in seeds]
    student_table = games_table(student, len(seeds)) if student is not None else None
    if isinstance(student_table, CopiesTable):
        for k, seed in enumerate(seeds):
            student_table.start(k, seed)
    active = [k for k in range(len(seeds)) if not game.is_over(states[k])]
    while active:
        seat = np.array([game.to_act(states[k])[0] for k in active], np.int64)
        o = np.stack([game.observe(states[k], p) for k, p in zip(active, seat.tolist())])
        m = np.stack([game.legal_mask(states[k], p) for k, p in zip(active, seat.tolist())])
        games = np.array(active, np.int64)
        chosen = teacher_table.act(o, m, games * n + seat)
        played = chosen.copy()
        mine = np.flatnonzero([learner[k] == p for k, p in zip(active, seat.tolist())])
        if mine.size:
            played[mine] = student_table.act(o[mine], m[mine], games[mine])
        for i, k in enumerate(active):
            if learner[k] is None or learner[k] == seat[i]:
                rows[k].append((int(seat[i]), o[i], m[i], int(chosen[i])))
            game.apply(states[k], int(seat[i]), int(played[i]))
        active = [k for k in active if not game.is_over(states[k])]
    return list(zip(states, rows))


def collect(env_id: str, options: dict, teacher: str, games: int, seed: int = 0, reward: str = "win",
            gamma: float = 1.0, workers: int = 1, student=None, features: dict | None = None,
            progress: bool = False, desc: str = "teacher games", limit: TimeLimit | None = None) -> Demonstrations:
    """``games`` games (seeds ``seed...``): the teacher against itself with every seat's decisions kept,
    or, given a ``student`` agent, the student in one seat with its decisions labelled by the teacher.
    ``features``: see :func:`_play_games` (observation features computed from the state, as plain JSON).

    The games are played in chunks of :data:`CHUNK_GAMES` (over ``workers`` processes) and their rows kept in
    seed order, so the data do not depend on ``workers``. ``progress`` shows a bar of games; ``limit`` (the
    run's time guard) is checked after every chunk, and once it is past, the games not yet played are left out."""
    seeds = list(range(seed, seed + games))
    chunks = [seeds[i:i + CHUNK_GAMES] for i in range(0, len(seeds), CHUNK_GAMES)]
    parts: list = [None] * len(chunks)
    args = (env_id, options, teacher, reward, gamma)
    with tqdm(total=games, desc=desc, unit="game", disable=not progress, dynamic_ncols=True) as bar:
        played = 0

        def allowed() -> bool:
            return limit is None or limit.allows(f"the warm start after {count(played)} of {count(games)} {desc}")

        if workers <= 1 or len(chunks) == 1:
            for k, chunk in enumerate(chunks):
                parts[k] = _play_games(*args, chunk, student, features)
                bar.update(len(chunk))
                played += len(chunk)
                if not allowed():
                    break
        else:
            with game_pool(workers) as pool:
                futures = {pool.submit(_play_games, *args, chunk, student, features): k
                           for k, chunk in enumerate(chunks)}
                for future in as_completed(futures):
                    parts[futures[future]] = future.result()
                    bar.update(len(chunks[futures[future]]))
                    played += len(chunks[futures[future]])
                    if not allowed():
                        for f in futures:
                            f.cancel()
                        break
    kept = [part for part in parts if part is not None]  # (at least the first chunk: the limit is checked after it)
    return Demonstrations(*(np.concatenate(arrays) for arrays in zip(*kept)))


def concatenate(parts: list[Demonstrations]) -> Demonstrations:
    """One :class:`Demonstrations` holding the rows of all ``parts`` (games keep their seeds)."""
    return Demonstrations(*(np.concatenate(arrays) for arrays in
                            zip(*[(d.obs, d.masks, d.actions, d.returns, d.game) for d in parts])))


@dataclass
class CloneReport:
    """What :func:`clone` did: data, time and how closely the actor follows the teacher."""

    decisions: int
    epochs: int
    seconds: float
    train_agreement: float     # argmax of the masked policy == teacher's action, training rows
    heldout_agreement: float   # the same on the held-out games
    value_mse: float           # critic's squared error on the held-out rows

    def line(self) -> str:
        """One line for the console and the results file."""
        return (f"behaviour cloning: {self.decisions} teacher decisions, {self.epochs} epochs, "
                f"{self.seconds:.0f} s; agreement with the teacher {self.train_agreement:.1%} "
                f"(held-out games {self.heldout_agreement:.1%}), value MSE {self.value_mse:.3f}")


def _agreement_and_mse(policy, data: Demonstrations, batch: int = 4096) -> tuple[float, float]:
    """Fraction of rows whose masked argmax is the teacher's action, and the critic's MSE."""
    hits, sq = 0, 0.0
    with torch.no_grad():
        for i in range(0, len(data), batch):
            o = torch.as_tensor(data.obs[i:i + batch])
            m = torch.as_tensor(data.masks[i:i + batch])
            dist = policy.get_distribution(o, action_masks=m.numpy())
            logits = dist.distribution.logits
            hits += int((logits.argmax(1).numpy() == data.actions[i:i + batch]).sum())
            v = policy.predict_values(o).squeeze(1).numpy()
            sq += float(((v - data.returns[i:i + batch]) ** 2).sum())
    return hits / max(len(data), 1), sq / max(len(data), 1)


def clone(policy, data: Demonstrations, epochs: int, batch_size: int = 256, learning_rate: float = 3e-4,
          value_coef: float = 0.5, seed: int = 0, heldout: float = 0.1, progress: bool = False,
          desc: str = "cloning", limit: TimeLimit | None = None) -> CloneReport:
    """Fit a MaskablePPO policy to ``data`` (see the module docstring); returns a :class:`CloneReport`.
    ``progress`` shows a bar of minibatches; ``limit`` (the run's time guard) is checked after each one, and
    once it is past the cloning stops there (``epochs`` in the report counts the epochs begun)."""
    start = time.time()
    rng = np.random.default_rng(seed)
    games = np.unique(data.game)
    test_games = rng.choice(games, size=max(1, int(len(games) * heldout)), replace=False) if len(games) > 1 else []
    is_test = np.isin(data.game, test_games)
    train, test = data.subset(np.flatnonzero(~is_test)), data.subset(np.flatnonzero(is_test))
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    policy.set_training_mode(True)
    batches = -(-len(train) // batch_size)
    bar = tqdm(total=epochs * batches, desc=desc, unit="batch", disable=not progress, dynamic_ncols=True)
    done = 0
    for epoch in range(epochs):
        if limit is not None and limit.hit:
            break
        done = epoch + 1
        bar.set_postfix_str(f"epoch {epoch + 1}/{epochs}", refresh=False)
        order = rng.permutation(len(train))
        for i in range(0, len(order), batch_size):
            rows = order[i:i + batch_size]
            obs = torch.as_tensor(train.obs[rows])
            values, log_prob, _ = policy.evaluate_actions(obs, torch.as_tensor(train.actions[rows]),
                                                          action_masks=train.masks[rows])
            loss = -log_prob.mean() + value_coef * torch.mean((values.squeeze(1) - torch.as_tensor(train.returns[rows])) ** 2)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            optimizer.step()
            bar.update()
            if limit is not None and not limit.allows(f"the warm start in {desc}, epoch {epoch + 1} of {epochs}"):
                break
    bar.close()
    policy.set_training_mode(False)
    train_acc, _ = _agreement_and_mse(policy, train.subset(np.arange(min(len(train), 20000))))
    test_acc, mse = _agreement_and_mse(policy, test) if len(test) else (float("nan"), float("nan"))
    return CloneReport(len(train), done, time.time() - start, train_acc, test_acc, mse)


#: offset of the teacher games' seeds from the run's seed (disjoint from the self-play and evaluation games)
PRETRAIN_SEED = 2_000_003


def with_features(data: Demonstrations, features) -> Demonstrations:
    """``data`` with each row's observation features (:mod:`gemenvs.agents.features`) appended to its observation,
    what a policy trained on them reads (``features`` None, or features that need the state, which the games
    computed already: ``data`` itself)."""
    if features is None or features.needs_state:
        return data
    return dataclasses.replace(data, obs=features.augment(data.obs, data.masks))


def pretrain(cfg, policy, student: Callable[[], object], run_dir: Path,
             evaluate: Callable[[], dict[str, float]], features=None, limit: TimeLimit | None = None) -> CloneReport:
    """Behaviour cloning of ``cfg.pretrain.teacher`` into ``policy`` (what :func:`clone` takes), then
    ``dagger_rounds`` DAgger rounds with ``student()`` (the policy as an agent, deterministic) playing;
    written to ``run_dir/pretrain.json`` and, when periodic evaluation is on, ``evaluate()`` is step 0
    of the learning curve. The same for every backend (each hands over its own policy and agent). With
    observation ``features`` the policy is fitted on the observations with their features appended (the
    student agent computes its own). Each stage shows a progress bar (``cfg.progress_bar``) and ends with a
    line of counts; ``limit`` (the run's time guard) may cut any stage, and then the stages after it are skipped."""
    p = cfg.pretrain
    bar = bool(cfg.progress_bar)
    print(f"warm start: {count(p.games)} games of {p.teacher!r} against itself, then {p.epochs} "
          f"epoch{'s' * (p.epochs != 1)} of cloning"
          + (f", then {p.dagger_rounds} DAgger round{'s' * (p.dagger_rounds != 1)} of {count(p.dagger_games)} games "
             f"and {p.dagger_epochs} epoch{'s' * (p.dagger_epochs != 1)}" if p.dagger_rounds else ""), flush=True)
    start = time.time()
    seed = cfg.seed + PRETRAIN_SEED
    in_games = features.to_dict() if features is not None and features.needs_state else None
    data = with_features(collect(cfg.env.id, cfg.env.options, p.teacher, p.games, seed=seed, reward=cfg.env.reward,
                                 gamma=cfg.ppo.gamma, workers=p.workers, features=in_games, progress=bar,
                                 limit=limit), features)
    played = len(np.unique(data.game))
    rounds = [{"games": played, "collect_seconds": time.time() - start}]
    print(f"teacher games: {count(played)} of {count(p.games)}, {count(len(data))} decisions "
          f"({time.time() - start:.0f} s)", flush=True)
    report = CloneReport(len(data), 0, 0.0, float("nan"), float("nan"), float("nan"))
    if limit is None or not limit.hit:
        report = clone(policy, data, p.epochs, p.batch_size, p.learning_rate, p.value_coef, seed=cfg.seed,
                       progress=bar, limit=limit)
        rounds[-1].update(dataclasses.asdict(report))
        print(report.line(), flush=True)
    for r in range(p.dagger_rounds):
        if limit is not None and limit.hit:
            break
        t = time.time()
        agent = student()
        seed += max(p.games, p.dagger_games)  # fresh games every round
        new = collect(cfg.env.id, cfg.env.options, p.teacher, p.dagger_games, seed=seed, reward=cfg.env.reward,
                      gamma=cfg.ppo.gamma, workers=p.workers, student=agent, features=in_games, progress=bar,
                      desc=f"DAgger round {r + 1} games", limit=limit)
        if not len(new):
            agreement = float("nan")
        elif in_games is not None:  # the rows hold the features the student read
            agreement = float(np.mean(np.where(new.masks, agent.logits_inputs(new.obs), -np.inf).argmax(1)
                                      == new.actions))
        else:
            agreement = float(np.mean(agent.act_batch(new.obs, new.masks.astype(np.int8)) == new.actions))
        data = concatenate([data, with_features(new, features)])
        rounds.append({"games": len(np.unique(new.game)), "collect_seconds": time.time() - t,
                       "student_agreement_on_own_states": agreement})
        if limit is not None and limit.hit:
            break
        report = clone(policy, data, p.dagger_epochs, p.batch_size, p.learning_rate, p.value_coef,
                       seed=cfg.seed + r + 1, progress=bar, desc=f"DAgger round {r + 1} cloning", limit=limit)
        rounds[-1].update(dataclasses.asdict(report))
        print(f"DAgger round {r + 1}: the cloned policy agreed with the teacher on {agreement:.1%} of the "
              f"{count(len(new))} states it reached; {report.line()}", flush=True)
    del data
    from gemenvs.files import write_file

    write_file(run_dir, "pretrain.json", json.dumps(  # (all or nothing, never through a link)
        {"teacher": p.teacher, "seconds": time.time() - start, "rounds": rounds,
         "cut_by_time_limit": bool(limit is not None and limit.hit)}, indent=1))
    if limit is not None and limit.hit:
        print(limit.message(), flush=True)
    if cfg.eval.every:
        rates = evaluate()
        print("step 0 (after the warm start): eval win rates " + ", ".join(f"{k} {v:.0%}" for k, v in rates.items()),
              flush=True)
    return report


__all__ = ["ADVICE", "PRETRAIN_SEED", "CloneReport", "Demonstrations", "clone", "collect", "concatenate", "pretrain",
           "with_features"]
