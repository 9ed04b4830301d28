#!/usr/bin/env python3
"""A gemenvs agent in another program: picks a random legal action (Python, standard library only).

It speaks the JSON-lines protocol of docs/protocol.md: one JSON object a line in, one answer a line out
for every "decide" message. Play it in any tool that takes an agent:

    gemenvs-tournament --game megagem --agents heuristic "cmd:python examples/random_agent.py" --games 12
    gemenvs play gem --opponents "cmd:python examples/random_agent.py"

or run it on its own, listening on a local socket, and name the socket as the agent:

    python examples/random_agent.py --serve tcp:127.0.0.1:7000     # then the agent tcp:127.0.0.1:7000
    python examples/random_agent.py --serve unix:/tmp/agent.sock    # then the agent unix:/tmp/agent.sock

Anything it wants to say goes to stderr (stdout carries only answers); the suite keeps stderr in a log.
"""
import argparse
import json
import os
import random
import socketserver
import sys


def play(lines, answer, rng):
    """Answer every "decide" of the messages in ``lines`` with a random legal action; return at end of input."""
    for line in lines:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "start":
            print(f"start: {message['game']}, seat {message['seat']} of {message['num_players']}", file=sys.stderr)
        elif kind == "decide":
            answer({"action": rng.choice(message["legal"])})
        elif kind == "end":
            print(f"end: scores {message['scores']}, winners {message['winners']}", file=sys.stderr)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=None, help="seed of the choices (default: fresh)")
    parser.add_argument("--serve", metavar="tcp:HOST:PORT|unix:PATH", default=None,
                        help="listen on a local socket, a player of its own for each connection, instead of stdin/stdout")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    if args.serve is None:
        def answer(obj):
            sys.stdout.write(json.dumps(obj) + "\n")
            sys.stdout.flush()

        play(sys.stdin, answer, rng)
        return 0

    class Session(socketserver.StreamRequestHandler):
        def handle(self):
            def answer(obj):
                self.wfile.write((json.dumps(obj) + "\n").encode())
                self.wfile.flush()

            play((line.decode() for line in self.rfile), answer, random.Random(rng.random()))

    kind, _, where = args.serve.partition(":")
    if kind == "tcp":
        host, _, port = where.rpartition(":")
        server = socketserver.ThreadingTCPServer((host or "127.0.0.1", int(port)), Session)
    elif kind == "unix":
        if os.path.exists(where):
            os.unlink(where)
        server = socketserver.ThreadingUnixStreamServer(where, Session)
    else:
        parser.error("--serve takes tcp:HOST:PORT or unix:PATH")
    server.daemon_threads = True
    print(f"listening on {args.serve}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
