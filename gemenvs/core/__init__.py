"""Game-independent machinery: engine protocol, observation specs, rewards, AEC/Parallel envs."""
from gemenvs.core.engine import Game, IllegalActionError, Results
from gemenvs.core.spec import ObservationSpec, Slice

__all__ = ["Game", "IllegalActionError", "ObservationSpec", "Results", "Slice"]
