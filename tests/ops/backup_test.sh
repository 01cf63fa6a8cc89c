#!/usr/bin/env bash
# docs/operations.md's online backup, proven: while clients keep creating transactions
# against a running settled, scripts/backup copies its database; a second settled started on
# the copy has every transaction acknowledged before the backup began, and resumes them.
# Usage: backup_test.sh SETTLED REPO_ROOT
set -euo pipefail
settled=$1 root=$2
work=$(mktemp -d)
# shellcheck source=../../scripts/lib/processes.sh
source "$root/scripts/lib/processes.sh"
writer_pid=""
cleanup() {
  [ -n "$writer_pid" ] && kill "$writer_pid" 2>/dev/null || true
  stop_started
  rm -rf "$work"
}
trap cleanup EXIT

start "$work/settled.log" "$settled" --port 0 --grpc-port 0 --db "$work/settle.db" --log-level warn
live=$address

prepare() {  # prepare GID: a TCC left prepared, acknowledged when this returns 200
  curl -sf -o /dev/null -X POST "http://$live/api/settle/prepare" \
    -d "{\"gid\":\"$1\",\"trans_type\":\"tcc\",\"timeout_to_fail\":3600}"
}
for i in $(seq 1 50); do prepare "before-$i"; done

# Load during the backup, bounded in count.
( for i in $(seq 1 400); do prepare "during-$i" || true; done ) &
writer_pid=$!
for _ in $(seq 200); do  # the backup starts once the load is under way
  curl -sf "http://$live/api/settle/query?gid=during-20" | grep -q prepared && break
  sleep 0.02
done
"$root/scripts/backup" "$work/settle.db" "$work/backup.db"
wait "$writer_pid"
writer_pid=""

# The backup refuses to overwrite.
if "$root/scripts/backup" "$work/settle.db" "$work/backup.db" 2>/dev/null; then
  echo "FAIL: backup overwrote an existing file" >&2; exit 1
fi

start "$work/restored.log" "$settled" --port 0 --grpc-port 0 --db "$work/backup.db" --log-level warn
restored=$address
# Everything acknowledged before the backup began is in it: the first 50, and during-1..20.
for gid in $(seq -f "before-%g" 1 50) $(seq -f "during-%g" 1 20); do
  out=$(curl -sf "http://$restored/api/settle/query?gid=$gid")
  grep -q '"status":"prepared"' <<<"$out" || { echo "FAIL: $gid missing: $out" >&2; exit 1; }
done
# Whatever of the load made it into the copy is whole: every copied transaction is readable.
copied=$(curl -sf "http://$restored/api/settle/all?limit=1000" |
         { grep -o '"gid":"during-[0-9]*"' || true; } | wc -l)
echo "backup: 50 of 50 acknowledged before it, $copied of 400 written during it"
waiting=$(curl -sf "http://$restored/api/metrics" | sed -n 's/^settle_scheduler_waiting //p')
[ "$waiting" -eq $((50 + copied)) ] ||
  { echo "FAIL: the restored settled waits on $waiting transactions, not $((50 + copied))" >&2; exit 1; }
echo "PASS"
