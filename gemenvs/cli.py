"""The ``gemenvs`` command (also ``python -m gemenvs``): play a game yourself, replay a saved game.

    gemenvs play megagem --players 3 --opponents heuristic --seed 7 --save game.jsonl
    gemenvs play megagem --opponents runs/megagem_selfplay/best_model.npz
                                                       (the model of: gemenvs-train configs/megagem/selfplay.yaml)
    gemenvs play gemjam --opponents rule runs/gemjam_selfplay/best_model.zip --seat 1
                                                       (the model of: gemenvs-train configs/gemjam/selfplay.yaml)
    gemenvs play --replay game.jsonl --seat 0          (or --table: the whole table)
    gemenvs replay game.jsonl [--seat K | --table] [--no-pause]
    gemenvs replay game.jsonl --gif game.gif           (or --mp4 game.mp4: needs imageio-ffmpeg)
    gemenvs --version

Every usage or file problem (an unknown game or opponent, a bad option, a corrupt saved game,
a policy that does not fit, an optional extra that a policy file needs) is one line
``gemenvs: error: ...`` on stderr and exit status 2.
Leaving a game (``q`` or end of input) is status 0; Ctrl-C is status 130; a closed output
pipe (``gemenvs replay FILE | head``) ends quietly with status 141.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TextIO

import numpy as np

#: the example lines of ``gemenvs play --help``: every file named is one an example or a documented command writes
_PLAY_LINES = """\
  gemenvs play megagem --players 3 --opponents heuristic --seed 7 --save game.jsonl
  gemenvs play gem --players 2 --opponents greedy
  gemenvs play gemjam --opponents rule random --option max_rounds=5
  gemenvs play megagem --opponents runs/megagem_selfplay/best_model.npz
      (the model that gemenvs-train configs/megagem/selfplay.yaml writes)
  gemenvs play gemjam --opponents runs/gemjam_selfplay/best_model.zip
      (the model that gemenvs-train configs/gemjam/selfplay.yaml writes, also as best_model.npz)
  gemenvs play gem --opponents "cmd:python examples/random_agent.py"
      (a program playing over the JSON-lines protocol of docs/protocol.md, one per seat)
"""
#: the example lines of ``gemenvs replay --help`` (game.jsonl: what ``gemenvs play ... --save game.jsonl`` writes)
_REPLAY_LINES = """\
  gemenvs replay game.jsonl --seat 0
  gemenvs replay game.jsonl --gif game.gif
"""
PLAY_EXAMPLES = "examples:\n" + _PLAY_LINES + """\
at a bidding decision (MegaGem, GEM) type the amount to bid (5 bids 5), elsewhere a choice's number;
any choice also by name (bid 5, reveal pink, play take two); help NAME says what a Gem Jam card does
"""
REPLAY_EXAMPLES = "examples:\n" + _REPLAY_LINES
#: the ``gemenvs --help`` examples
EXAMPLES = "examples:\n" + _PLAY_LINES + _REPLAY_LINES + "  gemenvs --version\n"


class UsageError(ValueError):
    """A command line that cannot be carried out (the message says why, on one line)."""


def game_envs() -> dict[str, str]:
    """Game name (``"megagem"``) -> PettingZoo id (``"gemenvs/MegaGem-v0"``), for every registered game."""
    import gemenvs

    return {e.name: e.env_id for e in gemenvs.entries()}


def build_parser() -> argparse.ArgumentParser:
    """The ``gemenvs`` argument parser (subcommands ``play`` and ``replay``)."""
    from gemenvs.console import add_version_argument

    parser = argparse.ArgumentParser(prog="gemenvs", description="Play the gemenvs games yourself; replay saved games.",
                                     epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version_argument(parser)
    sub = parser.add_subparsers(dest="command", required=True, metavar="{play,replay}")

    play = sub.add_parser("play", help="play a game against baseline agents or trained policies",
                          description="Play MegaGem, GEM or Gem Jam in the terminal against baseline agents or "
                                      "trained policies; or, with --replay, step through a saved game.",
                          epilog=PLAY_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    play.add_argument("game", nargs="?", metavar="GAME", help="megagem, gem or gemjam")
    play.add_argument("--players", type=int, metavar="N", help="number of seats (default: the game's default)")
    play.add_argument("--opponents", nargs="+", metavar="NAME_OR_MODEL",
                      help="a baseline name (random, heuristic, greedy, rule, ...), a policy file (.zip, .npz) or a "
                           "program playing over the JSON-lines protocol (\"cmd:python my_agent.py\", tcp:HOST:PORT, "
                           "unix:PATH): one for every other seat, or one per other seat in seat order")
    play.add_argument("--seat", type=int, metavar="K", help="your seat, 0..N-1 (default 0); with --replay: the view")
    play.add_argument("--seed", type=int, metavar="S", help="the game's seed (default: a random one, shown)")
    play.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                      help="a game option, e.g. value_chart=B or max_rounds=5 (repeatable; VALUE read as JSON "
                           "when it is JSON, else as text)")
    play.add_argument("--save", metavar="FILE", help="write the finished game to FILE (gemenvs saved-game format)")
    play.add_argument("--replay", metavar="FILE", help="step through a saved game instead of playing")
    play.add_argument("--table", action="store_true", help="with --replay: the table seen from no seat (the default)")
    play.add_argument("--no-pause", action="store_true", help="with --replay: print every step without waiting")
    play.add_argument("--no-color", action="store_true", help="plain text even on a terminal")

    replay = sub.add_parser("replay", help="step through a saved game, or write it as an animation",
                            description="Step through a saved game from one seat's view or the whole table "
                                        "(Enter: next step, q: quit), or write it as a GIF or MP4.",
                            epilog=REPLAY_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    replay.add_argument("file", metavar="FILE", help="a saved game (.jsonl)")
    view = replay.add_mutually_exclusive_group()
    view.add_argument("--seat", type=int, metavar="K", help="show only what seat K may see")
    view.add_argument("--table", action="store_true",
                      help="the table seen from no seat: every decision, and what the game's render shows "
                           "without a viewer (the default)")
    replay.add_argument("--no-pause", action="store_true", help="print every step without waiting")
    replay.add_argument("--no-color", action="store_true", help="plain text even on a terminal")
    out = replay.add_mutually_exclusive_group()
    out.add_argument("--gif", metavar="OUT", help="write the game as an animated GIF instead")
    out.add_argument("--mp4", metavar="OUT", help="write the game as an MP4 video instead (needs imageio-ffmpeg)")
    replay.add_argument("--fps", type=float, default=2.0, help="frames per second of --gif/--mp4 (default 2)")
    return parser


def parse_options(items: list[str]) -> dict:
    """``["max_rounds=5", "value_chart=B"]`` -> ``{"max_rounds": 5, "value_chart": "B"}`` (JSON values, else text)."""
    options = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise UsageError(f"--option takes KEY=VALUE (e.g. max_rounds=5); got {item!r}")
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return options


def _opponent_label(spec: str) -> str:
    """A seat's name in the saved game: the baseline name, or the policy file's name."""
    from gemenvs.agents.policy import is_policy_file

    return os.path.basename(spec) if is_policy_file(spec) else spec


def play_command(args: argparse.Namespace, screen) -> int:
    """``gemenvs play``: build the game and the opponents, play, save."""
    import gemenvs
    from gemenvs.play import QuitGame, play_human_game
    from gemenvs.recording import save_game
    from gemenvs.arena.resolve import resolve_agent
    from gemenvs.arena.single_agent import make_aec_env

    if args.replay is not None:
        if args.game is not None:
            raise UsageError("--replay FILE replays a saved game: give no GAME")
        extra = [flag for flag, value in (("--players", args.players), ("--opponents", args.opponents),
                                          ("--seed", args.seed), ("--option", args.option), ("--save", args.save))
                 if value]
        if extra:
            raise UsageError(f"--replay FILE takes --seat K or --table and --no-pause, not {', '.join(extra)}")
        if args.table and args.seat is not None:
            raise UsageError("--replay shows one view: --seat K or --table, not both")
        return replay_view(args.replay, None if args.table else args.seat, args.no_pause, screen)
    if args.table or args.no_pause:
        raise UsageError("--table and --no-pause go with --replay FILE")
    envs = game_envs()
    if args.game is None:
        raise UsageError(f"give a GAME to play: {', '.join(envs)} (or --replay FILE)")
    game_name = args.game.lower()
    if game_name not in envs:
        raise UsageError(f"unknown game {args.game!r}; choose {', '.join(envs)}")
    options = parse_options(args.option)
    if args.players is not None:
        if "num_players" in options:
            raise UsageError("give the number of players once: --players N or --option num_players=N")
        options["num_players"] = args.players
    try:
        env = make_aec_env(envs[game_name], **options)
    except (TypeError, ValueError) as e:  # an unknown option or a value the game refuses
        raise UsageError(f"{game_name}: {e}") from None
    game = env.unwrapped.game
    n = game.num_players
    seat = 0 if args.seat is None else args.seat
    if not 0 <= seat < n:
        raise UsageError(f"--seat must be in 0..{n - 1} for {n} players; got {seat}")
    specs = args.opponents or [gemenvs.entry(game_name).default_opponent]  # (the entry's)
    if len(specs) == 1:
        specs = specs * (n - 1)
    if len(specs) != n - 1:
        raise UsageError(f"--opponents takes one name for every other seat, or one per other seat ({n - 1}); "
                         f"got {len(specs)}")
    seed = args.seed if args.seed is not None else int(np.random.default_rng().integers(0, 2**31))
    agents, names = [None] * n, ["human"] * n
    others = [p for p in range(n) if p != seat]
    for p, spec in zip(others, specs):
        try:
            agents[p] = resolve_agent(game_name, spec, env, seed=seed * 1009 + p)
        except (ValueError, OSError) as e:  # an unknown baseline, an unreadable or unfitting policy file
            raise UsageError(f"opponent {spec!r}: {getattr(e, 'strerror', None) or e}") from None
        names[p] = _opponent_label(spec)
    env.close()
    from gemenvs.agents.base import close_agents

    try:
        state = play_human_game(game, seat, agents, seed, screen, names)
    except (QuitGame, EOFError) as e:
        screen.say("\nend of input: you left the game." if isinstance(e, EOFError) else "You left the game.")
        screen.say(f"(seed {seed}; nothing saved: the game was not finished)" if args.save else f"(seed {seed})")
        return 0
    finally:
        close_agents(agents)  # (a program playing over the protocol is ended)
    if args.save:
        try:
            path = save_game(args.save, game, state, players=names)
        except OSError as e:
            raise UsageError(f"cannot save the game to {args.save}: {e.strerror or e}") from None
        screen.say(f"Saved to {path}; replay it with: gemenvs replay {path}")
    return 0


def replay_view(path: str, seat: int | None, no_pause: bool, screen) -> int:
    """Step through a saved game in the terminal (``gemenvs replay`` without --gif/--mp4)."""
    from gemenvs.play import replay_saved_game
    from gemenvs.recording import load_game

    saved = load_game(path)
    if seat is not None and not 0 <= seat < saved.num_players:
        raise UsageError(f"--seat must be in 0..{saved.num_players - 1} for this {saved.num_players}-player game; "
                         f"got {seat}")
    replay_saved_game(saved, seat, screen, pause=screen.interactive and not no_pause)
    return 0


def write_replay_animation(path: str, out: str, seat: int | None, fps: float, screen) -> int:
    """``gemenvs replay FILE --gif OUT`` / ``--mp4 OUT``: draw every step with gemenvs.pictures."""
    from gemenvs.recording import load_game

    saved = load_game(path)
    if seat is not None and not 0 <= seat < saved.num_players:
        raise UsageError(f"--seat must be in 0..{saved.num_players - 1}; got {seat}")
    if not fps > 0:
        raise UsageError(f"--fps must be positive; got {fps}")
    try:
        from gemenvs.pictures import replay_frames, write_animation
    except ImportError as e:
        raise UsageError(f"animations need gemenvs.pictures, which cannot be imported here ({e})") from None
    frames = replay_frames(saved.game(), saved.seed, saved.log, seat)  # (a bar on a terminal)
    try:
        result = write_animation(frames, out, fps)
    except (ValueError, RuntimeError, ImportError) as e:
        raise UsageError(str(e)) from None
    except OSError as e:
        raise UsageError(f"cannot write {out}: {e.strerror or e}") from None
    screen.say(result.summary())
    return 0


def replay_command(args: argparse.Namespace, screen) -> int:
    """``gemenvs replay``: a terminal replay, or an animation with --gif/--mp4."""
    out = args.gif or args.mp4
    if out is not None:
        return write_replay_animation(args.file, out, args.seat, args.fps, screen)
    return replay_view(args.file, args.seat, args.no_pause, screen)


def _error(e: BaseException, stderr: TextIO) -> int:
    """Print one ``gemenvs: error:`` line for ``e``; the exit status 2."""
    text = " ".join(str(e).split()) or type(e).__name__
    print(f"gemenvs: error: {text}", file=stderr)
    return 2


def _silence(stream: TextIO) -> None:
    """Point a closed pipe's file descriptor at /dev/null, so Python's exit flush does not fail again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def main(argv: list[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None,
         stderr: TextIO | None = None) -> int:
    """Entry point of ``gemenvs`` and ``python -m gemenvs``; returns the exit status (streams: for tests)."""
    from gemenvs.console import extra_hint
    from gemenvs.play import Screen
    from gemenvs.recording import RecordingError

    stderr = stderr if stderr is not None else sys.stderr
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # argparse printed the usage and its error (or --help)
        return int(e.code or 0)
    screen = Screen(stdin, stdout, color=False if args.no_color else None)
    try:
        if args.command == "play":
            return play_command(args, screen)
        return replay_command(args, screen)
    except KeyboardInterrupt:
        screen.say("\ninterrupted.")
        return 130
    except BrokenPipeError:  # the reader went away (gemenvs replay FILE | head): stop quietly
        _silence(screen.stdout)
        return 141
    except (UsageError, RecordingError) as e:
        return _error(e, stderr)
    except ImportError as e:  # a policy file whose loading needs an extra (.zip: torch); else a bug: raised
        hint = extra_hint(e)
        if hint is None:
            raise
        return _error(UsageError(hint), stderr)


if __name__ == "__main__":
    sys.exit(main())
