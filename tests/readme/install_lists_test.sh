#!/usr/bin/env bash
# The README says what each top-level command installs: the packages between
# "<!-- install-deps --list LIST -->" and "<!-- /install-deps -->" (each in backticks) must be
# exactly what `scripts/install-deps --list LIST` prints, for LIST run and test.
# Usage: install_lists_test.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
failures=0
for list in run test; do
  expected=$(bash "$source_dir/scripts/install-deps" --list "$list" | tr ' ' '\n' | sort)
  written=$(awk -v start="<!-- install-deps --list $list -->" '
      index($0, start) { on = 1; $0 = substr($0, index($0, start) + length(start)) }
      on && index($0, "<!-- /install-deps -->") { print substr($0, 1, index($0, "<!-- /install-deps -->") - 1); on = 0; next }
      on { print }' "$source_dir/README.md" |
    grep -o '`[^`]*`' | tr -d '`' | sort)
  if [ -z "$written" ]; then
    echo "README.md: no package list between <!-- install-deps --list $list --> and <!-- /install-deps -->" >&2
    failures=$((failures + 1))
  elif [ "$expected" != "$written" ]; then
    echo "README.md's list of scripts/install-deps --list $list differs from the script's:" >&2
    diff <(echo "$expected") <(echo "$written") | sed 's/^</  the script only:/; s/^>/  the README only:/' | grep only >&2 || true
    failures=$((failures + 1))
  fi
done
[ $failures -eq 0 ] || exit 1
echo "README.md names every package scripts/install-deps installs, per command"
