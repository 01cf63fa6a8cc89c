#!/usr/bin/env bash
# A program's --help as a new user first runs it, in an empty directory: it must exit 0, print
# its usage on standard output, and leave the directory as it found it (no database file
# created on the way), and name each WORD given (its options, say).
# Usage: help_test.sh PROGRAM [WORD...]
set -euo pipefail
program=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

fail() {
  echo "$(basename "$program") --help: $1" >&2
  echo "--- stdout:" >&2
  cat stdout >&2
  echo "--- stderr:" >&2
  cat stderr >&2
  exit 1
}

status=0
timeout 30 "$program" --help >stdout 2>stderr </dev/null || status=$?
[ "$status" -eq 0 ] || fail "exit status $status, expected 0"
[ -s stdout ] || fail "printed nothing on standard output"
grep -qiE 'usage|options' stdout || fail "printed no usage"
for word in "$@"; do
  grep -qF -- "$word" stdout || fail "does not name $word"
done
left=$(find . -mindepth 1 -not -name stdout -not -name stderr)
[ -z "$left" ] || fail "left files behind: $left"
echo "$(basename "$program") --help: exit 0, usage printed, no file written"
