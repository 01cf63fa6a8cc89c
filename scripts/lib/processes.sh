# Sourced by scripts/ and the script tests: start programs in the background on free loopback
# ports, and stop every one of them. The sourcing script calls stop_started from its EXIT trap.

started_pids=()

# start LOG COMMAND...: runs COMMAND with its output in LOG until it announces
# "listening on http://HOST:PORT", then sets `address` to HOST:PORT. Call it in the script's
# own shell, not inside $(...), so that stop_started knows the pid. Gives up when COMMAND exits
# or after a minute (settled checks its database before it listens: about a second per GB).
start() {
  local log=$1; shift
  "$@" >"$log" 2>&1 &
  local pid=$!
  started_pids+=("$pid")
  for _ in $(seq 1200); do
    if grep -qs "listening on http://" "$log"; then
      address=$(grep -o "listening on http://[0-9.]*:[0-9]*" "$log" | head -1 | sed 's|.*http://||')
      return
    fi
    # Exited (a zombie until it is waited for): it will not listen.
    [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || echo Z)" != Z ] || break
    sleep 0.05
  done
  echo "did not start: $*" >&2; cat "$log" >&2; exit 1
}

# Sends SIGTERM to everything start started and waits for it to exit.
stop_started() {
  for pid in "${started_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  started_pids=()
}
