#!/usr/bin/env bash
# The SDK README quotes its example programs verbatim, and the programs work: the saga
# example against settled and hello-participant, the TCC participant through settled.
# Usage: sdk_examples_test.sh REPO SETTLED HELLO_PARTICIPANT SDK_TCC_PARTICIPANT SDK_SAGA_TRANSFER
#                             SDK_TCC_TRANSFER
set -euo pipefail
repo=$1 settled=$2 hello=$3 tcc_participant=$4 saga_transfer=$5 tcc_transfer=$6
readme=$repo/participant-sdk/README.md
work=$(mktemp -d)
# shellcheck source=../../scripts/lib/processes.sh
source "$repo/scripts/lib/processes.sh"
cleanup() {
  stop_started
  rm -rf "$work"
}
trap cleanup EXIT

# 1. Every "<!-- example: FILE -->" block in the README is FILE, byte for byte.
examples=$(grep -o '<!-- example: [^ ]* -->' "$readme" | sed 's/<!-- example: \(.*\) -->/\1/')
[ -n "$examples" ] || { echo "no examples quoted in $readme" >&2; exit 1; }
for file in $examples; do
  awk -v marker="<!-- example: $file -->" '
    $0 == marker { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }' "$readme" >"$work/quoted"
  if ! diff -u "$repo/$file" "$work/quoted"; then
    echo "participant-sdk/README.md quotes an outdated copy of $file" >&2
    exit 1
  fi
done


start "$work/settled.log" "$settled" --port 0 --grpc-port 0 --db "$work/settle.db"
api="http://$address/api/settle"
start "$work/hello.log" "$hello" --port 0
service="http://$address/api"

# 2. The saga example succeeds, and is compensated when a step fails.
"$saga_transfer" "$api" "$service" | tee "$work/saga.out"
grep -q ": succeed" "$work/saga.out"
kill "${started_pids[1]}"; wait "${started_pids[1]}" 2>/dev/null || true
start "$work/hello-failing.log" "$hello" --port 0 --fail /api/TransIn
if "$saga_transfer" "$api" "http://$address/api" >"$work/saga-fail.out"; then
  echo "the saga should have failed" >&2; exit 1
fi
grep -q ": failed" "$work/saga-fail.out"
grep -q "op=compensate" "$work/hello-failing.log"

# 3. The TCC example commits through the TCC participant, and rolls back what it cannot reserve.
start "$work/tcc.log" "$tcc_participant" 0 "$work/tcc-participant.db"
participant="http://$address/api"
"$tcc_transfer" "$api" "$participant" 30 | tee "$work/tcc.out"
grep -q ": succeed" "$work/tcc.out"
if "$tcc_transfer" "$api" "$participant" 999999 >"$work/tcc-fail.out"; then
  echo "a TCC beyond the balance should have been rolled back" >&2; exit 1
fi
grep -q ": failed.*insufficient funds" "$work/tcc-fail.out"
echo "SDK examples: quoted verbatim, saga succeeds and compensates, TCC commits and rolls back"
