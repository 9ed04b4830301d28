"""PolicyAgent: a trained policy playing through the same :class:`~gemenvs.agents.base.Agent` protocol.

A policy is the actor of a MaskablePPO ``MlpPolicy``: linear layers with an activation between
them, ending in one logit per action. It plays in plain numpy (no torch at play time), so
frozen copies are cheap to run inside environment worker processes.

    agent = PolicyAgent.load("runs/megagem_selfplay/best_model.zip")          # deterministic
    agent = PolicyAgent.load("runs/megagem_selfplay/best_model.zip", deterministic=False, seed=0)

``load`` reads a MaskablePPO ``.zip`` (needs torch) or an ``.npz`` written by
:meth:`PolicyAgent.save` (needs numpy only).

**Loading never runs code from the file.** SB3's own loader unpickles the ``":serialized:"``
entries of a zip's ``data`` (cloudpickle), so a crafted file would run arbitrary code. Here a
``.zip`` is read by :func:`read_sb3_zip`: ``data`` as plain JSON (its pickled payloads are never
decoded) and the ``.pth`` state dicts with ``torch.load(weights_only=True)``, which refuses any
object but tensors and plain containers; the actor's shape comes from the weights and its
activation from the plain-text ``policy_kwargs.activation_fn``. An ``.npz`` is read with
``allow_pickle=False``. A file that would need code to load is a :class:`PolicyLoadError`.

**Loading is bounded.** Only a regular file is opened (a FIFO or a device is refused at once, never
waited on), of at most :data:`MAX_MODEL_FILE_BYTES` and :data:`MAX_MEMBERS` members; each member read
may expand to :data:`MAX_MEMBER_BYTES` and all of them together to :data:`MAX_READ_BYTES`, as their
sizes in the archive's directory say (a member that holds more than it declares fails its check
when read); JSON in the file may nest :data:`MAX_JSON_DEPTH` levels. Any of these is one line.
"""
from __future__ import annotations

import io
import json
import os
import re
import zipfile
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from gemenvs.agents.base import BaseAgent, check_batch, legal_actions, legal_counts
from gemenvs.agents.features import ObservationFeatures, features_from_dict
from gemenvs.files import FileProblem, json_depth, open_regular

#: activations PolicyAgent can run, by the name of their torch module
ACTIVATIONS = {
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0),
    "elu": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0.0))),
    "silu": lambda x: x / (1.0 + np.exp(-x)),
    "identity": lambda x: x,
}


class PolicyLoadError(ValueError):
    """A policy file that exists but cannot be read as a policy (corrupt, or not a policy)."""


def write_npz(path, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` as an uncompressed ``.npz`` whose bytes depend on the arrays alone (``np.savez`` stamps
    each member with the time it was written): the same weights make the same file on any machine, any day.
    ``path``: a binary file object, or a path, written all or nothing and never through a symbolic link
    (:func:`gemenvs.files.write_file`)."""
    if not hasattr(path, "write"):
        from gemenvs.files import user_folder, write_file

        path = Path(path)
        buffer = io.BytesIO()
        write_npz(buffer, arrays)
        write_file(user_folder(path), path.name, buffer.getvalue())
        return
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, array in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            with zf.open(info, "w", force_zip64=True) as f:
                np.lib.format.write_array(f, np.asanyarray(array), allow_pickle=False)


#: the suffixes of saved policies: MaskablePPO's ``.zip`` and :meth:`PolicyAgent.save`'s ``.npz``
POLICY_SUFFIXES = (".zip", ".npz")


def is_policy_file(spec) -> bool:
    """Whether an agent spec (a string or a path) names a saved policy file rather than an agent by name."""
    return isinstance(spec, (str, os.PathLike)) and str(spec).endswith(POLICY_SUFFIXES)


def _is_policy_npz(path: Path) -> bool:
    """Whether ``path`` is an ``.npz`` with a policy header (what :meth:`PolicyAgent.save` may replace)."""
    try:
        with zipfile.ZipFile(path) as zf:
            return "header.npy" in zf.namelist()
    except (OSError, zipfile.BadZipFile, ValueError):
        return False


class PolicyAgent(BaseAgent):
    """Plays the most likely legal action (``deterministic=True``) or samples the masked distribution.

    Args:
        layers: ``(weight, bias)`` per linear layer, weight of shape ``(inputs, outputs)``; the last
            layer outputs one logit per action.
        activation: name of the activation after every layer but the last (see :data:`ACTIVATIONS`).
        deterministic: play the argmax of the masked logits instead of sampling them.
        seed: seed of the sampling RNG.
        metadata: free-form facts saved with the policy (game, options, training step...).
        features: observation features (:mod:`gemenvs.agents.features`) the network reads after the
            observation; computed here from each observation and its mask, and named in the metadata.
    """

    name = "policy"

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], activation: str = "tanh",
                 deterministic: bool = True, seed: int | None = None, metadata: dict | None = None,
                 features: ObservationFeatures | None = None):
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}; got {activation!r}")
        if not layers:
            raise ValueError("a policy needs at least one layer")
        self.layers = [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in layers]
        for k in range(1, len(self.layers)):
            if self.layers[k][0].shape[0] != self.layers[k - 1][0].shape[1]:
                raise ValueError(f"layer {k} takes {self.layers[k][0].shape[0]} inputs but layer {k - 1} "
                                 f"gives {self.layers[k - 1][0].shape[1]}")
        self.activation = activation
        self._act_fn = ACTIVATIONS[activation]
        self.deterministic = bool(deterministic)
        self.metadata = dict(metadata or {})
        self.features = features
        if features is None and "features" in self.metadata:
            raise ValueError("the metadata names observation features but none were given (features=...)")
        if features is not None:
            if self.input_size <= features.size:
                raise ValueError(f"the first layer takes {self.input_size} inputs: too few for an observation "
                                 f"and the {features.size} numbers of {features.name}")
            self.metadata["features"] = features.to_dict()
        #: features computed from the engine state make the policy a search-like agent: it is asked through
        #: act_with_state (gemenvs.agents.base.decide), never act
        self.needs_state = bool(features is not None and features.needs_state)
        super().__init__(num_actions=self.layers[-1][0].shape[1], seed=seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the sampling RNG, and the features' own randomness (if any)."""
        super().reset(seed)
        if self.features is not None:
            self.features.reset(seed)

    @property
    def input_size(self) -> int:
        """Inputs of the network: the observation, then the features' numbers (if any)."""
        return int(self.layers[0][0].shape[0])

    @property
    def observation_size(self) -> int:
        """Length of the environment's observation vector the policy reads."""
        return self.input_size - (self.features.size if self.features is not None else 0)

    # ------------------------------------------------------------------ playing

    def _inputs(self, x: np.ndarray, masks: np.ndarray | None) -> np.ndarray:
        """The network's input rows: the observations, with the features computed from them and ``masks``."""
        if self.features is None:
            return x
        if self.features.needs_state:
            raise ValueError(f"this policy reads the observation features {self.features.name}, computed from the "
                             "engine state: play it through gemenvs.arena.match (decide, play_game), which calls "
                             "act_with_state")
        if masks is None:
            raise ValueError(f"this policy reads the observation features {self.features.name}, computed from "
                             "the observation and the action mask: pass the mask")
        return self.features.augment(x, masks)

    def logits(self, observation: np.ndarray, action_mask: np.ndarray | None = None) -> np.ndarray:
        """Unmasked action logits for one observation (the mask is needed only by a policy with ``features``)."""
        x = np.asarray(observation, dtype=np.float32)
        if x.shape != (self.observation_size,):
            raise ValueError(f"this policy reads observations of shape ({self.observation_size},), "
                             f"got {x.shape}: was it trained on another game or player count?")
        return self._forward(self._inputs(x, action_mask))

    #: one observation with at most this share of nonzero inputs is multiplied by the first layer's rows of its
    #: nonzero inputs only (a Gem Jam observation has about 110 of 3,187: much less work than the full product)
    SPARSE_SHARE = 0.25

    def _forward(self, x: np.ndarray) -> np.ndarray:
        """The network on float32 input ``x`` (one observation or a batch of rows)."""
        last = len(self.layers) - 1
        for k, (w, b) in enumerate(self.layers):
            if k == 0 and x.ndim == 1 and np.count_nonzero(x) <= self.SPARSE_SHARE * x.size:
                nz = np.flatnonzero(x)  # the zero inputs add nothing: skip their rows of the weights
                x = x[nz] @ w[nz] + b
            else:
                x = x @ w + b
            if k < last:
                x = self._act_fn(x)
        return x

    def action_probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The policy's probability of every action, zero on illegal ones."""
        legal = legal_actions(action_mask)
        z = self.logits(observation, action_mask)[legal].astype(np.float64)
        p = np.exp(z - z.max())
        out = np.zeros(self.num_actions)
        out[legal] = p / p.sum()
        return out

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        return self._choose(self.logits(observation, action_mask)[legal], legal)

    def act_with_state(self, state, seat: int, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The choice of a policy whose features are computed from the engine state (``needs_state``):
        ``seat``'s ``observation`` in ``state`` with the features' numbers for that decision appended."""
        if not self.needs_state:
            return self.act(observation, action_mask)
        x = np.asarray(observation, dtype=np.float32)
        if x.shape != (self.observation_size,):
            raise ValueError(f"this policy reads observations of shape ({self.observation_size},), "
                             f"got {x.shape}: was it trained on another game or player count?")
        legal = legal_actions(action_mask)
        if legal.size == 1:  # (nothing to choose: the features are not computed)
            return int(legal[0])
        return self._choose(self._forward(self.features.augment_state(x, state, seat))[legal], legal)

    def logits_inputs(self, inputs: np.ndarray) -> np.ndarray:
        """Unmasked logits of network input rows that already hold the features' numbers (``(input_size,)`` or
        ``(N, input_size)``), e.g. the rows of pretraining games, which computed them from the state."""
        x = np.asarray(inputs, dtype=np.float32)
        if x.shape[-1:] != (self.input_size,) or x.ndim > 2:
            raise ValueError(f"this policy's network reads rows of {self.input_size} inputs; got shape {x.shape}")
        return self._forward(x)

    def act_inputs(self, inputs: np.ndarray, action_mask: np.ndarray) -> int:
        """:meth:`act` on one network input row that already holds the features' numbers."""
        legal = legal_actions(action_mask)
        return self._choose(self.logits_inputs(inputs)[legal], legal)

    def _choose(self, z: np.ndarray, legal: np.ndarray) -> int:
        """The action among ``legal`` by their logits ``z``: the best, or a sample of their softmax."""
        if self.deterministic:
            return int(legal[int(np.argmax(z))])
        # Gumbel-max trick: argmax(logits + Gumbel noise) is a sample of softmax(logits)
        return int(legal[int(np.argmax(z + self.rng.gumbel(size=legal.size)))])

    # ------------------------------------------------------------------ playing many rows at once

    per_game_memory = False
    #: a row whose best two legal scores (logits, plus the Gumbel noise when sampling) are closer
    #: than ``TIE_TOLERANCE * (1 + |best|)`` is played again through :meth:`logits` (see :meth:`act_batch`)
    TIE_TOLERANCE = 1e-4

    def logits_batch(self, observations: np.ndarray, action_masks: np.ndarray | None = None) -> np.ndarray:
        """Unmasked action logits ``(G, num_actions)`` of observations ``(G, obs_dim)``, one matrix product a layer
        (the masks are needed only by a policy with ``features``)."""
        x = np.asarray(observations, dtype=np.float32)
        if x.ndim != 2 or x.shape[1] != self.observation_size:
            raise ValueError(f"this policy reads observations of shape (G, {self.observation_size}), "
                             f"got {x.shape}: was it trained on another game or player count?")
        return self._forward(self._inputs(x, action_masks))

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """The choices :meth:`act` makes on the rows in order, with one forward pass for all rows.

        Sampling draws the Gumbel noise of every row's legal actions in one call, in the order
        the calls of ``act`` row by row draw it (row by row, legal actions in id order), so the
        generator ends in the same state. A matrix product of many rows may round the logits
        differently from the product of one row (by float32 rounding, about 1e-6 here), which
        could only matter where the best two legal scores of a row are that close: such rows
        (closer than :data:`TIE_TOLERANCE` relative) are scored again through :meth:`logits`,
        exactly as ``act`` scores them. So the choices are ``act``'s, ties included (tested).
        """
        obs, masks = check_batch(observations, action_masks)
        counts = legal_counts(masks)
        logits = self.logits_batch(obs, masks)
        legal = masks != 0
        score = np.where(legal, logits, -np.inf).astype(np.float64)
        if not self.deterministic:
            noise = self.rng.gumbel(size=int(counts.sum()))
            score[legal] += noise  # boolean indexing runs row by row, columns in order: act's order
        choice = np.argmax(score, axis=1)
        rows = np.arange(len(obs))
        best = score[rows, choice]
        score[rows, choice] = -np.inf
        runner_up = score.max(axis=1, initial=-np.inf)
        close = np.flatnonzero(best - runner_up <= self.TIE_TOLERANCE * (1.0 + np.abs(best)))
        if close.size:
            starts = np.cumsum(counts) - counts
            for i in close:
                ids = np.flatnonzero(legal[i])
                z = self.logits(obs[i], masks[i])[ids]
                if not self.deterministic:
                    z = z + noise[starts[i]:starts[i] + counts[i]]
                choice[i] = ids[int(np.argmax(z))]
        return choice.astype(np.int64)

    def check_fits(self, env, label: str = "the policy", where: str = "this environment") -> None:
        """Raise ValueError unless the policy reads ``env``'s observations and plays its actions
        (the message names the policy as ``label`` and the environment as ``where``)."""
        first = env.possible_agents[0]
        obs_size = int(np.prod(env.observation_space(first)["observation"].shape))
        actions = int(env.action_space(first).n)
        if (self.observation_size, self.num_actions) != (obs_size, actions):
            hint = "was it trained on another game or player count?"
            if self.features is None and self.observation_size > obs_size and self.num_actions == actions:
                hint = (f"was it trained with observation features ({self.observation_size - obs_size} numbers after "
                        f"the observation)? Load the .npz its run wrote (best_model.npz, final_model.npz), which "
                        f"names them; a .zip cannot")
            raise ValueError(f"{label} reads {self.observation_size} observation values and plays "
                             f"{self.num_actions} actions, but {where} has {obs_size} and {actions}: {hint}")
        game = getattr(getattr(env, "unwrapped", env), "game", None)
        if self.features is not None and getattr(game, "name", self.features.game) != self.features.game:
            raise ValueError(f"{label} reads the observation features {self.features.name} of {self.features.game}, "
                             f"but {where} plays {game.name}")

    def __repr__(self) -> str:
        sizes = [self.input_size] + [w.shape[1] for w, _ in self.layers]
        mode = "deterministic" if self.deterministic else "sampled"
        extra = f", features {self.features.name}" if self.features is not None else ""
        return f"PolicyAgent({'-'.join(map(str, sizes))}, {self.activation}, {mode}{extra})"

    # ------------------------------------------------------------------ files

    @classmethod
    def from_sb3(cls, model, deterministic: bool = True, seed: int | None = None,
                 metadata: dict | None = None, features: ObservationFeatures | None = None) -> "PolicyAgent":
        """The actor of a MaskablePPO model (or its policy) with an MLP over flat observations (and ``features``
        after them, if it was trained on some)."""
        policy = getattr(model, "policy", model)
        extractor = getattr(policy, "pi_features_extractor", None) or getattr(policy, "features_extractor", None)
        if type(extractor).__name__ != "FlattenExtractor" or not hasattr(policy, "mlp_extractor"):
            raise PolicyLoadError(f"PolicyAgent plays MlpPolicy actors over flat observations; "
                                  f"this policy uses {type(extractor).__name__}")
        layers, activations = [], set()
        for module in list(policy.mlp_extractor.policy_net) + [policy.action_net]:
            kind = type(module).__name__
            if kind == "Linear":
                layers.append((module.weight.detach().cpu().numpy().T.copy(),
                               module.bias.detach().cpu().numpy().copy()))
            elif kind.lower() in ACTIVATIONS:
                activations.add(kind.lower())
            else:
                raise PolicyLoadError(f"PolicyAgent cannot run a {kind} layer")
        if len(activations) > 1:
            raise PolicyLoadError(f"PolicyAgent runs one activation throughout; this policy mixes {sorted(activations)}")
        activation = activations.pop() if activations else "identity"
        return cls(layers, activation, deterministic=deterministic, seed=seed, metadata=metadata, features=features)

    def save(self, path: str | os.PathLike) -> Path:
        """Write the policy as an ``.npz`` that :meth:`load` reads with numpy only: all or nothing, never through
        a symbolic link, and over an existing file only when that is a policy too (else
        :class:`gemenvs.files.WriteRefused`)."""
        from gemenvs.files import WriteRefused, existing_head, user_folder, write_file

        path = Path(path)
        if path.suffix != ".npz":
            raise ValueError(f"PolicyAgent.save writes .npz files; got {path}")
        arrays = {}
        for k, (w, b) in enumerate(self.layers):
            arrays[f"weight_{k}"], arrays[f"bias_{k}"] = w, b
        header = {"format": "gemenvs-policy", "version": 1, "activation": self.activation,
                  "layers": len(self.layers), "metadata": self.metadata}
        folder = user_folder(path)
        if existing_head(folder, path.name, 4) is not None and not _is_policy_npz(folder / path.name):
            raise WriteRefused(f"{path} exists and is not a policy file; refusing to overwrite it")
        buffer = io.BytesIO()
        write_npz(buffer, {"header": np.array(json.dumps(header)), **arrays})
        write_file(folder, path.name, buffer.getvalue())
        return path

    @classmethod
    def load(cls, path: str | os.PathLike, deterministic: bool = True, seed: int | None = None) -> "PolicyAgent":
        """Read a MaskablePPO ``.zip`` or a PolicyAgent ``.npz``; a missing or unreadable file is a clear error."""
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"no policy file at {path}")
        if path.suffix == ".npz":
            return cls._load_npz(path, deterministic, seed)
        if path.suffix == ".zip":
            return cls._load_zip(path, deterministic, seed)
        raise PolicyLoadError(f"{path}: a policy is a .zip saved by MaskablePPO or an .npz saved by PolicyAgent.save")

    @classmethod
    def _load_npz(cls, path: Path, deterministic: bool, seed: int | None) -> "PolicyAgent":
        with _open_model(path, "PolicyAgent .npz file", f"no policy file at {path}") as f:
            _check_zip(f, path, None, "PolicyAgent .npz file")
            try:
                return cls._read_npz(f, path, deterministic, seed)
            except PolicyLoadError:
                raise
            except Exception as e:  # zipfile, pickle, KeyError, JSON, shape errors: all mean "not a policy"
                raise PolicyLoadError(f"{path} is not a readable PolicyAgent .npz file "
                                      f"({type(e).__name__}: {' '.join(str(e).split())})") from None

    @classmethod
    def _read_npz(cls, f: BinaryIO, path: Path, deterministic: bool, seed: int | None) -> "PolicyAgent":
        """The policy of an open ``.npz`` whose members were checked by :func:`_check_zip`."""
        with np.load(f, allow_pickle=False) as data:
            header = _plain_json(str(data["header"]), f"{path}: header")
            if not isinstance(header, dict) or header.get("format") != "gemenvs-policy":
                raise ValueError("not a gemenvs policy")
            layers = [(data[f"weight_{k}"], data[f"bias_{k}"]) for k in range(int(header["layers"]))]
        metadata = header.get("metadata") or {}
        features = features_from_dict(metadata["features"]) if "features" in metadata else None
        return cls(layers, header["activation"], deterministic=deterministic, seed=seed, metadata=metadata,
                   features=features)

    @classmethod
    def _load_zip(cls, path: Path, deterministic: bool, seed: int | None) -> "PolicyAgent":
        data, params = read_sb3_zip(path, ("policy",))
        policy = params.get("policy")
        if policy is None:
            raise PolicyLoadError(f"{path} holds no policy.pth, so it is not a saved MaskablePPO model")
        try:
            layers = _actor_layers(policy)
            activation = _activation_name(data) if len(layers) > 1 else "identity"  # one layer: none applies
            return cls(layers, activation, deterministic=deterministic, seed=seed, metadata={"source": str(path)})
        except (ValueError, KeyError, TypeError) as e:
            raise PolicyLoadError(f"{path}: {e}") from None


#: SB3 zip members read as state dicts (each a torch-saved dict of tensors)
_STATE_DICT_NAMES = ("policy", "policy.optimizer")
# The caps of a model file (guards against zip bombs). A model of the shipped configs is at most about
# 10 MB; the limits of ppo.net_arch (at most 4 hidden layers of at most 1024) keep a Gem Jam policy.pth
# under 60 MB and its optimizer state under 120 MB.
#: the most bytes one member read from a model file may expand to
MAX_MEMBER_BYTES = 128 * 2**20
#: the most bytes the members read from one model file may expand to in all (a zip's data and state dicts,
#: every member of an .npz)
MAX_READ_BYTES = 256 * 2**20
#: the largest model file
MAX_MODEL_FILE_BYTES = 256 * 2**20
#: the most members a model file may list (a MaskablePPO zip has 6, a PolicyAgent .npz two a layer and a header)
MAX_MEMBERS = 1_000
#: the deepest JSON nesting of a zip's data or an .npz header (SB3 writes 4 levels)
MAX_JSON_DEPTH = 64


def _open_model(path: Path, what: str, missing: str) -> BinaryIO:
    """``path`` opened for reading if it is a regular file of at most :data:`MAX_MODEL_FILE_BYTES`; a missing file
    is a FileNotFoundError saying ``missing``, any other problem a one-line :class:`PolicyLoadError`."""
    try:
        return open_regular(path, MAX_MODEL_FILE_BYTES, what)
    except FileNotFoundError:
        raise FileNotFoundError(missing) from None
    except FileProblem as e:
        raise PolicyLoadError(str(e)) from None
    except OSError as e:
        raise PolicyLoadError(f"{path}: cannot read the file ({e.strerror or e})") from None


def _check_zip(f: BinaryIO, path: Path, read: list[str] | None, what: str) -> None:
    """Refuse a zip archive (open as ``f``) that lists more than :data:`MAX_MEMBERS` members, or whose members
    to be read (``read``: those of these names it has; None: every member) expand past :data:`MAX_MEMBER_BYTES`
    each or :data:`MAX_READ_BYTES` in all, by the sizes its directory declares. Leaves ``f`` at its start."""
    end_record = getattr(zipfile, "_EndRecData", None)  # the count, read before zipfile builds every entry
    if end_record is not None:
        record = end_record(f)
        if record and record[zipfile._ECD_ENTRIES_TOTAL] > MAX_MEMBERS:
            raise PolicyLoadError(f"{path}: {record[zipfile._ECD_ENTRIES_TOTAL]:,} members, more than the "
                                  f"{MAX_MEMBERS:,} a model file may have")
    f.seek(0)
    try:
        with zipfile.ZipFile(f) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as e:
        raise PolicyLoadError(f"{path} is not a readable {what} ({type(e).__name__}: {e})") from None
    finally:
        f.seek(0)
    if len(infos) > MAX_MEMBERS:
        raise PolicyLoadError(f"{path}: {len(infos):,} members, more than the {MAX_MEMBERS:,} a model file may have")
    chosen = [i for i in infos if read is None or i.filename in read]
    for info in chosen:
        if info.file_size > MAX_MEMBER_BYTES:
            raise PolicyLoadError(f"{path}: member {info.filename!r} expands to {info.file_size:,} bytes, more than "
                                  f"the {MAX_MEMBER_BYTES:,} a member may have")
    total = sum(i.file_size for i in chosen)
    if total > MAX_READ_BYTES:
        raise PolicyLoadError(f"{path}: the members read ({', '.join(i.filename for i in chosen)}) expand to "
                              f"{total:,} bytes in all, more than the {MAX_READ_BYTES:,} a model may have")


def _plain_json(text: str | bytes, where: str) -> Any:
    """``json.loads(text)``, nested at most :data:`MAX_JSON_DEPTH` levels (else a one-line PolicyLoadError)."""
    try:
        value = json.loads(text)
    except RecursionError:
        value = None
    else:
        if json_depth(value) <= MAX_JSON_DEPTH:
            return value
    raise PolicyLoadError(f"{where}: JSON nested deeper than {MAX_JSON_DEPTH} levels")


def read_sb3_zip(path: str | os.PathLike, state_dicts: tuple[str, ...] = _STATE_DICT_NAMES) -> tuple[dict, dict]:
    """The plain JSON fields of an SB3 ``.zip``'s ``data`` and the state dicts named in ``state_dicts``,
    read without running any code from the file.

    ``data`` is parsed with :func:`json.loads`: an entry SB3 pickled (``{":serialized:": ...}``) keeps
    only its plain-text fields, and its pickle is never decoded. Each ``NAME.pth`` of ``state_dicts``
    is read with ``torch.load(weights_only=True)``; one holding anything but tensors and plain
    containers (a pickle that would run code) is refused. Any problem is a :class:`PolicyLoadError`.
    """
    path = Path(path)
    with _open_model(path, "saved MaskablePPO model", f"no model file at {path}") as f:
        return _read_sb3_zip(f, path, state_dicts)


def _read_sb3_zip(f: BinaryIO, path: Path, state_dicts: tuple[str, ...]) -> tuple[dict, dict]:
    """:func:`read_sb3_zip` of the open file ``f``."""
    if not zipfile.is_zipfile(f):
        raise PolicyLoadError(f"{path} is not a zip archive, so not a saved MaskablePPO model")
    try:
        import torch
    except ImportError as e:  # pragma: no cover - the train extra is missing
        raise ImportError("loading a .zip policy needs torch: pip install 'gemenvs[train]'") from e
    _check_zip(f, path, ["data"] + [f"{name}.pth" for name in state_dicts], "saved MaskablePPO model")
    try:
        with zipfile.ZipFile(f) as archive:
            infos = {info.filename: info for info in archive.infolist()}
            if "data" not in infos:
                raise PolicyLoadError(f"{path} has no 'data' member, so it is not a saved MaskablePPO model")
            raw = _plain_json(archive.read("data").decode("utf-8"), f"{path}: data")
            if not isinstance(raw, dict):
                raise PolicyLoadError(f"{path}: 'data' is not a JSON object")
            data = {key: ({k: v for k, v in value.items() if k != ":serialized:"}
                          if isinstance(value, dict) and ":serialized:" in value else value)
                    for key, value in raw.items()}
            params = {}
            for name in state_dicts:
                member = f"{name}.pth"
                if member not in infos:
                    continue
                buffer = io.BytesIO(archive.read(member))
                try:
                    state = torch.load(buffer, map_location="cpu", weights_only=True)
                except Exception as e:  # torch's own message advises loading unsafely: not repeated
                    found = re.search(r"Unsupported global: GLOBAL ([\w.]+)", str(e))
                    what = f"it calls {found.group(1)}" if found else type(e).__name__
                    raise PolicyLoadError(f"{path}: {member} is not a plain state dict of tensors ({what}); a "
                                          f"pickled object there could run code, so the file is refused") from None
                if not isinstance(state, dict):
                    raise PolicyLoadError(f"{path}: {member} is not a state dict")
                params[name] = state
            return data, params
    except PolicyLoadError:
        raise
    except Exception as e:  # zipfile, JSON or UTF-8 errors: all mean "not a model"
        raise PolicyLoadError(f"{path} could not be read as a saved MaskablePPO model "
                              f"({type(e).__name__}: {' '.join(str(e).split())})") from None


def _actor_layers(state: dict) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(weight, bias)`` of the actor's linear layers (``mlp_extractor.policy_net.*``, then ``action_net``)."""
    import torch

    if not all(isinstance(k, str) for k in state):
        raise ValueError(f"policy.pth's keys must be parameter names (strings); found {_keys_text(state)}")
    extra = sorted(k for k in state if not k.startswith(("mlp_extractor.", "action_net.", "value_net.")) and k != "log_std")
    if extra:
        raise ValueError(f"PolicyAgent plays MlpPolicy actors over flat observations; this policy also has "
                         f"parameters {extra[:3]} (a features extractor or another policy class)")
    hidden = sorted({int(m.group(1)) for k in state if (m := re.fullmatch(r"mlp_extractor\.policy_net\.(\d+)\.weight", k))})
    names = [f"mlp_extractor.policy_net.{i}" for i in hidden] + ["action_net"]
    missing = [key for name in names for key in (f"{name}.weight", f"{name}.bias") if key not in state]
    if missing:
        raise ValueError(f"policy.pth has no {', '.join(missing)}: expected an MlpPolicy actor, a weight and a "
                         f"bias for each mlp_extractor.policy_net.<k> and for action_net; found {_keys_text(state)}")
    layers = []
    for name in names:
        w, b = state[f"{name}.weight"], state[f"{name}.bias"]
        if not (isinstance(w, torch.Tensor) and isinstance(b, torch.Tensor)) or w.ndim != 2 or b.shape != (w.shape[0],):
            raise ValueError(f"{name} is not a linear layer's weight and bias")
        layers.append((w.detach().to(torch.float32).numpy().T.copy(), b.detach().to(torch.float32).numpy().copy()))
    return layers


def _keys_text(state: dict, shown: int = 8) -> str:
    """The first keys of a state dict, in one short line."""
    keys = sorted(map(repr, state)) if not all(isinstance(k, str) for k in state) else sorted(state)
    text = ", ".join(str(k)[:80] for k in keys[:shown])
    return f"{text}{', ...' if len(keys) > shown else ''} ({len(keys)} keys)" if keys else "no keys"


def _activation_name(data: dict) -> str:
    """The actor's activation from the plain-text ``policy_kwargs.activation_fn`` (SB3's default: tanh)."""
    kwargs = data.get("policy_kwargs")
    text = kwargs.get("activation_fn") if isinstance(kwargs, dict) else None
    if text is None:
        return "tanh"
    m = re.fullmatch(r"<class 'torch\.nn\.modules\.activation\.(\w+)'>", str(text))
    name = m.group(1).lower() if m else None
    if name not in ACTIVATIONS:
        raise ValueError(f"PolicyAgent cannot run the activation {text!r}; it runs {', '.join(ACTIVATIONS)}")
    return name
