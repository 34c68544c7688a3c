#!/usr/bin/env bash
# Sourced by tests/run-all.sh and tests/molecule.sh: each stage of the suite is timed, and run-all.sh prints the
# table of stages when the run ends (passed or not), so every CI log says where the time went.
#   stage NAME CMD...   runs CMD as the stage NAME; its row goes to $AINET_STAGE_LOG when that is set
#                       (run-all.sh sets it; molecule.sh run alone writes no rows)
# A run longer than AINET_STAGE_WARN_S (default 3600) ends with a warning line: CI stops at 5,400 s.

stage_row() {  # NAME SECONDS RESULT
    [ -n "${AINET_STAGE_LOG:-}" ] && printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$AINET_STAGE_LOG"
    return 0
}

stage() {  # NAME CMD...
    local name=$1 start rc=0
    shift
    printf '\n=== %s ===\n' "$name"
    start=$(date +%s)
    "$@" || rc=$?
    if [ "$rc" -eq 0 ]; then
        stage_row "$name" "$(( $(date +%s) - start ))" passed
    else
        stage_row "$name" "$(( $(date +%s) - start ))" "failed (rc $rc)"
        return "$rc"
    fi
}

stage_table() {  # needs AINET_STAGE_LOG and AINET_STAGE_START
    local total=$(( $(date +%s) - AINET_STAGE_START )) warn=${AINET_STAGE_WARN_S:-3600}
    printf '\n=== stage times (%s, %s cores) ===\n' "$(hostname)" "$(nproc)"
    awk -F '\t' -v total="$total" '
        { printf "%-44s %6d s  %s\n", $1, $2, $3 }
        END { printf "%-44s %6d s  (%.1f min)\n", "total", total, total / 60 }' "$AINET_STAGE_LOG"
    if [ "$total" -gt "$warn" ]; then
        echo "WARNING: the test suite took ${total} s, over its budget of ${warn} s on this machine" \
             "(CI stops at 5400 s); the stages above say where the time went"
    fi
}
