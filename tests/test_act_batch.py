"""``act_batch``: the MegaGem baselines and PolicyAgent choose for many rows at once exactly as ``act`` does.

The rows are recorded from seeded random play of the batched engine (every seat to act at every
decision point, bids and reveals, 3 to 5 players and several options). For a stochastic agent
"the same choices" means: the same actions as ``act`` called row by row on an agent whose RNG
is in the same state, and the RNG left in the same state afterwards.

HeuristicBidder and the tuned bidders remember the game, so they play many games at once through
``batch_games`` (:class:`BidderGames`): the decisions of seeded scalar games, each seat's own
instance calling ``act``, are replayed through one table (every game's t-th decisions in one
call); half-way the table's games are reset and reused for the other games.
"""
from __future__ import annotations

import numpy as np
import pytest
from recorder import Recorder

from gemenvs.agents.base import BaseAgent, act_batch, legal_counts
from gemenvs.arena.match import play_engine_game
from gemenvs.agents.megagem import BidderGames, HeuristicBidder, ParametricBidder, TruthfulAgent, TunedBidder, batched, bidders
from gemenvs.agents.megagem.tuned import random_weights
from gemenvs.agents.megagem.valuation import gems_needed, gems_needed_table, missions_met
from gemenvs.agents.policy import PolicyAgent
from gemenvs.agents.random_agent import RandomAgent
from gemenvs.megagem.batched import BatchedMegaGem
from gemenvs.megagem.game import MegaGem

OPTIONS = [
    dict(num_players=3),
    dict(num_players=4),
    dict(num_players=5, value_chart="random", two_pairs="distinct"),
    dict(num_players=4, reveal_after="treasure_only", public_bids=False, tie_break="queue"),
]


def recorded(options: dict, games: int = 48, steps: int = 40, seed: int = 0):
    """Observations and masks of every seat to act in seeded random play; and the engine."""
    engine = BatchedMegaGem(games, seed=seed, **options)
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    for _ in range(steps):
        to_act = engine.to_act()
        obs.append(engine.observations()[to_act])
        masks.append(engine.action_masks()[to_act])
        engine.step(engine.random_actions(rng))
    return np.concatenate(obs), np.concatenate(masks), engine


def row_by_row(agent, obs, masks) -> np.ndarray:
    return np.array([agent.act(o, m) for o, m in zip(obs, masks)], np.int64)


@pytest.fixture(scope="module", params=range(len(OPTIONS)), ids=lambda i: "-".join(f"{v}" for v in OPTIONS[i].values()))
def rows(request):
    return recorded(OPTIONS[request.param], seed=request.param)


def test_rows_hold_bids_and_reveals(rows):
    obs, masks, engine = rows
    reveal = engine.game.action_spec["reveal"]
    revealing = masks[:, reveal.start:reveal.stop].any(axis=1)
    assert len(obs) > 1500 and 100 < revealing.sum() < len(obs)


def test_truthful_agent(rows):
    obs, masks, engine = rows
    agent = TruthfulAgent(spec=engine.game.spec, action_spec=engine.game.action_spec)
    assert not agent.per_game_memory
    assert np.array_equal(agent.act_batch(obs, masks), row_by_row(agent, obs, masks))
    for few in (1, 7):  # (few rows are played row by row: the numpy pass would cost more)
        assert np.array_equal(agent.act_batch(obs[:few], masks[:few]), row_by_row(agent, obs[:few], masks[:few]))


def test_random_agent_same_choices_and_same_generator_state(rows):
    obs, masks, _ = rows
    for seed in range(3):
        a, b = RandomAgent(seed=seed), RandomAgent(seed=seed)
        if seed == 1:  # the generator part-way through a 64-bit word: the next 32 bits are buffered
            a.rng.integers(0, 2**32, dtype=np.uint32), b.rng.integers(0, 2**32, dtype=np.uint32)
        for chunk in np.array_split(np.arange(len(obs)), 3):  # successive batches continue the stream
            assert np.array_equal(a.act_batch(obs[chunk], masks[chunk]), row_by_row(b, obs[chunk], masks[chunk]))
        assert a.rng.bit_generator.state == b.rng.bit_generator.state


def test_random_agent_one_legal_action_draws_nothing():
    masks = np.zeros((12, 6), np.int8)
    masks[np.arange(12), [5, 0, 3, 3, 1, 2, 0, 0, 4, 5, 1, 2]] = 1
    masks[[2, 6, 7], [1, 5, 1]] = 1
    a, b = RandomAgent(seed=7), RandomAgent(seed=7)
    assert np.array_equal(a.act_batch(np.zeros((12, 2)), masks), row_by_row(b, np.zeros((12, 2)), masks))
    assert a.rng.bit_generator.state == b.rng.bit_generator.state


class _Words:
    """A stand-in generator from a list of 32-bit words, drawing ``integers`` as NumPy does
    (Lemire's method), to reach the rare batch where a row redraws."""

    def __init__(self, words):
        self.words, self.at = list(words), 0
        self.bit_generator = self

    @property
    def state(self):
        return self.at

    @state.setter
    def state(self, at):
        self.at = at

    def _word(self) -> int:
        self.at += 1
        return self.words[self.at - 1]

    def integers(self, low, high=None, size=None, dtype=np.int64):
        if high is None:  # integers(k): one of 0..k-1
            k = low
            if k == 1:
                return 0
            m = self._word() * k
            threshold = (2**32 - k) % k
            while m % 2**32 < threshold:
                m = self._word() * k
            return m >> 32
        assert (low, high) == (0, 2**32)
        return np.array([self._word() for _ in range(size)], dtype=dtype)


def test_random_agent_falls_back_row_by_row_where_numpy_would_redraw():
    masks = np.ones((8, 3), np.int8)
    # row 1 draws 0: 0 * 3 leaves 0 < (2**32 - 3) % 3, so it draws again (5)
    words = [2**31, 0, 5, 3 * 2**30, 1, 2**31, 2**30, 2**32 - 1, 2**31 + 7, 9]
    a, b = RandomAgent(), RandomAgent()
    a.rng, b.rng = _Words(words), _Words(words)
    chosen = a.act_batch(np.zeros((8, 1)), masks).tolist()
    assert chosen == row_by_row(b, np.zeros((8, 1)), masks).tolist() and chosen[:3] == [1, 0, 2]
    assert a.rng.at == b.rng.at == 9
    a.rng, b.rng = _Words(words[2:]), _Words(words[2:])  # no redraw: all rows at once
    assert a.act_batch(np.zeros((8, 1)), masks).tolist() == row_by_row(b, np.zeros((8, 1)), masks).tolist()
    assert a.rng.at == b.rng.at == 8


def _policy(obs_dim: int, num_actions: int, seed: int, zero_last: bool = False) -> list:
    rng = np.random.default_rng(seed)
    layers = [(rng.normal(0, 0.2, (obs_dim, 32)), rng.normal(0, 0.1, 32)), (rng.normal(0, 0.3, (32, 16)), np.zeros(16)),
              (rng.normal(0, 1.0, (16, num_actions)), rng.normal(0, 0.5, num_actions))]
    if zero_last:  # every logit equal: every row is a tie, decided by act's argmax order or by the noise
        layers[-1] = (np.zeros((16, num_actions)), np.zeros(num_actions))
    return layers


@pytest.mark.parametrize("deterministic", [True, False])
@pytest.mark.parametrize("zero_last", [False, True])
def test_policy_agent(rows, deterministic, zero_last):
    obs, masks, engine = rows
    layers = _policy(engine.obs_dim, engine.num_actions, 3, zero_last)
    a = PolicyAgent(layers, "relu", deterministic=deterministic, seed=11)
    b = PolicyAgent(layers, "relu", deterministic=deterministic, seed=11)
    assert not a.per_game_memory
    assert np.array_equal(a.act_batch(obs, masks), row_by_row(b, obs, masks))
    assert a.rng.bit_generator.state == b.rng.bit_generator.state
    assert np.allclose(a.logits_batch(obs[:50]), np.stack([a.logits(o) for o in obs[:50]]), atol=1e-5)


def test_heuristic_bidder_plays_row_by_row_and_keeps_its_game_memory():
    obs, masks, engine = recorded(dict(num_players=4), games=1, steps=60)
    a = HeuristicBidder(spec=engine.game.spec, action_spec=engine.game.action_spec)
    b = HeuristicBidder(spec=engine.game.spec, action_spec=engine.game.action_spec)
    assert a.per_game_memory and BaseAgent.per_game_memory
    assert np.array_equal(a.act_batch(obs, masks), row_by_row(b, obs, masks))
    assert a._ratios == b._ratios and a._pending == b._pending


class _ProtocolOnly:
    """An agent with only act and reset (the Agent protocol): act_batch plays it row by row."""

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[-1])

    def reset(self, seed=None):
        pass


def test_act_batch_helper_and_errors(rows):
    obs, masks, _ = rows
    assert np.array_equal(act_batch(_ProtocolOnly(), obs[:20], masks[:20]),
                          [np.flatnonzero(m)[-1] for m in masks[:20]])
    assert act_batch(RandomAgent(seed=0), obs[:0], masks[:0]).shape == (0,)
    assert legal_counts(masks[:3]).tolist() == np.count_nonzero(masks[:3], axis=1).tolist()
    empty = masks[:3].copy()
    empty[1] = 0
    for agent in (RandomAgent(seed=0), PolicyAgent(_policy(obs.shape[1], masks.shape[1], 0))):
        with pytest.raises(ValueError, match="row 1: the action mask allows no action"):
            agent.act_batch(obs[:3], empty)
        with pytest.raises(ValueError, match="observations"):
            agent.act_batch(obs[0], masks[0])


def test_mission_table_reads_missions_as_gems_needed_does():
    counts = np.random.default_rng(0).integers(0, 4, (400, 5))
    met = missions_met(counts)
    for row, flags in zip(counts, met):
        assert flags.tolist() == [gems_needed(m, list(row)) == 0 for m in range(len(flags))]


def _bidder_games_mismatches(game: MegaGem, make, games: int, seed: int) -> tuple[int, int]:
    """Decisions of ``games`` seeded scalar games (``make()`` in every seat but one TruthfulAgent) replayed
    through one BidderGames; (decisions, mismatches). The second half of the games reuse the first half's
    entries of the table after ``reset``: its memory must restart as a fresh instance's."""
    n, half = game.num_players, (games + 1) // 2
    seqs = {}
    for g in range(games):
        seats = [Recorder(make()) for _ in range(n)]
        seats[g % n] = TruthfulAgent(spec=game.spec, action_spec=game.action_spec)
        play_engine_game(game, seats, seed + g)
        seqs.update({(g, p): seats[p].rows for p in range(n) if p != g % n})
    table = make().batch_games(half * n)
    assert isinstance(table, BidderGames)
    decisions = mismatches = 0
    for later in (False, True):
        keys = [k for k in seqs if (k[0] >= half) == later]
        if later:
            table.reset([(g % half) * n + p for g, p in keys])
        for t in range(max(len(seqs[k]) for k in keys)):
            now = [k for k in keys if len(seqs[k]) > t]
            obs = np.stack([seqs[k][t][0] for k in now])
            masks = np.stack([seqs[k][t][1] for k in now])
            chosen = table.act(obs, masks, [(g % half) * n + p for g, p in now])
            decisions += len(now)
            mismatches += int((chosen != [seqs[k][t][2] for k in now]).sum())
            for i, k in enumerate(now):  # ParametricBidder's valuation of the rows it bid on (None: not recorded)
                if seqs[k][t][3] is not None:
                    mismatches += not np.allclose(table.last_valuation[i], seqs[k][t][3], rtol=1e-9, atol=1e-12)
    return decisions, mismatches


@pytest.mark.parametrize("options", [
    dict(num_players=3, value_chart="C"),
    dict(num_players=4, value_chart="A"),
    dict(num_players=5, value_chart="E", tie_break="queue"),
    dict(num_players=4, value_chart="B", public_bids=False),
    dict(num_players=4, value_chart="D", reveal_after="treasure_only", two_pairs="distinct"),
], ids=lambda o: "-".join(f"{v}" for v in o.values()))
def test_bidder_games_make_the_choices_of_act_across_games_and_resets(options):
    game = MegaGem(**options)
    weights = random_weights(np.random.default_rng(options["num_players"]), spread=1.5)
    for make, games in ((lambda: HeuristicBidder(spec=game.spec, action_spec=game.action_spec), 24),
                        (lambda: ParametricBidder(spec=game.spec, action_spec=game.action_spec, weights=weights), 12),
                        (lambda: TunedBidder(spec=game.spec, action_spec=game.action_spec), 8)):
        decisions, mismatches = _bidder_games_mismatches(game, make, games, seed=17 * options["num_players"])
        assert decisions > 30 * games and mismatches == 0


def test_bidder_games_errors():
    game = MegaGem(num_players=4)
    obs, masks, _ = recorded(dict(num_players=4), games=4, steps=2)
    table = HeuristicBidder(spec=game.spec, action_spec=game.action_spec).batch_games(8)
    with pytest.raises(ValueError, match="one decision per call"):
        table.act(obs[:2], masks[:2], [3, 3])
    with pytest.raises(ValueError, match="game indices in 0..7"):
        table.act(obs[:2], masks[:2], [0, 8])
    assert table.act(obs[:0], masks[:0], []).shape == (0,)


def test_gems_needed_table_is_gems_needed():
    counts = np.random.default_rng(1).integers(0, 7, (300, 5))
    table = gems_needed_table()[counts @ 7 ** np.arange(5)]
    for row, needs in zip(counts, table):
        assert needs.tolist() == [gems_needed(m, list(row)) for m in range(len(needs))]


def test_policy_agent_scores_a_sparse_observation_as_the_full_product():
    """One observation with few nonzero inputs (Gem Jam's: about 110 of 3,187) is multiplied by the first layer's
    rows of those inputs only; the logits are the full product's, and act agrees with act_batch's full products."""
    rng = np.random.default_rng(5)
    agent = PolicyAgent(_policy(400, 12, 4), "tanh")
    obs = np.zeros((40, 400), np.float32)
    for row in obs:
        row[rng.choice(400, 30, replace=False)] = rng.normal(size=30)
    assert np.count_nonzero(obs[0]) <= agent.SPARSE_SHARE * obs.shape[1]  # the sparse path
    full = agent.logits_batch(obs)  # rows: the full product
    assert np.allclose(np.stack([agent.logits(o) for o in obs]), full, atol=1e-5)
    masks = (rng.random((40, 12)) < 0.5).astype(np.int8)
    masks[:, 0] = 1
    assert np.array_equal(agent.act_batch(obs, masks), [agent.act(o, m) for o, m in zip(obs, masks)])


def _declared_twins() -> dict[type, type]:
    """The scalar bidders of gemenvs.agents.megagem.bidders that declare a batched twin: {scalar: twin}."""
    return {c: c.batched_twin for c in vars(bidders).values()
            if isinstance(c, type) and c.__module__ == bidders.__name__ and "batched_twin" in vars(c)}


def _scalar_family(cls: type) -> list[type]:
    """``cls`` and every bidder class built on it (its subclasses, recursively)."""
    out, todo = [], [cls]
    while todo:
        c = todo.pop(0)
        out.append(c)
        todo += c.__subclasses__()
    return out


def test_the_batched_twins_are_declared():
    twins = {scalar.__name__: twin for scalar, twin in _declared_twins().items()}
    assert twins == {"TruthfulAgent": batched.TruthfulRows, "HeuristicBidder": batched.BidderGames}
    assert all(twin.__module__ == batched.__name__ for twin in twins.values())
    assert {c.__name__ for c in _scalar_family(HeuristicBidder)} >= {"ParametricBidder", "TunedBidder", "FamilyBidder"}


@pytest.mark.parametrize("options", [dict(num_players=4, value_chart="random"),
                                     dict(num_players=3, value_chart="B", public_bids=False),
                                     dict(num_players=5, value_chart="D", tie_break="queue")],
                         ids=lambda o: "-".join(f"{v}" for v in o.values()))
def test_every_batched_twin_makes_its_scalar_bidders_choices(options):
    """Every declared twin, for its scalar bidder and each bidder built on it: seeded real games with that
    bidder in every seat but one (a RandomAgent, moving seat), each seat's decisions recorded, then replayed
    through one table of the twin (game g, seat p is table game g * n + p; every game's t-th decisions in one
    call): the twin's actions are the recorded ones, decision for decision."""
    game = MegaGem(**options)
    n, games = game.num_players, 4
    for scalar, twin in _declared_twins().items():
        for cls in _scalar_family(scalar):
            seqs = {}
            for g in range(games):
                seats = [Recorder(cls(spec=game.spec, action_spec=game.action_spec)) for _ in range(n)]
                seats[g % n] = RandomAgent(seed=g)
                play_engine_game(game, seats, 101 + g)
                seqs.update({(g, p): seats[p].rows for p in range(n) if p != g % n})
            table = twin(cls(spec=game.spec, action_spec=game.action_spec), games * n)
            decisions = 0
            for t in range(max(len(rows) for rows in seqs.values())):
                now = [k for k in seqs if len(seqs[k]) > t]
                chosen = table.act(np.stack([seqs[k][t][0] for k in now]), np.stack([seqs[k][t][1] for k in now]),
                                   [g * n + p for g, p in now])
                assert chosen.tolist() == [seqs[k][t][2] for k in now], f"{twin.__name__} differs from {cls.__name__}"
                decisions += len(now)
            assert decisions > 20 * games
