#!/usr/bin/env bash
# Runs the README's curl saga example against a real settled and hello-participant, both on
# free loopback ports, and checks that the saga succeeds.
# Usage: readme_example_test.sh SETTLED HELLO_PARTICIPANT README
set -euo pipefail
settled=$1 participant=$2 readme=$3
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Starts a program whose stdout announces "listening on http://HOST:PORT" and sets
# `address` to HOST:PORT. Runs in this shell (not in $(...)) so that cleanup knows the pid.
start() {
  local log=$1; shift
  "$@" >"$log" 2>&1 &
  pids+=($!)
  for _ in $(seq 200); do
    if grep -q "listening on http://" "$log"; then
      address=$(grep -o "listening on http://[0-9.]*:[0-9]*" "$log" | head -1 | sed 's|.*http://||')
      return
    fi
    sleep 0.05
  done
  echo "did not start: $*" >&2; cat "$log" >&2; exit 1
}

start "$work/participant.log" "$participant" --port 0
participant_at=$address
start "$work/settled.log" "$settled" --port 0 --db "$work/settle.db"
settled_at=$address

example=$(sed -n '/<!-- saga-example:start -->/,/<!-- saga-example:end -->/p' "$readme" |
          grep -v -e '^<!--' -e '^```')
[ -n "$example" ] || { echo "no saga example in $readme" >&2; exit 1; }
example=${example//127.0.0.1:36789/$settled_at}
example=${example//127.0.0.1:8081/$participant_at}

output=$(bash -c "$example")
echo "$output"
grep -q '"dtm_result":"SUCCESS"' <<<"$output"
grep -q '"status":"succeed"' <<<"$output"
grep -q 'POST /api/TransIn gid=demo-saga-1 branch_id=02 op=action' "$work/participant.log"
echo "README saga example: succeed"
