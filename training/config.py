"""Self-play training configuration: typed dataclasses, loaded from YAML, overridden by ``key=value``.

Every field is documented where it is declared. A YAML file holds any subset of the fields,
nested as the dataclasses are (``ppo: {learning_rate: 0.0003}``); the command line overrides
them with dotted keys (``ppo.learning_rate=1e-4``, ``env.options.num_players=3``). An unknown
key (with a "did you mean" suggestion), a value of the wrong type, a value out of range or an
unknown opponent is a one-line :class:`ConfigError` naming the key, raised before any run
folder is made. A config file is read only if it is a regular file (a FIFO or a device is refused
at once) of at most :data:`MAX_CONFIG_BYTES`, nested at most :data:`MAX_CONFIG_DEPTH` levels and
without YAML aliases (``*name``, which could repeat one value exponentially often). Defaults are per game: ``name``, ``pool.baselines`` and ``eval.opponents`` left
null are filled in from the game of ``env.id`` (``<game>_selfplay`` and every baseline of
the baselines of the game's entry), and ``env.options`` defaults to none (the game's own).

Why the type checks are written by hand (about 120 lines) rather than with OmegaConf structured
configs: OmegaConf 2.4 handles ``Literal``, ``X | None`` and suggests keys, but it makes the errors
worse for this config: ``overwrite: 3`` or ``overwrite: yes`` silently become
``True`` (for the one option that deletes a folder), ``ppo.net_arch=64`` reports "AnyNode is not a
ListConfig, TupleConfig, list, or tuple", a scalar given for a section reports "Merge error: int
is not a subclass of PPOConfig" without the key, messages span four lines with internal type
names, and strings are interpolated (``name: ${oc.env:HOME}`` becomes ``/root``). Wrapping those
would cost as many lines as it saves.
"""
from __future__ import annotations

import dataclasses
import difflib
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Literal

import yaml
from gemenvs.training.learner import BATCHED_GAMES, CAPABILITIES, check_capabilities

from gemenvs.files import FileProblem, read_bytes

#: the largest config file read (the shipped ones are under 4 KB)
MAX_CONFIG_BYTES = 2**20
#: the deepest nesting of a config file or an override value (the fields nest 3 levels, env.options more)
MAX_CONFIG_DEPTH = 32
#: the largest seed: every seed a run derives from it (plus an offset of a few million, plus a step count of at most
#: total_timesteps) stays within the 0..2**32-1 that numpy's legacy seeding (SB3's set_random_seed) accepts
MAX_CONFIG_SEED = 2**31 - 1
#: the largest ppo.net_arch layer, and the most hidden layers (which keep a model file within
#: gemenvs.agents.policy.MAX_MEMBER_BYTES)
MAX_LAYER_SIZE, MAX_HIDDEN_LAYERS = 1024, 4


class ConfigError(ValueError):
    """A configuration that cannot be used: the message names the key and what is wrong."""


@dataclass
class EnvConfig:
    """Which game the learner plays, and how it is rewarded."""

    id: str = "gemenvs/MegaGem-v0"
    """PettingZoo registry id of the game (any game of the suite)"""
    options: dict[str, Any] = field(default_factory=dict)
    """game options passed to the environment (e.g. num_players, value_chart); none: the game's defaults"""
    reward: Literal["win", "score", "rank", "margin"] = "win"
    """the learner's terminal reward: win +1/-1, score/100, rank +1..-1, or margin to the best other score /100"""
    learner_seat: int | None = None
    """the learner's seat, or null to draw it uniformly every episode"""
    shaping: float = 0.0
    """weight (>= 0) of potential-based reward shaping on the game's progress (Game.progress; Gem Jam:
    completed sets and the fill of the sets under way, / 4): each learner step also earns shaping * (ppo.gamma * phi(s') - phi(s)), phi 0 at
    the end, so the optimal policy is unchanged (Ng et al. 1999); 0: off (see gemenvs.arena.SingleAgentEnv)"""
    features: str | None = None
    """observation features appended to the learner's observation (gemenvs.agents.features: 'megagem_valuation',
    HeuristicBidder's value of the lot, cost of a coin and largest bid considered, or 'megagem_tuned_valuation', the
    tuned bidder's; 'megagem_advice' / 'megagem_tuned_advice': those and the memory-less bidder's bid, its win
    chance and expected gain; Gem Jam: 'gemjam_lookahead_advice', the one-turn lookahead's score of every action
    and its choice, computed from the state from the learner's seat); the policies saved read them too (named in
    their files); backends lean and sb3; null: the observation alone"""
    potential: Literal["progress", "win_chance"] = "progress"
    """the shaping's phi: 'progress' (Game.progress) or 'win_chance' (the game's win model, Game.win_chance: Gem
    Jam's fitted chance to win, which weighs the other players' positions too; games with a model only)"""


@dataclass
class PPOConfig:
    """MaskablePPO hyperparameters (sb3-contrib names)."""

    learning_rate: float = 3e-4
    """Adam step size, in (0, 1)"""
    n_steps: int = 512
    """learner decisions collected per environment before each update; n_steps * n_envs (one rollout)
    must be a whole number of batch_size minibatches"""
    batch_size: int = 256
    """minibatch size of each gradient step (at least 2, and it must divide n_steps * n_envs)"""
    n_epochs: int = 4
    """passes over each rollout (>= 1)"""
    gamma: float = 1.0
    """discount factor in [0, 1] (rewards come at the end of a game, so 1.0 is natural)"""
    gae_lambda: float = 0.95
    """GAE lambda, in [0, 1]"""
    clip_range: float = 0.2
    """PPO clipping of the probability ratio (> 0)"""
    ent_coef: float = 0.01
    """entropy bonus (>= 0)"""
    vf_coef: float = 0.5
    """value-loss weight (>= 0)"""
    max_grad_norm: float = 0.5
    """gradient clipping norm (> 0)"""
    target_kl: float | None = None
    """stop an update's epochs early past this KL divergence (> 0), or null"""
    anchor_coef: float = 0.0
    """weight of a KL penalty towards the policy as pretraining left it, KL(policy || clone), added to the loss
    (>= 0; 0: none): fine-tuning may leave the cloned teacher only where the reward pays for it (AlphaStar-style);
    needs pretrain.teacher; backend lean"""
    net_arch: list[int] = field(default_factory=lambda: [128, 128])
    """hidden layer sizes of the actor and of the critic (separate networks): at most 4 layers of 1..1024 units;
    [] for linear ones (each reads the observation directly)"""
    activation: Literal["tanh", "relu"] = "tanh"
    """activation between hidden layers"""


@dataclass
class FamilyConfig:
    """Randomised members of the tuned MegaGem bidder family in the pool (gemenvs.agents.megagem.family)."""

    members: int = 0
    """members tuned_family:0 .. members-1 added to the pool's baselines (0: none; MegaGem only)"""
    spread: float = 1.0
    """how far each member's weights move from the tuned ones, in tuning steps per weight (>= 0)"""


@dataclass
class PoolConfig:
    """The opponent pool: baselines plus frozen snapshots of the learner, sampled per episode."""

    baselines: list[str] | None = None
    """baseline agents always in the pool (names from gemenvs.agents, or paths of saved policies);
    null: every baseline of the game (its entry's baselines)"""
    snapshot_every: int = 50_000
    """add a frozen copy of the learner to the pool every this many environment steps (0: never)"""
    max_snapshots: int = 8
    """snapshots kept in the pool (>= 1); the oldest is dropped first"""
    sampling: Literal["uniform", "prioritized"] = "prioritized"
    """uniform over members, or weighted towards members the learner beats least"""
    priority_power: float = 2.0
    """prioritized weight of a member = (1 - learner's recent win rate against it) ** power (>= 0)"""
    window: int = 200
    """recent games per member that its win rate is measured over (>= 1)"""
    baseline_share: float | None = None
    """fraction of episodes played against the baselines once snapshots exist (sampling applies within
    each group), or null to weigh baselines and snapshots together"""
    seat_mix: Literal["same", "per_seat"] = "same"
    """one member for all opponent seats of an episode, or one member drawn per seat"""
    family: FamilyConfig = field(default_factory=FamilyConfig)
    """members of the tuned bidder family added to the baselines (MegaGem; see gemenvs.agents.megagem.family)"""


@dataclass
class EvalConfig:
    """Evaluation against copies of each baseline (the learner in every seat in turn)."""

    every: int = 50_000
    """evaluate every this many environment steps (0: only at the end)"""
    games: int = 100
    """games per baseline at each periodic evaluation"""
    opponents: list[str] | None = None
    """baselines (names or policy paths) to evaluate against, each filling every other seat;
    null: every baseline of the game"""
    best_by: str | list[str] = "mean"
    """the win rate that picks best_model.zip: an opponent name, 'mean' over every opponent, or a list of
    opponent names (the mean of their win rates, e.g. [heuristic, tuned])"""
    final_games: int = 500
    """games per baseline in the final table (at least 500 for the reported figures)"""
    charts: list[str] | None = None
    """value charts to evaluate on (MegaGem, e.g. [A, B, C, D, E]): each opponent's games are split evenly
    over them (per chart, rounded up to whole seat rotations) and the final table has a row per chart plus
    the pooled row; null: the chart of env.options"""
    deterministic: bool = True
    """evaluate the argmax action rather than sampling"""
    workers: int = 2
    """processes that play evaluation games in parallel"""
    save_games: bool = False
    """save every game of the final evaluation as run_dir/games/<opponent>/game_<seed>.jsonl
    (gemenvs.recording format: `gemenvs replay FILE` steps through one, `--gif` draws it)"""

    def best_score(self, rates: dict[str, float]) -> float:
        """The score of a periodic evaluation's win rates (opponent -> rate) that ``best_by`` ranks models by."""
        names = list(rates) if self.best_by == "mean" else [self.best_by] if isinstance(self.best_by, str) \
            else self.best_by
        return sum(float(rates[k]) for k in names) / len(names)

@dataclass
class PretrainConfig:
    """Behaviour cloning before self-play: the policy first imitates a teacher (gemenvs.training.pretrain)."""

    teacher: str | None = None
    """the agent to imitate (a baseline name of the game, or a policy path; 'advice': what env.features advise,
    with features that need the state, e.g. gemjam_lookahead_advice), or null for no pretraining"""
    games: int = 1000
    """games the teacher plays against itself to make the demonstrations (every seat's decisions kept)"""
    epochs: int = 8
    """passes over the demonstrations"""
    batch_size: int = 512
    """minibatch size of the cloning steps"""
    learning_rate: float = 1e-3
    """Adam step size of the cloning, in (0, 1); self-play then uses ppo.learning_rate"""
    value_coef: float = 0.5
    """weight of the critic's loss on the teacher games' discounted final rewards (>= 0)"""
    workers: int = 2
    """processes that play the teacher's games"""
    dagger_rounds: int = 0
    """DAgger rounds after the first cloning (Ross et al. 2011): the cloned policy plays one seat against
    the teacher, the teacher labels the states it reached, and cloning goes on over all the data (0: none)"""
    dagger_games: int = 300
    """games per DAgger round (the cloned policy's decisions only are kept)"""
    dagger_epochs: int = 2
    """passes over all the data after each DAgger round"""


@dataclass
class RLlibConfig:
    """The Ray RLlib backend (``backend: rllib``, gemenvs.training.rllib_backend; needs the rllib extra)."""

    num_env_runners: int = 0
    """Ray actors that play games in parallel (0: the games are played in the training process)"""
    num_envs_per_env_runner: int = 1
    """games each env runner steps in turn"""
    num_cpus_per_env_runner: float = 1.0
    """CPUs Ray reserves for each env runner (> 0; below 1 lets several share a core)"""
    address: str | None = None
    """null: start Ray on this machine; 'auto' or 'HOST:PORT': join the running cluster started with
    `ray start --head` (see docs/scaling.md)"""
    train_batch_size: int | None = None
    """environment steps collected per training iteration (>= 1); null: ppo.n_steps * n_envs"""
    self_play_share: float = 0.5
    """of the episodes not played against the baselines, the share whose opponents are the trained policy
    itself; the rest are played by its frozen past versions (pool.max_snapshots of them), in [0, 1]"""


@dataclass
class LeanConfig:
    """The lean masked PPO (``backend: lean``, gemenvs.training.lean_ppo)."""

    rollout: Literal["lockstep", "rounds"] = "lockstep"
    """'lockstep': each of the ppo.n_steps steps is one learner decision in every game (a game where the learner
    has no decision is played on while the others wait, as on the SB3 path); 'rounds': each step is one engine
    round of every game, the learner deciding in the games that wait on it and the opponents everywhere else, so no
    game waits on another: a rollout then holds fewer than n_steps * n_envs decisions, one per game and round in
    which the learner has a decision (minibatches of ppo.batch_size, the last one smaller)"""
    overlap: bool = False
    """true: each PPO update runs in a background thread while the next rollout is collected, so the two halves of
    PPO use two cores. That rollout is played by a copy of the actor-critic as it was before the update (the policy
    that collects lags the learning one by one update, as in asynchronous PPO: APPO, IMPALA); PPO's ratio and
    clipping stay relative to the log-probabilities recorded at collection, so the loss is the same one. The copy
    takes the new weights when the update joins; evaluations, snapshots and checkpoints are taken then. A run stays
    deterministic under its seed (sampling and the minibatch order draw from separate generators). false: collect,
    then update, in turn"""
    critic_thread: bool = True
    """true: in each minibatch of an update the critic's forward and backward pass run in a second thread beside
    the actor's, so an update uses two cores. Actor and critic share no parameters, so the gradients, and the run,
    are bit for bit the ones of one thread (false): this changes the speed only"""


@dataclass
class TrainConfig:
    """One self-play training run."""

    name: str | None = None
    """run name, one plain folder name: the run is written to run_root/name; null: <game>_selfplay"""
    run_root: str = "runs"
    """folder that holds the runs"""
    overwrite: bool = False
    """replace an earlier run of the same name (otherwise starting over it is an error); only a folder
    that holds the .gemenvs-run marker that gemenvs-train writes into its run folders is ever deleted"""
    seed: int = 0
    """seed of the model, the environments and the evaluation games, in 0..2**31-1 (2147483647)"""
    total_timesteps: int = 500_000
    """the budget: learner decisions of PPO (summed over environments), 1..1,000,000,000; the run ends with the first
    update at or past it, so a seeded run does the same work, and ends with the same model, on any machine"""
    max_train_minutes: float | None = None
    """an opt-in wall-clock guard (> 0), or null (the default) for none: checked between units of work (teacher
    games, cloning minibatches, rollout steps; pretraining and periodic evaluations count in it, per run
    segment), it stops training at the first check past this much wall time; the final table, results.json
    and the run's last line then say what it cut, since the result depends on the machine's speed"""
    n_envs: int = 4
    """parallel learner environments: with the per-process path, SubprocVecEnv worker processes (1 runs
    in-process); with the batched path, the games played in lockstep in the training process"""
    vec_env: Literal["auto", "batched", "subproc"] = "auto"
    """how the n_envs environments run: 'batched' plays them as games of the batched engine in the training
    process, the opponents acting in batch (MegaGem only: gemenvs.arena.batched_selfplay); 'subproc' runs one
    SingleAgentEnv per worker process (SubprocVecEnv); 'auto' is batched for MegaGem, subproc otherwise.
    Both play the same games, observations, rewards and opponent pool"""
    checkpoint_every: int = 100_000
    """write a resumable checkpoint every this many environment steps (0: only at the end)"""
    torch_threads: int = 1
    """torch threads per process"""
    progress_bar: bool = True
    """show a tqdm bar with fps and win rates"""
    backend: Literal["sb3", "rllib", "lean"] = "sb3"
    """the learner (gemenvs.training.learner, which declares the games and options each runs): 'sb3': MaskablePPO
    in this process (gemenvs.training.selfplay); 'rllib': multi-agent PPO on Ray RLlib, on one machine or a
    cluster (gemenvs.training.rllib_backend, the rllib section; docs/scaling.md); 'lean': a single-file masked
    PPO on torch over the batched engine's arrays, MegaGem only (gemenvs.training.lean_ppo, the lean section)"""
    env: EnvConfig = field(default_factory=EnvConfig)
    """the game"""
    ppo: PPOConfig = field(default_factory=PPOConfig)
    """MaskablePPO"""
    pool: PoolConfig = field(default_factory=PoolConfig)
    """opponents during training"""
    eval: EvalConfig = field(default_factory=EvalConfig)
    """evaluation"""
    pretrain: PretrainConfig = field(default_factory=PretrainConfig)
    """behaviour cloning of a teacher before self-play (off unless pretrain.teacher is set)"""
    rllib: RLlibConfig = field(default_factory=RLlibConfig)
    """the Ray RLlib backend (used when backend is 'rllib')"""
    lean: LeanConfig = field(default_factory=LeanConfig)
    """the lean masked PPO (used when backend is 'lean')"""

    @property
    def run_dir(self) -> Path:
        """Folder of this run (``run_root/name``; the name is set once the config is validated)."""
        if self.name is None:
            raise ConfigError("name is not set yet: validate the config first (it defaults to <game>_selfplay)")
        return Path(self.run_root) / self.name


# ---------------------------------------------------------------------------- typed conversion

def _type_name(tp: Any) -> str:
    if typing.get_origin(tp) is Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(tp))
    if isinstance(tp, type):
        return tp.__name__
    return str(tp).replace("typing.", "")


def _coerce(value: Any, tp: Any, key: str) -> Any:
    """``value`` checked against type ``tp`` (ints accepted as floats, '1e-4' strings as numbers)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        for arg in (a for a in args if a is not type(None)):
            try:
                return _coerce(value, arg, key)
            except ConfigError:
                pass
        names = ("null" if a is type(None) else _type_name(a) for a in args)
        raise ConfigError(f"{key} must be {' or '.join(names)}; got {value!r}")
    if origin is Literal:
        if value not in args:
            raise ConfigError(f"{key} must be {_type_name(tp)}; got {value!r}")
        return value
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{key} must be a list of {_type_name(args[0])}; got {value!r}")
        return [_coerce(v, args[0], f"{key}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{key} must be a mapping; got {value!r}")
        return {str(k): _coerce(v, args[1], f"{key}.{k}") for k, v in value.items()}
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key} must be true or false; got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                return int(value)
            raise ConfigError(f"{key} must be an integer; got {value!r}")
        return value
    if tp is float:
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{key} must be a number; got {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{key} must be a string; got {value!r}")
        return value
    raise ConfigError(f"{key}: unsupported field type {tp}")  # pragma: no cover - a config bug


def _unknown_key(key: str, known: list[str]) -> ConfigError:
    close = difflib.get_close_matches(key.rsplit(".", 1)[-1], known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ConfigError(f"unknown config key {key!r}{hint}; known keys here: {', '.join(known)}")


def _merge(obj: Any, data: dict, prefix: str = "") -> None:
    """Set the fields of dataclass ``obj`` from a nested mapping, checking names and types."""
    if not isinstance(data, dict):
        raise ConfigError(f"{prefix.rstrip('.') or 'the config'} must be a mapping; got {data!r}")
    hints = typing.get_type_hints(type(obj))
    names = [f.name for f in dataclasses.fields(obj)]
    for key, value in data.items():
        if key not in names:
            raise _unknown_key(prefix + str(key), names)
        current = getattr(obj, key)
        if dataclasses.is_dataclass(current):
            _merge(current, value, f"{prefix}{key}.")
        else:
            setattr(obj, key, _coerce(value, hints[key], prefix + key))


def _parse_override(item: str) -> tuple[str, Any]:
    """Split ``key=value`` and parse the value as YAML (``3``, ``0.5``, ``true``, ``[64, 64]``, ``null``)."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"an override is key=value; got {item!r}")
    try:
        value = _yaml_data(raw) if raw.strip() else ""
    except yaml.YAMLError as e:
        raise ConfigError(f"cannot parse the value of {key}: {raw!r} ({' '.join(str(e).split())})") from None
    except ConfigError as e:
        raise ConfigError(f"cannot take the value of {key}: {e}") from None
    return key, value


def _yaml_data(text: str) -> Any:
    """``yaml.safe_load(text)`` once its events show no alias and no nesting past :data:`MAX_CONFIG_DEPTH` (a
    ConfigError naming neither key nor file; a yaml.YAMLError for text that is not YAML)."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):  # (the event parser does not recurse)
        if isinstance(event, yaml.AliasEvent):
            raise ConfigError(f"it holds the YAML alias *{event.anchor}: aliases are not read in a config; "
                              f"write the value out")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_CONFIG_DEPTH:
                raise ConfigError(f"it is nested deeper than {MAX_CONFIG_DEPTH} levels")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return yaml.safe_load(text)


def _apply_override(cfg: TrainConfig, item: str) -> None:
    """Apply one ``key=value`` with a dotted key; ``env.options.NAME=value`` sets one game option."""
    key, value = _parse_override(item)
    parts = key.split(".")
    obj: Any = cfg
    for depth, part in enumerate(parts):
        here, last = ".".join(parts[: depth + 1]), depth == len(parts) - 1
        names = [f.name for f in dataclasses.fields(obj)]
        if part not in names:
            raise _unknown_key(here, names)
        hint = typing.get_type_hints(type(obj))[part]
        current = getattr(obj, part)
        if dataclasses.is_dataclass(current):
            if last:
                _merge(current, value, here + ".")
                return
            obj = current
        elif isinstance(current, dict) and not last:
            entry = dict(current)
            entry[".".join(parts[depth + 1:])] = value
            setattr(obj, part, _coerce(entry, hint, here))
            return
        elif not last:
            raise ConfigError(f"{here} is a single value, so {key} does not exist")
        else:
            setattr(obj, part, _coerce(value, hint, here))


def load_config(path: str | Path | None = None, overrides: list[str] | tuple[str, ...] = ()) -> TrainConfig:
    """The defaults, updated by the YAML file at ``path`` (if any), then by ``key=value`` overrides."""
    cfg = TrainConfig()
    if path is not None:
        path = Path(path)
        try:
            text = read_bytes(path, MAX_CONFIG_BYTES, "config file").decode("utf-8")
        except FileNotFoundError:
            raise ConfigError(f"no config file at {path}") from None
        except FileProblem as e:
            raise ConfigError(str(e)) from None
        except UnicodeDecodeError as e:
            raise ConfigError(f"{path} is not UTF-8 text (byte {e.start}: {e.reason})") from None
        except OSError as e:
            raise ConfigError(f"cannot read {path}: {e.strerror or e}") from None
        try:
            data = _yaml_data(text)
        except yaml.YAMLError as e:
            raise ConfigError(f"{path} is not valid YAML: {' '.join(str(e).split())}") from None
        except ConfigError as e:
            raise ConfigError(f"{path}: {e}") from None
        data = {} if data is None else data
        try:
            _merge(cfg, data)
        except ConfigError as e:
            raise ConfigError(f"{path}: {e}") from None
    return apply_overrides(cfg, overrides)


def apply_overrides(cfg: TrainConfig, overrides: list[str] | tuple[str, ...]) -> TrainConfig:
    """Apply ``key=value`` overrides in order to ``cfg`` (in place), then validate it."""
    for item in overrides:
        _apply_override(cfg, item)
    validate(cfg)
    return cfg


def config_from_dict(data: dict) -> TrainConfig:
    """A config from the mapping :func:`config_to_dict` wrote (checked like a YAML file)."""
    cfg = TrainConfig()
    _merge(cfg, data)
    validate(cfg)
    return cfg


def config_to_dict(cfg: TrainConfig) -> dict:
    """The config as plain nested data (for YAML)."""
    return dataclasses.asdict(cfg)


def save_config(cfg: TrainConfig, path: str | Path) -> None:
    """Write the config as YAML that :func:`load_config` reads back."""
    Path(path).write_text(yaml.safe_dump(config_to_dict(cfg), sort_keys=False))


# ---------------------------------------------------------------------------- validation

def _get(cfg: TrainConfig, key: str) -> tuple[Any, bool]:
    """The value of dotted ``key`` and whether its field accepts null."""
    obj: Any = cfg
    parts = key.split(".")
    for part in parts[:-1]:
        obj = getattr(obj, part)
    hint = typing.get_type_hints(type(obj))[parts[-1]]
    return getattr(obj, parts[-1]), type(None) in typing.get_args(hint)


#: range rules: key -> (lowest, lowest allowed?, highest or None, highest allowed?)
RANGES: dict[str, tuple[float, bool, float | None, bool]] = {
    **{k: (1, True, None, False) for k in (
        "total_timesteps", "n_envs", "torch_threads", "ppo.n_steps", "ppo.n_epochs", "pool.max_snapshots",
        "pool.window", "eval.games", "eval.final_games", "eval.workers", "pretrain.games", "pretrain.epochs",
        "pretrain.workers", "pretrain.dagger_games", "pretrain.dagger_epochs")},
    **{k: (0, True, None, False) for k in (
        "seed", "checkpoint_every", "pool.snapshot_every", "eval.every", "ppo.ent_coef", "ppo.vf_coef",
        "pool.priority_power", "env.shaping", "pretrain.value_coef", "pool.family.members", "pool.family.spread",
        "pretrain.dagger_rounds", "ppo.anchor_coef")},
    "ppo.batch_size": (2, True, None, False),  # SB3 normalises advantages over each minibatch
    "pretrain.batch_size": (1, True, None, False),
    "pretrain.learning_rate": (0, False, 1, False),
    "ppo.learning_rate": (0, False, 1, False),
    "max_train_minutes": (0, False, None, False),
    "ppo.clip_range": (0, False, None, False),
    "ppo.max_grad_norm": (0, False, None, False),
    "ppo.target_kl": (0, False, None, False),
    "ppo.gamma": (0, True, 1, True),
    "ppo.gae_lambda": (0, True, 1, True),
    "pool.baseline_share": (0, True, 1, True),
    "rllib.num_env_runners": (0, True, None, False),
    "rllib.num_envs_per_env_runner": (1, True, None, False),
    "rllib.num_cpus_per_env_runner": (0, False, None, False),
    "rllib.train_batch_size": (1, True, None, False),
    "rllib.self_play_share": (0, True, 1, True),
}
#: upper limits of keys whose lower bound RANGES gives: key -> the largest value allowed
LIMITS: dict[str, int] = {"seed": MAX_CONFIG_SEED, "total_timesteps": 1_000_000_000}


def check_range(key: str, value: Any, nullable: bool = False) -> None:
    """``value`` of ``key`` within :data:`RANGES` (None passes: the field's type says whether null is allowed)."""
    if value is None:
        return
    low, low_ok, high, high_ok = RANGES[key]
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{key} must be a finite number; got {value!r}")
    above = value >= low if low_ok else value > low
    below = high is None or (value <= high if high_ok else value < high)
    if key in LIMITS and value > LIMITS[key]:
        raise ConfigError(f"{key} must be at most {LIMITS[key]}{' or null' if nullable else ''}; got {value!r}")
    if not (above and below):
        if high is not None and low_ok and high_ok:
            rule = f"in [{low}, {high}]"
        elif not above:
            rule = f"at least {low}" if low_ok else f"greater than {low}"
        else:
            rule = f"at most {high}" if high_ok else f"less than {high}"
        raise ConfigError(f"{key} must be {rule}{' or null' if nullable else ''}; got {value!r}")


def check_run_name(name: Any) -> None:
    """A run name is one plain path component: not empty, no separator, not ``.`` or ``..``."""
    if not isinstance(name, str) or not name:
        raise ConfigError(f"name must be a non-empty folder name; got {name!r}")
    if (name in (".", "..") or "\0" in name or len(PurePosixPath(name).parts) != 1 or "/" in name
            or len(PureWindowsPath(name).parts) != 1 or "\\" in name or name != name.strip()):
        raise ConfigError(f"name must be one plain folder name (no '/', '\\', drive, '.', '..' or surrounding "
                          f"spaces), since the run is written to run_root/name; got {name!r}")


def probe_env(env_cfg: EnvConfig):
    """The configured AEC environment, built once to check its options (a ConfigError says why not)."""
    from gemenvs.arena.single_agent import check_learner_seat, make_aec_env

    try:
        env = make_aec_env(env_cfg.id, reward=env_cfg.reward, **env_cfg.options)
    except Exception as e:
        raise ConfigError(f"env: cannot build {env_cfg.id!r} with options {env_cfg.options}: "
                          f"{type(e).__name__}: {e}") from None
    try:
        check_learner_seat(env_cfg.learner_seat, len(env.unwrapped.possible_agents))
    except (TypeError, ValueError) as e:
        env.close()
        raise ConfigError(f"env.{e}".replace(" or None", " or null")) from None
    return env


def game_name(env_cfg: EnvConfig) -> str:
    """The game's short name (``"megagem"``), building the environment once to check its options."""
    env = probe_env(env_cfg)
    name = env.unwrapped.game.name
    env.close()
    return name


def check_opponent_names(env, names: list[str], key: str) -> None:
    """Every name must be a baseline of the game of ``env`` or a policy file that fits it.

    A policy file is loaded here (weights only, never code: see :mod:`gemenvs.agents.policy`), so a
    missing, corrupt, unsafe or mismatched file is a ConfigError before any run folder is made.
    """
    from gemenvs.agents.policy import is_policy_file
    from gemenvs.agents.registry import check_agent_name
    from gemenvs.arena.resolve import resolve_agent

    game = env.unwrapped.game.name
    for name in names:
        if is_policy_file(name):
            try:
                resolve_agent(game, name, env)
            except (OSError, ValueError, ImportError) as e:
                raise ConfigError(f"{key}: {name!r}: {e}") from None
        else:
            try:
                check_agent_name(game, name)
            except ValueError as e:
                raise ConfigError(f"{key}: {e} (or the path of a .zip/.npz policy)") from None


def check_charts(env_cfg: EnvConfig, charts: list[str]) -> None:
    """``eval.charts``: distinct fixed value charts that the configured game accepts (a ConfigError says why not)."""
    env = probe_env(env_cfg)
    game = env.unwrapped.game
    has_chart = "value_chart" in game.options()
    env.close()
    if not has_chart:
        raise ConfigError(f"eval.charts: {game.name} has no value_chart option; leave eval.charts null")
    if not charts:
        raise ConfigError("eval.charts must name at least one chart (e.g. [A, B, C, D, E]), or be null")
    for k, chart in enumerate(charts):
        if chart == "random" or chart in charts[:k]:
            why = "is 'random' (per-chart rows need fixed charts)" if chart == "random" else "is repeated"
            raise ConfigError(f"eval.charts[{k}] {why}; got {charts}")
        try:
            probe_env(EnvConfig(id=env_cfg.id, options={**env_cfg.options, "value_chart": chart}, reward=env_cfg.reward))
        except ConfigError as e:
            raise ConfigError(f"eval.charts[{k}]: {chart!r} is not a value chart of {game.name} ({e})") from None


def validate(cfg: TrainConfig) -> None:
    """Check values that types alone cannot (ranges, opponents, the game's options), and fill in the
    per-game defaults (``name``, ``pool.baselines``, ``eval.opponents``)."""
    for key in RANGES:
        check_range(key, *_get(cfg, key))
    if len(cfg.ppo.net_arch) > MAX_HIDDEN_LAYERS:
        raise ConfigError(f"ppo.net_arch has {len(cfg.ppo.net_arch)} hidden layers; at most {MAX_HIDDEN_LAYERS} "
                          f"([] for linear networks); got {cfg.ppo.net_arch}")
    for k, size in enumerate(cfg.ppo.net_arch):
        if size < 1:
            raise ConfigError(f"ppo.net_arch[{k}] must be a positive layer size; got {size}")
        if size > MAX_LAYER_SIZE:
            raise ConfigError(f"ppo.net_arch[{k}] must be a layer size of at most {MAX_LAYER_SIZE}; got {size}")
    if cfg.name is not None:
        check_run_name(cfg.name)
    env = probe_env(cfg.env)
    try:
        from gemenvs.agents.registry import baseline_names

        game = env.unwrapped.game.name
        if cfg.name is None:
            cfg.name = f"{game}_selfplay"
        if cfg.pool.baselines is None:
            cfg.pool.baselines = baseline_names(game)
        if cfg.eval.opponents is None:
            cfg.eval.opponents = baseline_names(game)
        if not cfg.pool.baselines and not cfg.pool.family.members and cfg.pool.snapshot_every == 0:
            raise ConfigError("pool.baselines is empty and pool.snapshot_every is 0: the learner would have no opponents")
        if not cfg.eval.opponents:
            raise ConfigError("eval.opponents must name at least one baseline")
        if cfg.env.potential == "win_chance" and not env.unwrapped.game.has_win_model():
            raise ConfigError(f"env.potential: {game} has no win model ('win_chance'); use 'progress'")
        if cfg.vec_env == "batched" and game not in BATCHED_GAMES:
            raise ConfigError(f"vec_env: 'batched' plays MegaGem only, not {game}; use 'auto' or 'subproc'")
        features = None
        if cfg.env.features is not None and "env.features" in CAPABILITIES[cfg.backend].options:
            from gemenvs.agents.features import make_features

            try:
                features = make_features(cfg.env.features, cfg.env.options, game=game)
            except ValueError as e:
                raise ConfigError(f"env.features: {e}") from None
        problem = check_capabilities(cfg, game, features)
        if problem is not None:
            raise ConfigError(problem)
        if cfg.pool.family.members and game != "megagem":
            raise ConfigError(f"pool.family: the tuned bidder family plays MegaGem only, not {game}; "
                              f"set pool.family.members to 0")
        check_opponent_names(env, cfg.pool.baselines, "pool.baselines")
        from gemenvs.agents.registry import reads_state

        searchers = [name for name in cfg.pool.baselines if reads_state(game, name)]
        if searchers:
            raise ConfigError(f"pool.baselines: {', '.join(searchers)}: search agents read the game state and cost "
                              f"milliseconds or more a decision; they are evaluation opponents (eval.opponents), "
                              f"not training opponents")
        if cfg.pool.family.members:
            from gemenvs.agents.megagem.family import member_name

            try:
                family = [member_name(k, cfg.pool.family.spread) for k in range(cfg.pool.family.members)]
            except ValueError as e:
                raise ConfigError(f"pool.family: {e}") from None
            twice = sorted(set(family) & set(cfg.pool.baselines))
            if twice:
                raise ConfigError(f"pool.baselines names {', '.join(twice)}, which pool.family adds too")
        check_opponent_names(env, cfg.eval.opponents, "eval.opponents")
        if cfg.pretrain.teacher == "advice":
            if features is None or not callable(getattr(features, "advised", None)):
                raise ConfigError("pretrain.teacher 'advice' plays what env.features advise; it needs features that "
                                  "advise an action (e.g. gemjam_lookahead_advice)")
        elif cfg.pretrain.teacher is not None:
            check_opponent_names(env, [cfg.pretrain.teacher], "pretrain.teacher")
    finally:
        env.close()
    if cfg.eval.charts is not None:
        check_charts(cfg.env, cfg.eval.charts)
    best = cfg.eval.best_by
    if isinstance(best, list):
        if not best or any(k not in cfg.eval.opponents for k in best) or len(set(best)) < len(best):
            raise ConfigError(f"eval.best_by as a list must name distinct opponents of eval.opponents "
                              f"{cfg.eval.opponents}; got {best!r}")
    elif best != "mean" and best not in cfg.eval.opponents:
        raise ConfigError(f"eval.best_by must be 'mean', one of eval.opponents {cfg.eval.opponents} or a list of "
                          f"them; got {best!r}")
    if cfg.ppo.anchor_coef and cfg.pretrain.teacher is None:
        raise ConfigError(f"ppo.anchor_coef ({cfg.ppo.anchor_coef:g}) pulls the policy towards its pretrained clone: "
                          f"it needs pretrain.teacher (or set it to 0)")
    if cfg.backend == "rllib":
        check_rllib(cfg)


def check_rllib(cfg: TrainConfig) -> None:
    """The consistency of the ``rllib`` section (``backend: rllib``)."""
    address = cfg.rllib.address
    if address is not None and address != "auto" and "://" not in address:
        host, _, port = address.rpartition(":")
        if not host or host != host.strip() or not port.isdigit():
            raise ConfigError(f"rllib.address must be null, 'auto' or HOST:PORT of a Ray cluster; got {address!r}")
    batch = cfg.rllib.train_batch_size or cfg.ppo.n_steps * cfg.n_envs
    if cfg.ppo.batch_size > batch:
        raise ConfigError(f"ppo.batch_size ({cfg.ppo.batch_size}) must be at most the training batch, "
                          f"rllib.train_batch_size (or ppo.n_steps * n_envs) = {batch}")
