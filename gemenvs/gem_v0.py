"""
# GEM

| Import | `from gemenvs import gem_v0` |
|---|---|
| Actions | Discrete |
| Parallel API | Yes (`gem_v0.parallel_env`; one seat acts per step) |
| Agents | `agents = ['player_0', ..., 'player_{n-1}']`, n = 2, 3 or 4 |
| Action shape | (1,) |
| Action values | Discrete(122) with the default manifest (bids 0..62, pass, 18 take, 3 + 18 pay, 18 reinvest, end) |
| Observation shape | dict: `observation` float32 vector, `action_mask` int8 vector |
| Observation size | 352 (2 players), 413 (3 players), 474 (4 players) |

Once-around auctions for gem cards, paid for by turning one's own coin and gem cards from
INVESTED to LEVERAGED; LEVERAGED gem cards score nothing unless reinvested. Six rounds, one
stack of cards each; points for gems on INVESTED cards and for majorities of each gem type.
See `docs/gem.md` for the rules as implemented and the full tables of observation slots
(`env.observation_spec`) and action ids.

## Options
`num_players` (2-4, default 3), `reinvest_cost` ("value_minus_one" or "value"),
`opener_may_pass` (bool, default False), `manifest` (None for the standard cards, a JSON file
path or a dict in the manifest format), `reward` ("win", "score", "rank", "margin"),
`illegal_action` ("raise" or "terminate"), `render_mode` ("ansi", "human" or None).

## Observation
Everything public, seat-relative (entry 0 is the observer): the decision and who takes it,
round, the card table (gems, INVESTED value, reinvestment cost), where every gem card lies and
which side is up, coin cards, capital (bid limits), gems and points per player, this auction's
bids, what the winner still owes, the reinvesting player's credit. Face-down stacks show only
their sizes.

## Legal-action mask
Exact, and all zero for an agent that is not to act. Decisions with a single legal action
(a bidder that cannot outbid, the last face-up card, nothing to reinvest) are played by the
engine, so every mask an agent sees has at least two legal actions.

## Actions
Named ranges of `env.unwrapped.action_spec` (ids with the standard manifest, for every player
count): `bid` 0..62 (bid that many), `pass` 63, `take` 64..81 (take face-up gem card 0..17),
`pay_coin` 82..84 (pay with own coin card 1, 2, 3), `pay_card` 85..102 (pay with own gem card
0..17), `reinvest` 103..120 (reinvest own gem card 0..17), `end` 121 (end one's reinvestment).
When each is legal, and the generated tables: `docs/gem.md`, "Action ids".

## Rewards
At the end only: "win" +1 to the winners (most points, then most gems on INVESTED cards), -1 to
the others; "score" points / 30; "rank" +1 first .. -1 last, ordered as for "win"; "margin"
(own points - best other points) / 30. `infos` at the end carry `score`, `score_breakdown`
(gems, majorities, majority per gem type, total), `scores` and `winners`.

## Version history
* v0: first release.
"""
from gemenvs.gem import ENTRY

_envs = ENTRY.env_functions()
raw_env, env, parallel_raw_env, parallel_env = _envs.raw_env, _envs.env, _envs.parallel_raw_env, _envs.parallel_env

__all__ = ["ENTRY", "env", "parallel_env", "parallel_raw_env", "raw_env"]
