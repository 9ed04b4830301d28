"""PolicyAgent: a trained policy playing through the same :class:`~gemenvs.agents.base.Agent` protocol.

A policy is the actor of a MaskablePPO ``MlpPolicy``: linear layers with an activation between
them, ending in one logit per action. It plays in plain numpy (no torch at play time), so
frozen copies are cheap to run inside environment worker processes.

    agent = PolicyAgent.load("runs/megagem_selfplay/best_model.zip")          # deterministic
    agent = PolicyAgent.load("runs/megagem_selfplay/best_model.zip", deterministic=False, seed=0)

``load`` reads a MaskablePPO ``.zip`` (needs stable-baselines3 and sb3-contrib) or an ``.npz``
written by :meth:`PolicyAgent.save` (needs numpy only).
"""
from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import numpy as np

from gemenvs.agents.base import BaseAgent, legal_actions

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


class PolicyAgent(BaseAgent):
    """Plays the most likely legal action (``deterministic=True``) or samples the masked distribution.

    Args:
        layers: ``(weight, bias)`` per linear layer, weight of shape ``(inputs, outputs)``; the last
            layer outputs one logit per action.
        activation: name of the activation after every layer but the last (see :data:`ACTIVATIONS`).
        deterministic: play the argmax of the masked logits instead of sampling them.
        seed: seed of the sampling RNG.
        metadata: free-form facts saved with the policy (game, options, training step...).
    """

    name = "policy"

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], activation: str = "tanh",
                 deterministic: bool = True, seed: int | None = None, metadata: dict | None = None):
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
        super().__init__(num_actions=self.layers[-1][0].shape[1], seed=seed)

    @property
    def observation_size(self) -> int:
        """Length of the observation vector the policy reads."""
        return int(self.layers[0][0].shape[0])

    # ------------------------------------------------------------------ playing

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """Unmasked action logits for one observation."""
        x = np.asarray(observation, dtype=np.float32)
        if x.shape != (self.observation_size,):
            raise ValueError(f"this policy reads observations of shape ({self.observation_size},), "
                             f"got {x.shape}: was it trained on another game or player count?")
        last = len(self.layers) - 1
        for k, (w, b) in enumerate(self.layers):
            x = x @ w + b
            if k < last:
                x = self._act_fn(x)
        return x

    def action_probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The policy's probability of every action, zero on illegal ones."""
        legal = legal_actions(action_mask)
        z = self.logits(observation)[legal].astype(np.float64)
        p = np.exp(z - z.max())
        out = np.zeros(self.num_actions)
        out[legal] = p / p.sum()
        return out

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        z = self.logits(observation)[legal]
        if self.deterministic:
            return int(legal[int(np.argmax(z))])
        # Gumbel-max trick: argmax(logits + Gumbel noise) is a sample of softmax(logits)
        return int(legal[int(np.argmax(z + self.rng.gumbel(size=legal.size)))])

    def __repr__(self) -> str:
        sizes = [self.observation_size] + [w.shape[1] for w, _ in self.layers]
        mode = "deterministic" if self.deterministic else "sampled"
        return f"PolicyAgent({'-'.join(map(str, sizes))}, {self.activation}, {mode})"

    # ------------------------------------------------------------------ files

    @classmethod
    def from_sb3(cls, model, deterministic: bool = True, seed: int | None = None,
                 metadata: dict | None = None) -> "PolicyAgent":
        """The actor of a MaskablePPO model (or its policy) with an MLP over flat observations."""
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
        return cls(layers, activation, deterministic=deterministic, seed=seed, metadata=metadata)

    def save(self, path: str | os.PathLike) -> Path:
        """Write the policy as an ``.npz`` that :meth:`load` reads with numpy only."""
        path = Path(path)
        if path.suffix != ".npz":
            raise ValueError(f"PolicyAgent.save writes .npz files; got {path}")
        arrays = {}
        for k, (w, b) in enumerate(self.layers):
            arrays[f"weight_{k}"], arrays[f"bias_{k}"] = w, b
        header = {"format": "gemenvs-policy", "version": 1, "activation": self.activation,
                  "layers": len(self.layers), "metadata": self.metadata}
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(tmp, header=np.array(json.dumps(header)), **arrays)
        os.replace(tmp, path)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike, deterministic: bool = True, seed: int | None = None) -> "PolicyAgent":
        """Read a MaskablePPO ``.zip`` or a PolicyAgent ``.npz``; a missing or unreadable file is a clear error."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no policy file at {path}")
        if path.suffix == ".npz":
            return cls._load_npz(path, deterministic, seed)
        if path.suffix == ".zip":
            return cls._load_zip(path, deterministic, seed)
        raise PolicyLoadError(f"{path}: a policy is a .zip saved by MaskablePPO or an .npz saved by PolicyAgent.save")

    @classmethod
    def _load_npz(cls, path: Path, deterministic: bool, seed: int | None) -> "PolicyAgent":
        try:
            with np.load(path, allow_pickle=False) as data:
                header = json.loads(str(data["header"]))
                if header.get("format") != "gemenvs-policy":
                    raise ValueError("not a gemenvs policy")
                layers = [(data[f"weight_{k}"], data[f"bias_{k}"]) for k in range(int(header["layers"]))]
            return cls(layers, header["activation"], deterministic=deterministic, seed=seed,
                       metadata=header.get("metadata"))
        except Exception as e:  # zipfile, pickle, KeyError, JSON, shape errors: all mean "not a policy"
            raise PolicyLoadError(f"{path} is not a readable PolicyAgent .npz file ({type(e).__name__}: {e})") from e

    @classmethod
    def _load_zip(cls, path: Path, deterministic: bool, seed: int | None) -> "PolicyAgent":
        if not zipfile.is_zipfile(path):
            raise PolicyLoadError(f"{path} is not a zip archive, so not a saved MaskablePPO model")
        try:
            from sb3_contrib import MaskablePPO
        except ImportError as e:  # pragma: no cover - the train extra is missing
            raise ImportError("loading a .zip policy needs the train extra: pip install 'gemenvs[train]'") from e
        try:
            model = MaskablePPO.load(path, device="cpu")
        except Exception as e:
            raise PolicyLoadError(f"{path} could not be loaded as a MaskablePPO model ({type(e).__name__}: {e})") from e
        return cls.from_sb3(model, deterministic=deterministic, seed=seed, metadata={"source": str(path)})
