"""Decisions per second of the batched MegaGem engine, beside the scalar env and OpenSpiel.

Random masked play, one process, measured side by side in one run:

* ``BatchedMegaGem`` at each batch size B (default 1, 64, 1024, 4096, 16384), two ways:
  ``obs+masks`` builds every seat's observation and mask before every step (``observations()``
  and ``action_masks()``, both (B, n_players, ...)), ``masks`` builds the masks only. The actions
  are drawn by ``random_actions`` (uniform among each seat's legal actions) and the decisions
  counted are the seats with a choice (``num_to_act()``); all of it is timed, the deals of new
  games included (finished games are dealt afresh inside ``step``). Beside them, game steps per
  second (B per ``step``: one decision point of every game) and the decisions per game step: a
  bidding step has every seat with coins deciding, a reveal step the winner alone, a round whose
  every bid is forced none, so decisions per second depend on that mix as much as on the engine.
* the scalar ``megagem_v0.env()`` (AEC, the same options), played as ``benchmarks/throughput.py``
  plays it: ``env.last()`` (observation and mask) then a uniformly random legal action.
* OpenSpiel's C++ ``first_sealed_auction`` (``pip install open-spiel``, the ``openspiel`` extra):
  at every decision ``observation_tensor()`` and ``legal_actions_mask()``, then a random legal
  action; chance nodes (the valuations) are sampled and not counted. Without ``pyspiel`` the row
  says "not installed".

* ``--selfplay B,...`` adds the single-learner environment of the training path
  (``BatchedSelfPlay``, random masked learner actions, learner steps per second) against the
  default config's baseline pool (HeuristicBidder and TunedBidder, drawn per game), two ways:
  the bidders' games in one ``batch_games`` table per member (what training runs), and one
  instance per game slot and seat (``batch_memory=False``). Both make the same choices.

Every configuration is measured in ``--rounds`` slices taken in turn (so that a change in the load
of the machine touches them all alike), after a warm-up. The table gives decisions per second and
their ratios to OpenSpiel and to the scalar env, then the memory per game: the game state
(``state_bytes``), and the observation buffer, mask buffer and the setups dealt in advance beside it.
At the end the script checks its own thresholds at B = 1024 and prints PASS or FAIL for each: at
least 2,500,000 decisions per second with observations and masks, 7,000,000 with masks only, and
9x OpenSpiel's rate.

    python benchmarks/megagem_batched.py                         # 4 players, ~3 s per configuration
    python benchmarks/megagem_batched.py --seconds 1 --batches 1024,4096 --players 5
    python benchmarks/megagem_batched.py --batches 64,256,1024,4096 --breakdown 3000   # + where a step's time goes

``--without-dealing B,...`` adds, at those batch sizes, the same two loops with the dealing of new
games left out: after the warm-up the engine's pool of openings dealt in advance is never refilled
and finished games restart from openings it already holds (the games repeat; timing only). Dealing
exactly the games of ``rules.new_state(seed)`` (NumPy's PCG64 and shuffles replayed) is the one
cost of the loop that grows with the number of games that end, so these rows show what the
rest of the loop costs.

``--breakdown STEPS`` adds, per B, the microseconds per step of the observations, the step, the
masks with the random actions (and the count of decisions), and the whole loop, timed apart in
the obs+masks loop (the timer calls add a little to the whole loop).
"""
from __future__ import annotations

import argparse
import datetime
import platform
import random
import sys
import time
from collections.abc import Callable

import numpy as np

from gemenvs.megagem.batched import BatchedMegaGem
from gemenvs.arena.tournament import progress_bar

TARGET_OBS, TARGET_MASKS, TARGET_OPENSPIEL_RATIO, TARGET_B = 2_500_000, 7_000_000, 9.0, 1024
WITHOUT_DEALING = ", dealing left out (timing only: openings reused)"


class Runner:
    """One configuration: ``run(seconds)`` plays on for about that long and adds to the totals.

    ``play(seconds)`` returns the decisions it played and, for the batched engine, its game steps
    (B per ``step``: every game's decision point, whatever the number of seats deciding in it).
    """

    def __init__(self, label: str, play: Callable[[float], tuple[int, int]]):
        self.label, self.play = label, play
        self.decisions, self.steps, self.elapsed = 0, 0, 0.0

    def run(self, seconds: float) -> None:
        start = time.perf_counter()
        decisions, steps = self.play(seconds)
        self.elapsed += time.perf_counter() - start
        self.decisions += decisions
        self.steps += steps

    @property
    def rate(self) -> float:
        return self.decisions / self.elapsed if self.elapsed else 0.0

    @property
    def step_rate(self) -> float:
        return self.steps / self.elapsed if self.elapsed else 0.0


def _warm_up(engine: BatchedMegaGem, rng: np.random.Generator) -> None:
    """A few random steps (more for small B), so that games of every age are in play when timing starts."""
    for _ in range(3 + 2048 // engine.num_games):
        engine.step(engine.random_actions(rng))


def batched_runner(batch: int, players: int, observations: bool, seed: int,
                   dealing: bool = True) -> tuple[Runner, BatchedMegaGem]:
    """Random masked play of a ``BatchedMegaGem``: masks (and observations) built before every step.

    ``dealing=False`` is a what-if for timing only: after the warm-up the engine's pool of
    openings dealt in advance is never refilled, so finished games restart from openings it
    already holds (the games repeat) and the time of dealing new games is left out of the loop.
    """
    engine = BatchedMegaGem(batch, seed=seed, num_players=players)
    rng = np.random.default_rng(seed)

    def play(seconds: float) -> tuple[int, int]:
        decisions, steps, start = 0, 0, time.perf_counter()
        while True:
            for _ in range(8):
                engine.action_masks()
                if observations:
                    engine.observations()
                decisions += engine.num_to_act()
                engine.step(engine.random_actions(rng))
            steps += 8 * batch
            if time.perf_counter() - start >= seconds:
                return decisions, steps

    _warm_up(engine, rng)
    label = f"BatchedMegaGem B={batch} {'obs+masks' if observations else 'masks'}"
    if not dealing:
        engine._pool.held_to[:] = np.iinfo(np.int64).max  # (every episode counts as held: no refill)
        label += WITHOUT_DEALING
    return Runner(label, play), engine


def breakdown(batch: int, players: int, steps: int, seed: int) -> dict[str, float]:
    """Microseconds per ``step`` of each part of the obs+masks loop at one B, timed apart (after a warm-up)."""
    engine = BatchedMegaGem(batch, seed=seed, num_players=players)
    rng = np.random.default_rng(seed)
    _warm_up(engine, rng)
    parts = dict.fromkeys(("observations", "step", "masks + random actions", "whole loop"), 0.0)
    clock = time.perf_counter
    begin = clock()
    for _ in range(steps):
        t0 = clock()
        engine.action_masks()
        t1 = clock()
        engine.observations()
        t2 = clock()
        engine.num_to_act()
        actions = engine.random_actions(rng)
        t3 = clock()
        engine.step(actions)
        t4 = clock()
        parts["observations"] += t2 - t1
        parts["step"] += t4 - t3
        parts["masks + random actions"] += (t1 - t0) + (t3 - t2)
    parts["whole loop"] = clock() - begin
    return {k: v / steps * 1e6 for k, v in parts.items()}


def scalar_env_runner(players: int, seed: int) -> Runner:
    """The scalar AEC ``megagem_v0.env()``: ``env.last()`` then a random legal action."""
    from gemenvs import megagem_v0
    env = megagem_v0.env(num_players=players)
    rng = np.random.default_rng(seed)
    games = [0]

    def play(seconds: float) -> tuple[int, int]:
        decisions, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            env.reset(seed=seed + games[0])
            games[0] += 1
            for _agent in env.agent_iter():
                obs, _reward, terminated, truncated, _info = env.last()
                if terminated or truncated:
                    env.step(None)
                else:
                    legal = np.flatnonzero(obs["action_mask"])
                    env.step(int(legal[rng.integers(len(legal))]))
                    decisions += 1
        return decisions, 0

    return Runner("megagem_v0.env() (scalar AEC)", play)


def openspiel_runner(seed: int) -> Runner | None:
    """OpenSpiel's ``first_sealed_auction`` with observation tensors and legal-action masks, or None."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("first_sealed_auction")
    pick = random.Random(seed).choice

    def play(seconds: float) -> tuple[int, int]:
        decisions, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            for _ in range(100):
                state = game.new_initial_state()
                while not state.is_terminal():
                    if state.is_chance_node():
                        state.apply_action(pick(state.chance_outcomes())[0])
                        continue
                    player = state.current_player()
                    state.observation_tensor(player)
                    state.legal_actions_mask(player)
                    state.apply_action(pick(state.legal_actions(player)))
                    decisions += 1
        return decisions, 0

    return Runner("OpenSpiel first_sealed_auction", play)


def selfplay_runner(batch: int, players: int, batch_memory: bool, seed: int) -> Runner:
    """Learner steps of ``BatchedSelfPlay`` against the baseline pool (heuristic, tuned), random masked learner."""
    from gemenvs.arena.batched_selfplay import BatchedSelfPlay

    env = BatchedSelfPlay(batch, None, seed=seed, batch_memory=batch_memory, num_players=players)
    env.update_opponents([("heuristic", "heuristic"), ("tuned", "tuned")])
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)

    def play(seconds: float) -> tuple[int, int]:
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            masks = env.action_masks()
            env.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
            steps += batch
        return steps, 0

    play(0.0)
    way = "batch_games tables" if batch_memory else "one instance per game and seat"
    return Runner(f"BatchedSelfPlay B={batch} vs heuristic+tuned, {way}", play)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per configuration (all rounds together)")
    parser.add_argument("--rounds", type=int, default=3, help="slices per configuration, taken in turn")
    parser.add_argument("--players", type=int, default=4, choices=(3, 4, 5))
    parser.add_argument("--batches", default="1,64,1024,4096,16384", help="comma-separated batch sizes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--breakdown", type=int, default=0, metavar="STEPS",
                        help="also time the parts of the obs+masks loop apart, STEPS steps at each B")
    parser.add_argument("--without-dealing", default="", metavar="B,...",
                        help="also these batch sizes with the dealing of new games left out (timing only: "
                             "the games repeat), to show what the loop costs beside dealing")
    parser.add_argument("--selfplay", default="", metavar="B,...",
                        help="also the training path's BatchedSelfPlay at these batch sizes (learner steps/s)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress bars on stderr, between timed slices (default: only when stderr is a terminal)")
    args = parser.parse_args(argv)
    batches = [int(x) for x in args.batches.split(",") if x]

    runners: list[Runner] = []
    engines: dict[int, BatchedMegaGem] = {}
    for batch in batches:
        for observations in (True, False):
            runner, engine = batched_runner(batch, args.players, observations, args.seed)
            runners.append(runner)
            engines[batch] = engine
    for batch in (int(x) for x in args.without_dealing.split(",") if x):
        for observations in (True, False):
            runners.append(batched_runner(batch, args.players, observations, args.seed, dealing=False)[0])
    scalar = scalar_env_runner(args.players, args.seed)
    spiel = openspiel_runner(args.seed)
    runners.append(scalar)
    if spiel is not None:
        runners.append(spiel)
    selfplay = [selfplay_runner(int(b), args.players, way, args.seed)
                for b in args.selfplay.split(",") if b for way in (True, False)]
    runners += selfplay
    # (the bar moves between slices only: nothing of it runs inside a timed slice)
    with progress_bar(args.rounds * len(runners), "configurations", args.progress, unit="slice", leave=False) as bar:
        for _ in range(args.rounds):
            for runner in runners:
                bar.set_postfix_str(runner.label, refresh=False)
                runner.run(args.seconds / args.rounds)
                bar.update(1)
    times = {}
    if args.breakdown:
        for batch in progress_bar(len(batches), "breakdown", args.progress, unit="B", leave=False, iterable=batches):
            times[batch] = breakdown(batch, args.players, args.breakdown, args.seed)

    print(f"# MegaGem batched engine, {args.players} players: random masked play, decisions per second")
    print(f"# {datetime.datetime.now():%Y-%m-%d %H:%M}, {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, numpy {np.__version__}; "
          f"{args.seconds:g} s per configuration in {args.rounds} rounds; command: "
          f"python {' '.join(sys.argv)}")
    print()
    print("| configuration | decisions/s | vs OpenSpiel | vs scalar env() | game steps/s | decisions per game step |")
    print("|---|---:|---:|---:|---:|---:|")
    for runner in runners:
        if runner in selfplay:
            continue
        vs_spiel = f"{runner.rate / spiel.rate:.2f}x" if spiel else "-"
        steps = (f"{runner.step_rate:,.0f} | {runner.decisions / runner.steps:.2f}" if runner.steps else "- | -")
        print(f"| {runner.label} | {runner.rate:,.0f} | {vs_spiel} | {runner.rate / scalar.rate:.1f}x | {steps} |")
    if spiel is None:
        print("| OpenSpiel first_sealed_auction | not installed (pip install open-spiel) | - | - | - | - |")
    print()
    print("| B | game state (bytes/game) | observations (bytes/game) | masks (bytes/game) | "
          "deals held in advance (bytes/game) | observations + masks for the batch |")
    print("|---:|---:|---:|---:|---:|---:|")
    for batch, engine in engines.items():
        buffers = engine.buffer_bytes
        total = (buffers["observations"] + buffers["masks"]) * batch
        print(f"| {batch} | {engine.state_bytes} | {buffers['observations']:,} | {buffers['masks']:,} | "
              f"{buffers['deal_pool']:,} | {total / 2**20:,.1f} MiB |")
    if args.breakdown:
        print()
        print("| B | observations (us/step) | step (us/step) | masks + random actions (us/step) | "
              "whole loop (us/step) | whole loop per game step (us) |")
        print("|---:|---:|---:|---:|---:|---:|")
        for batch, t in times.items():
            print(f"| {batch} | {t['observations']:,.0f} | {t['step']:,.0f} | {t['masks + random actions']:,.0f} | "
                  f"{t['whole loop']:,.0f} | {t['whole loop'] / batch:.2f} |")
    if selfplay:
        print()
        print("| training-path environment (learner steps) | steps/s | vs one instance per game |")
        print("|---|---:|---:|")
        for table, rows in zip(selfplay[::2], selfplay[1::2]):
            for runner in (table, rows):
                print(f"| {runner.label} | {runner.rate:,.0f} | {runner.rate / rows.rate:.2f}x |")
    print()
    by_label = {r.label: r for r in runners}
    obs = by_label.get(f"BatchedMegaGem B={TARGET_B} obs+masks")
    masks = by_label.get(f"BatchedMegaGem B={TARGET_B} masks")
    if obs is not None:
        checks = [(f"B={TARGET_B} obs+masks >= {TARGET_OBS:,}/s", obs.rate, obs.rate >= TARGET_OBS),
                  (f"B={TARGET_B} masks >= {TARGET_MASKS:,}/s", masks.rate, masks.rate >= TARGET_MASKS)]
        if spiel is not None:
            ratio = obs.rate / spiel.rate
            checks.append((f"B={TARGET_B} obs+masks >= {TARGET_OPENSPIEL_RATIO:g}x OpenSpiel", ratio,
                           ratio >= TARGET_OPENSPIEL_RATIO))
        for what, value, met in checks:
            print(f"threshold {what}: {value:,.2f} -> {'PASS' if met else 'FAIL'}")
    free_obs = by_label.get(f"BatchedMegaGem B={TARGET_B} obs+masks{WITHOUT_DEALING}")
    if free_obs is not None:
        free_masks = by_label[f"BatchedMegaGem B={TARGET_B} masks{WITHOUT_DEALING}"]
        spiel_ratio = f", {free_obs.rate / spiel.rate:.2f}x OpenSpiel" if spiel else ""
        print(f"with dealing left out (timing only), B={TARGET_B}: obs+masks {free_obs.rate:,.0f}/s{spiel_ratio}; "
              f"masks {free_masks.rate:,.0f}/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
