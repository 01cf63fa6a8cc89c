#!/usr/bin/env bash
# Runs build/bin/order-saga as a reader would, against a real settled on a free loopback port:
# the saga succeeds; with --fail-payment it is compensated in reverse order; the exit code
# says whether the outcome was the one asked for.
# Usage: order_saga_binary_test.sh SETTLED ORDER_SAGA
set -euo pipefail
settled=$1 order_saga=$2
work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$settled" --port 0 --grpc-port 0 --db "$work/settle.db" >"$work/settled.log" 2>&1 &
pid=$!
for _ in $(seq 200); do
  grep -q "listening on http://" "$work/settled.log" && break
  sleep 0.05
done
address=$(grep -o "listening on http://[0-9.]*:[0-9]*" "$work/settled.log" | head -1 |
          sed 's|.*http://||')
[ -n "$address" ] || { echo "settled did not start" >&2; cat "$work/settled.log" >&2; exit 1; }
api="http://$address/api/settle"

# Checks that the lines matching the patterns appear in this order in FILE.
in_order() {
  local file=$1 line=0 found; shift
  for pattern in "$@"; do
    tail -n "+$((line + 1))" "$file" >"$work/rest"
    found=$(grep -n -m1 -e "$pattern" "$work/rest") ||
      { echo "missing, or out of order: $pattern" >&2; cat "$file" >&2; exit 1; }
    line=$((line + ${found%%:*}))
  done
}

echo "--- order-saga"
"$order_saga" --coordinator "$api" | tee "$work/ok.out"
in_order "$work/ok.out" \
  '^order: create order=.* item=widget qty=2 amount=50 -> SUCCESS$' \
  '^inventory: reserve order=.* item=widget qty=2 -> SUCCESS$' \
  '^payment: charge order=.* amount=50 -> SUCCESS$' \
  '^saga .*: succeed$' '^order service: *order .* created$' \
  '^inventory service: *8 widget in stock$' '^payment service: *order .* charged 50$'

echo "--- order-saga --fail-payment"
"$order_saga" --coordinator "$api" --fail-payment | tee "$work/fail.out"
in_order "$work/fail.out" \
  '^payment: charge .* -> FAILURE card declined$' \
  '^payment: refund .* -> SUCCESS (empty rollback' \
  '^inventory: release order=.* item=widget qty=2 -> SUCCESS$' \
  '^order: cancel order=.* -> SUCCESS$' \
  '^saga .*: failed: .*card declined' '^order service: *order .* cancelled$' \
  '^inventory service: *10 widget in stock$' '^payment service: *order .* none$'

echo "--- exit codes"
rc=0; "$order_saga" --coordinator "$api" --quantity 11 >"$work/short.out" || rc=$?
[ "$rc" = 1 ] || { echo "a saga that fails unasked should exit 1, not $rc" >&2; exit 1; }
rc=0; "$order_saga" --coordinator "$api" --quantity 0 2>/dev/null || rc=$?
[ "$rc" = 2 ] || { echo "a bad --quantity should exit 2, not $rc" >&2; exit 1; }
rc=0; "$order_saga" --coordinator "http://127.0.0.1:1/api/settle" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || { echo "an unreachable coordinator should exit 2, not $rc" >&2; exit 1; }
echo "order-saga: succeeds, compensates in reverse order, exit codes as documented"
