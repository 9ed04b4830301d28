#!/bin/sh
# A gemenvs agent in POSIX sh and awk (no jq, no Python): picks a random legal action.
#
# It speaks the JSON-lines protocol of docs/protocol.md. Every message's first key is "type", and
# a "decide" message carries "legal":[ids...]; the answer is one line {"action":ID}. Play it in any
# tool that takes an agent:
#
#     gemenvs-tournament --game gem --agents greedy "cmd:sh examples/random_agent.sh" --games 6
#
# Give a seed as the first argument for repeatable choices. Nothing but answers goes to stdout.
#
# mawk (Debian's and Ubuntu's awk) reads a pipe in blocks unless run with -W interactive, which would
# leave it waiting for more input than the suite sends before it answers; gawk and BusyBox read lines.
flags=
case "$(awk -W version 2>&1 </dev/null)" in
    *mawk*) flags="-W interactive" ;;
esac
exec awk $flags -v seed="$1" '
BEGIN { if (seed != "") srand(seed); else srand() }
/^\{"type":"decide"/ {
    if (match($0, /"legal":\[[0-9,]*\]/)) {
        n = split(substr($0, RSTART + 9, RLENGTH - 10), legal, ",")
        printf "{\"action\":%s}\n", legal[int(rand() * n) + 1]
    } else {
        print "{\"action\":null}"
    }
    fflush()
}
'
