"""
# MegaGem

| Import | `from gemenvs import megagem_v0` |
|---|---|
| Actions | Discrete |
| Parallel API | Yes (`megagem_v0.parallel_env`) |
| Agents | `agents = ['player_0', ..., 'player_{n-1}']`, n = 3, 4 or 5 |
| Action shape | (1,) |
| Action values | Discrete(max_bid + 6): 91 for 4 players, 101 for 3, 86 for 5 |
| Observation shape | dict: `observation` float32 vector, `action_mask` int8 vector |
| Observation size | 227 (3 players), 244 (4 players), 261 (5 players) |

Sealed-bid auctions for gems whose final values depend on the gem cards hidden in the
players' hands. See `docs/megagem.md` for the rules as implemented, and the full tables of
observation slots (`env.observation_spec`) and action ids.

## Options
`num_players` (3-5, default 4), `value_chart` ("A"-"E" or "random"), `tie_break` ("rulebook" or
"queue"), `reveal_after` ("every_auction" or "treasure_only"), `two_pairs` ("any" or
"distinct"), `public_bids` (bool), `reward` ("win", "score", "rank", "margin"),
`illegal_action` ("raise" or "terminate"), `render_mode` ("ansi", "human", "rgb_array" or None).

## Actions
Named ranges (`env.unwrapped.action_spec`): `bid[k]`, ids `0..max_bid`, bids k coins (max_bid =
starting coins + 60); `reveal[colour]`, the next five ids, reveals a gem of colour Blue, Green,
Pink, Purple, Yellow from hand. The mask is exact and all zero for an agent that is not to act.
A decision with one legal action (a bid limit of 0; a one-colour hand at a reveal) is played by
the engine and logged as forced: the agent is not asked.

## Rewards
At the end only: "win" +1 to every top scorer, -1 to the others; "score" final score / 100;
"rank" +1 first .. -1 last; "margin" (own score - best other score) / 100. `infos` at the
end carry `score`, `score_breakdown` (coins, gems, missions, loans, investments, total),
`scores` and `winners`.

## Version history
* v0: first release. Forced decisions are played by the engine (and logged in ``state.log``),
  never put to an agent.
"""
from gemenvs.megagem import ENTRY

_envs = ENTRY.env_functions()
raw_env, env, parallel_raw_env, parallel_env = _envs.raw_env, _envs.env, _envs.parallel_raw_env, _envs.parallel_env

__all__ = ["ENTRY", "env", "parallel_env", "parallel_raw_env", "raw_env"]
