"""MegaGem's bidders: a truthful bidder, a shading, budgeting heuristic bidder and its tuned family.

The package's modules, by what they are:

* :mod:`~gemenvs.agents.megagem.decode`: a seat's observation read back into named quantities
  (:class:`Decoder`, :class:`View`).
* :mod:`~gemenvs.agents.megagem.valuation`: what gems and lots are worth to a seat (expected
  final gem values, mission gains), scalar and for many rows at once.
* :mod:`~gemenvs.agents.megagem.bidders`: the scalar bidders, :class:`TruthfulAgent` and
  :class:`HeuristicBidder`.
* :mod:`~gemenvs.agents.megagem.tuned`: :class:`ParametricBidder` (HeuristicBidder's choices as
  named weights) and :class:`TunedBidder`, its tuned member;
  :mod:`~gemenvs.agents.megagem.family`: randomised members around it (:class:`FamilyBidder`).
* :mod:`~gemenvs.agents.megagem.batched`: the batched twins, making a scalar bidder's choices for many
  rows or games at once (:class:`TruthfulRows`, :class:`BidderGames`); each scalar bidder names its twin
  in ``batched_twin``.

Build a bidder for an environment with ``HeuristicBidder.for_env(env)``, or from a game with
``HeuristicBidder(spec=game.spec, action_spec=game.action_spec)``; by name with
``gemenvs.agents.make_agent("megagem", "heuristic", env)``.
"""
from gemenvs.agents.megagem.batched import NEUTRAL_WEIGHTS, BidderGames, TruthfulRows
from gemenvs.agents.megagem.bidders import HeuristicBidder, TruthfulAgent
from gemenvs.agents.megagem.decode import Decoder, View
from gemenvs.agents.megagem.family import FamilyBidder
from gemenvs.agents.megagem.tuned import DEFAULT_WEIGHTS, WEIGHTS, ParametricBidder, TunedBidder, WeightsError
from gemenvs.agents.megagem.valuation import hypergeom_pmf, private_values, public_values

__all__ = ["DEFAULT_WEIGHTS", "NEUTRAL_WEIGHTS", "WEIGHTS", "BidderGames", "Decoder", "FamilyBidder", "HeuristicBidder",
           "ParametricBidder", "TruthfulAgent", "TruthfulRows", "TunedBidder", "View", "WeightsError",
           "hypergeom_pmf", "private_values", "public_values"]
