"""Self-play training configuration: typed dataclasses, loaded from YAML, overridden by ``key=value``.

Every field is documented where it is declared. A YAML file holds any subset of the fields,
nested as the dataclasses are (``ppo: {learning_rate: 0.0003}``); the command line overrides
them with dotted keys (``ppo.learning_rate=1e-4``, ``env.options.num_players=3``). An unknown
key, a value of the wrong type or an unknown opponent is a :class:`ConfigError` naming it.
"""
from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml


class ConfigError(ValueError):
    """A configuration that cannot be used: the message names the key and what is wrong."""


@dataclass
class EnvConfig:
    """Which game the learner plays, and how it is rewarded."""

    id: str = "gemenvs/MegaGem-v0"
    """PettingZoo registry id of the game (any game of the suite)"""
    options: dict[str, Any] = field(default_factory=lambda: {"num_players": 4})
    """game options passed to the environment (e.g. num_players, value_chart)"""
    reward: Literal["win", "score", "rank", "margin"] = "win"
    """the learner's terminal reward: win +1/-1, score/100, rank +1..-1, or margin to the best other score /100"""
    learner_seat: int | None = None
    """the learner's seat, or null to draw it uniformly every episode"""


@dataclass
class PPOConfig:
    """MaskablePPO hyperparameters (sb3-contrib names)."""

    learning_rate: float = 3e-4
    """Adam step size"""
    n_steps: int = 512
    """learner decisions collected per environment before each update"""
    batch_size: int = 256
    """minibatch size of each gradient step"""
    n_epochs: int = 4
    """passes over each rollout"""
    gamma: float = 1.0
    """discount factor (rewards come at the end of a game, so 1.0 is natural)"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    clip_range: float = 0.2
    """PPO clipping of the probability ratio"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value-loss weight"""
    max_grad_norm: float = 0.5
    """gradient clipping norm"""
    target_kl: float | None = None
    """stop an update's epochs early past this KL divergence, or null"""
    net_arch: list[int] = field(default_factory=lambda: [128, 128])
    """hidden layer sizes of the actor and of the critic (separate networks)"""
    activation: Literal["tanh", "relu"] = "tanh"
    """activation between hidden layers"""


@dataclass
class PoolConfig:
    """The opponent pool: baselines plus frozen snapshots of the learner, sampled per episode."""

    baselines: list[str] = field(default_factory=lambda: ["random", "truthful", "heuristic"])
    """baseline agents always in the pool (names from gemenvs.agents, or paths of saved policies)"""
    snapshot_every: int = 50_000
    """add a frozen copy of the learner to the pool every this many environment steps (0: never)"""
    max_snapshots: int = 8
    """snapshots kept in the pool; the oldest is dropped first"""
    sampling: Literal["uniform", "prioritized"] = "prioritized"
    """uniform over members, or weighted towards members the learner beats least"""
    priority_power: float = 2.0
    """prioritized weight of a member = (1 - learner's recent win rate against it) ** power"""
    window: int = 200
    """recent games per member that its win rate is measured over"""
    baseline_share: float | None = None
    """fraction of episodes played against the baselines once snapshots exist (sampling applies within
    each group), or null to weigh baselines and snapshots together"""
    seat_mix: Literal["same", "per_seat"] = "same"
    """one member for all opponent seats of an episode, or one member drawn per seat"""


@dataclass
class EvalConfig:
    """Evaluation against copies of each baseline (the learner in every seat in turn)."""

    every: int = 50_000
    """evaluate every this many environment steps (0: only at the end)"""
    games: int = 100
    """games per baseline at each periodic evaluation"""
    opponents: list[str] = field(default_factory=lambda: ["random", "truthful", "heuristic"])
    """baselines to evaluate against, each filling every other seat"""
    best_by: str = "mean"
    """the win rate that picks best_model.zip: an opponent name, or 'mean' over opponents"""
    final_games: int = 500
    """games per baseline in the final table (at least 500 for the reported figures)"""
    deterministic: bool = True
    """evaluate the argmax action rather than sampling"""
    workers: int = 2
    """processes that play evaluation games in parallel"""


@dataclass
class TrainConfig:
    """One self-play training run."""

    name: str = "megagem_selfplay"
    """run name: the run is written to run_root/name"""
    run_root: str = "runs"
    """folder that holds the runs"""
    overwrite: bool = False
    """replace an earlier run of the same name (otherwise starting over it is an error)"""
    seed: int = 0
    """seed of the model, the environments and the evaluation games"""
    total_timesteps: int = 500_000
    """learner decisions to train for (summed over environments)"""
    n_envs: int = 4
    """parallel environments (SubprocVecEnv processes; 1 runs in-process)"""
    checkpoint_every: int = 100_000
    """write a resumable checkpoint every this many environment steps (0: only at the end)"""
    torch_threads: int = 1
    """torch threads per process"""
    progress_bar: bool = True
    """show a tqdm bar with fps and win rates"""
    env: EnvConfig = field(default_factory=EnvConfig)
    """the game"""
    ppo: PPOConfig = field(default_factory=PPOConfig)
    """MaskablePPO"""
    pool: PoolConfig = field(default_factory=PoolConfig)
    """opponents during training"""
    eval: EvalConfig = field(default_factory=EvalConfig)
    """evaluation"""

    @property
    def run_dir(self) -> Path:
        """Folder of this run."""
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
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as e:
        raise ConfigError(f"cannot parse the value of {key}: {raw!r} ({e})") from e
    return key, value


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
        if not path.is_file():
            raise ConfigError(f"no config file at {path}")
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as e:
            raise ConfigError(f"{path} is not valid YAML: {e}") from e
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

def _positive(cfg: TrainConfig, key: str, minimum: int | float = 1) -> None:
    obj: Any = cfg
    for part in key.split("."):
        obj = getattr(obj, part)
    if obj < minimum:
        raise ConfigError(f"{key} must be at least {minimum}; got {obj!r}")


def check_opponent_names(game: str, names: list[str], key: str) -> None:
    """Every name must be a baseline of ``game`` or the path of an existing policy file."""
    from gemenvs.agents.registry import baseline_names
    from gemenvs.training.single_agent import is_policy_path

    known = baseline_names(game)
    for name in names:
        if is_policy_path(name):
            if not Path(name).is_file():
                raise ConfigError(f"{key}: no policy file at {name!r}")
        elif name not in known:
            raise ConfigError(f"{key}: unknown opponent {name!r} for {game}; known: {', '.join(known)} "
                              f"(or the path of a .zip/.npz policy)")


def game_name(env_cfg: EnvConfig) -> str:
    """The game's short name (``"megagem"``), building the environment once to check its options."""
    from gemenvs.training.single_agent import make_aec_env

    try:
        env = make_aec_env(env_cfg.id, reward=env_cfg.reward, **env_cfg.options)
    except Exception as e:
        raise ConfigError(f"env: cannot build {env_cfg.id!r} with options {env_cfg.options}: "
                          f"{type(e).__name__}: {e}") from e
    name = env.unwrapped.game.name
    seats = len(env.unwrapped.possible_agents)
    env.close()
    if env_cfg.learner_seat is not None and not 0 <= env_cfg.learner_seat < seats:
        raise ConfigError(f"env.learner_seat must be in 0..{seats - 1} or null; got {env_cfg.learner_seat}")
    return name


def validate(cfg: TrainConfig) -> None:
    """Check values that types alone cannot: ranges, opponent names, the game's options."""
    for key in ("total_timesteps", "n_envs", "torch_threads", "ppo.n_steps", "ppo.batch_size", "ppo.n_epochs",
                "pool.max_snapshots", "pool.window", "eval.games", "eval.final_games", "eval.workers"):
        _positive(cfg, key)
    for key in ("checkpoint_every", "pool.snapshot_every", "eval.every"):
        _positive(cfg, key, 0)
    if not 0 < cfg.ppo.learning_rate < 1:
        raise ConfigError(f"ppo.learning_rate must be in (0, 1); got {cfg.ppo.learning_rate}")
    if not cfg.pool.baselines and cfg.pool.snapshot_every == 0:
        raise ConfigError("pool.baselines is empty and pool.snapshot_every is 0: the learner would have no opponents")
    if cfg.ppo.batch_size > cfg.ppo.n_steps * cfg.n_envs:
        raise ConfigError(f"ppo.batch_size ({cfg.ppo.batch_size}) exceeds one rollout "
                          f"(ppo.n_steps * n_envs = {cfg.ppo.n_steps * cfg.n_envs})")
    if cfg.pool.baseline_share is not None and not 0.0 <= cfg.pool.baseline_share <= 1.0:
        raise ConfigError(f"pool.baseline_share must be in 0..1 or null; got {cfg.pool.baseline_share}")
    if not cfg.eval.opponents:
        raise ConfigError("eval.opponents must name at least one baseline")
    game = game_name(cfg.env)
    check_opponent_names(game, cfg.pool.baselines, "pool.baselines")
    check_opponent_names(game, cfg.eval.opponents, "eval.opponents")
    if cfg.eval.best_by != "mean" and cfg.eval.best_by not in cfg.eval.opponents:
        raise ConfigError(f"eval.best_by must be 'mean' or one of eval.opponents {cfg.eval.opponents}; "
                          f"got {cfg.eval.best_by!r}")
