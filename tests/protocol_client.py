"""Protocol clients for the tests, one per behaviour: ``python tests/protocol_client.py MODE [ARG]``.

Every mode writes its process id to ``$PROTOCOL_CLIENT_PIDS/<pid>`` when that variable is set, so a test can
check that no client outlives its match. Modes: ``random``; ``label`` (answers the first legal action by its
label); ``sleep S`` (sleeps S seconds before every answer); ``hang`` (a grandchild in its group, then sleeps);
``garbage`` (an answer that is not JSON); ``garbage-once`` (that once, then legal answers); ``illegal`` (an id
that is never legal); ``exit K`` (exits at its K-th decision); ``flood`` (a line that never ends); ``chatty``
(two answers to every decide, in one write); ``heuristic`` (HeuristicBidder's choice, from the observation it is sent);
``record PATH`` (every message it gets appended to PATH, random answers).
"""
import json
import os
import random
import subprocess
import sys
import time


def main():
    mode = sys.argv[1]
    arg = sys.argv[2] if len(sys.argv) > 2 else None
    pids = os.environ.get("PROTOCOL_CLIENT_PIDS")
    if pids:
        open(os.path.join(pids, str(os.getpid())), "w").close()
    rng = random.Random(0)
    decisions = 0
    bidder = None

    def answer(obj):
        sys.stdout.write((obj if isinstance(obj, str) else json.dumps(obj)) + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        message = json.loads(line)
        if mode == "record":
            with open(arg, "a") as f:
                f.write(line)
        if message["type"] == "start" and mode == "heuristic":
            import numpy as np  # noqa: F401

            from gemenvs.agents.registry import make_agent
            from gemenvs.arena.tournament import make_raw_env

            bidder = make_agent(message["game"], "heuristic", make_raw_env(message["game"], message["options"]))
            bidder.reset()
        if message["type"] != "decide":
            continue
        decisions += 1
        legal = message["legal"]
        if mode == "sleep":
            time.sleep(float(arg))
        elif mode == "hang":
            if pids:
                child = subprocess.Popen(["sleep", "60"])
                open(os.path.join(pids, str(child.pid)), "w").close()
            time.sleep(60)
        elif mode == "garbage" or (mode == "garbage-once" and message.get("retry") is None and decisions == 1):
            answer("this is not JSON")
            continue
        elif mode == "illegal":
            answer({"action": 10**6})
            continue
        elif mode == "exit" and decisions >= int(arg):
            sys.exit(3)
        elif mode == "flood":
            while True:
                sys.stdout.write("x" * 65536)
                sys.stdout.flush()
        elif mode == "chatty":  # (both lines in one write)
            answer(json.dumps({"action": legal[0]}) + "\n" + json.dumps({"action": legal[0]}))
            continue
        elif mode == "label":
            answer({"action": message["legal_labels"][0]})
            continue
        elif mode == "heuristic":
            import numpy as np

            obs = np.array(message["observation"], dtype=np.float32)
            mask = np.array(message["mask"], dtype=np.int8)
            answer({"action": int(bidder.act(obs, mask))})
            continue
        answer({"action": rng.choice(legal)})


if __name__ == "__main__":
    main()
