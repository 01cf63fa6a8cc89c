#!/usr/bin/env bash
# Runs the README's curl examples (a saga, a TCC, a transactional message, a topic) against a
# real settled and hello-participant, both on free loopback ports, and checks that they
# succeed.
# Usage: readme_example_test.sh SETTLED HELLO_PARTICIPANT README
set -euo pipefail
settled=$1 participant=$2 readme=$3
work=$(mktemp -d)
# shellcheck source=../../scripts/lib/processes.sh
source "$(dirname "$0")/../../scripts/lib/processes.sh"
cleanup() {
  stop_started
  rm -rf "$work"
}
trap cleanup EXIT


start "$work/participant.log" "$participant" --port 0
participant_at=$address
start "$work/settled.log" "$settled" --port 0 --grpc-port 0 --db "$work/settle.db"
settled_at=$address

# The lines between <!-- NAME-example:start --> and its end marker, pointed at our ports.
example() {
  local text
  text=$(sed -n "/<!-- $1-example:start -->/,/<!-- $1-example:end -->/p" "$readme" |
         grep -v -e '^<!--' -e '^```')
  [ -n "$text" ] || { echo "no $1 example in $readme" >&2; exit 1; }
  text=${text//127.0.0.1:36789/$settled_at}
  echo "${text//127.0.0.1:8081/$participant_at}"
}

output=$(bash -c "$(example saga)")
echo "$output"
grep -q '"dtm_result":"SUCCESS"' <<<"$output"
grep -q '"status":"succeed"' <<<"$output"
grep -q 'POST /api/TransIn gid=demo-saga-1 branch_id=02 op=action' "$work/participant.log"

output=$(bash -c "$(example tcc)")
echo "$output"
[ "$(grep -o '"dtm_result":"SUCCESS"' <<<"$output" | wc -l)" -eq 4 ]  # prepare, register, try, submit
grep -q 'POST /api/TransOutConfirm gid=demo-tcc-1 branch_id=01 op=confirm' "$work/participant.log"
output=$(bash -c "$(example msg)")
echo "$output"
[ "$(grep -o '"dtm_result":"SUCCESS"' <<<"$output" | wc -l)" -eq 2 ]  # prepare, submit
grep -q 'POST /api/TransIn gid=demo-msg-1 branch_id=01 op=action' "$work/participant.log"

output=$(bash -c "$(example topic)")
echo "$output"
[ "$(grep -o '"dtm_result":"SUCCESS"' <<<"$output" | wc -l)" -eq 2 ]  # subscribe, submit
grep -q '"name":"transfers"' <<<"$output"
grep -q 'POST /api/Notify gid=demo-msg-2 branch_id=01 op=action' "$work/participant.log"
echo "README examples: the saga, the TCC, the message and the topic succeed"
