"""
# Gem Jam

| Import | `from gemenvs import gemjam_v0` |
|---|---|
| Actions | Discrete |
| Parallel API | Yes (`gemjam_v0.parallel_env`; one seat acts per step) |
| Agents | `agents = ['player_0', ..., 'player_{n-1}']`, n = 2, 3 or 4 (default 3) |
| Action shape | (1,) |
| Action values | Discrete(232) for 2 players, 233 for 3, 234 for 4 (default manifest) |
| Observation shape | dict: `observation` float32 vector, `action_mask` int8 vector |
| Observation size | 2491 (2 players), 3187 (3 players), 3883 (4 players) |

Collect four completed gem sets in your Gem Shrine; bank gold and spells in your Vault; cast
Gem Jams to make opponents pay, steal and destroy gems and sets, and answer spells with Counter
Spell, Diabolic Denial and Chaos Cube. See `docs/gemjam.md` for the rules as implemented and the
full tables of observation slots (`env.observation_spec`) and action ids
(`env.unwrapped.game.action_spec`).

## Options
`num_players` (2-4, default 3), `turn_decision_limit` (None, the Relaxed Game, or a number of
top-level decisions per turn before the timer penalty), `sirens_call` (bool, default False:
the 3 optional adult-mode cards), `max_rounds` (default 100: the game then ends scored as a
deck-out), `manifest` (None for the reference deck, a JSON file path or a dict in the manifest
format), `reward` ("win", "score", "rank", "margin"), `illegal_action` ("raise" or
"terminate"), `render_mode` ("ansi", "human" or None).

## Observation
Seat-relative (row 0 is the observer): the observer's own pending decision and its choices so
far in a composite decision (never who else is deciding), turn state, own hand and Vault, hand and Vault sizes,
cards the observer was shown in other hands and Vaults, every Shrine set (type, gems, complete,
guarded, broken), completed sets, the Discard Pile, pile sizes, the response stack, cards shown
now, a payment in progress, cards in transit, the rule options. Never another player's hand or
Vault, the King's Vault or the Draw Pile.

## Legal-action mask
Exact, and all zero for an agent that is not to act. Every decision is one masked choice; a
composite decision (a card, then its type, set, target player, target set, card ...) is a
sequence of them, and each step only offers ids that lead to a complete legal choice. Decisions
with a single legal action (a pass with no reaction in hand) are played by the engine; nothing
another seat sees tells them from chosen ones.

## Actions
Named ranges (`env.unwrapped.game.action_spec`): `play[card]`, `bank[card]`, `end_plays`,
`adjust[none|move|swap]`, `gem_type[type]`, `target_player[self|+1|+2|+3]`, `king_vault`,
`set[slot]`, `new_set`, `card[card]`, `yes`, `pass`.

## Rewards
At the end only: "win" +1 to the winner(s) (four sets; or most completed sets at a deck-out or
at max_rounds, ties sharing), -1 to the others; "score" completed sets / 4; "rank" +1 first ..
-1 last (winners first, then completed sets); "margin" (own sets - best other sets) / 4.
`infos` at the end carry `score`, `score_breakdown` (completed_sets, won), `scores`, `winners`
and `end_reason` ("four_sets", "deck_out", "max_rounds").

## Game log
Spells cast, countered, recast and resolved, payments (cards paid, amounts forgiven), discards
and Siren's Call events, as sentences: in the AEC view `infos[agent]["game_log"]` holds those
the agent may see since its own last decision; in the Parallel view, those of the step; the
whole log as a seat may see it is `env.unwrapped.game_log(agent)`.

## Version history
* v0: first release.
"""
from gemenvs.gemjam import ENTRY

_envs = ENTRY.env_functions()
raw_env, env, parallel_raw_env, parallel_env = _envs.raw_env, _envs.env, _envs.parallel_raw_env, _envs.parallel_env

__all__ = ["ENTRY", "env", "parallel_env", "parallel_raw_env", "raw_env"]
