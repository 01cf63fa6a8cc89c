#!/usr/bin/env bash
# Runs the shell blocks of the README, participant-sdk/README.md, docs/*.md and every other
# Markdown file outside build outputs and tests/ (examples/*/README.md, ...) as written.
#
# Every ```sh, ```bash, ```shell, ```zsh or ```console block must have a marker, an HTML
# comment on the line just before its fence (docs/testing.md, "Documented commands"):
#   <!-- doc-test: run [needs=NAME,...] [timeout=SECONDS] -->
#       runs the block; it must exit 0 within the timeout (60 s by default)
#   <!-- doc-test: background name=NAME ready=URL [curl="ARGS"] [needs=NAME,...] [timeout=SECONDS] -->
#       starts the block in the background and waits until URL answers 2xx (30 s by default),
#       asked by curl with ARGS too (an https:// URL's --cacert, --cert and --key, say; paths
#       relative to the tree's root); it is stopped when the file's blocks are done, and must
#       still be running then
#   <!-- doc-test: skip reason="WHY" -->
#       not run, for the reason given
# `needs` starts the named background blocks of the same file first, wherever they stand in
# it. Each block is run by `bash -e -o pipefail`, in a copy of the source tree whose
# build/bin is the build's binaries, so that nothing a command writes lands in the checkout.
# The documented ports are fixed (36789, 8081 to 8084, 8090, 8091): the test is RUN_SERIAL, and it fails
# rather than talk to something that already answers a ready URL.
#
# Usage: doc_commands_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
source_dir=$(cd "$1" && pwd)
bin_dir=$(cd "$2" && pwd)

work=$(mktemp -d)
tree=$work/tree
background_pids=()
failures=0

stop_backgrounds() {
  local pid
  for pid in "${background_pids[@]}"; do
    kill -TERM -- "-$pid" 2>/dev/null || true
  done
  for pid in "${background_pids[@]}"; do
    local deadline=$((SECONDS + 15))
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
    kill -KILL -- "-$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  background_pids=()
}
cleanup() {
  stop_backgrounds
  rm -rf "$work"
}
trap cleanup EXIT

# The copy the blocks run in: the sources without build outputs, and build/bin.
mkdir -p "$tree/build"
excludes=(--exclude=./.git --exclude=./build --exclude='./build-*' --exclude=./data)
case $bin_dir in
  "$source_dir"/*) excludes+=("--exclude=./${bin_dir#"$source_dir"/}") ;;
esac
tar -C "$source_dir" "${excludes[@]}" -cf - . | tar -C "$tree" -xf -
ln -s "$bin_dir" "$tree/build/bin"

git_status() {
  if git -C "$source_dir" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$source_dir" status --porcelain --untracked-files=all
  fi
}
status_before=$(git_status)

# One block of one file, as the parser leaves it.
declare -A block_kind block_line block_name block_ready block_curl block_needs block_timeout block_file
block_count=0
declare -A started  # background name -> its block number, once started

fail() {  # message... [LOG under $work/logs]
  local log=""
  if [ $# -gt 1 ] && [[ ${!#} == "$work/logs/"* ]]; then
    log=${!#}
    set -- "${@:1:$#-1}"
  fi
  echo "FAIL: $*" >&2
  if [ -s "$log" ]; then
    echo "--- its output:" >&2
    tail -n 60 "$log" >&2
    echo "---" >&2
  fi
  failures=$((failures + 1))
}

show_block() {  # block number
  echo "--- the block:" >&2
  sed 's/^/  | /' "${block_file[$1]}" >&2
}

# parse_marker TEXT: sets marker_kind and marker_attrs (an associative array) from
# "doc-test: KIND key=value key="quoted value" ...", or returns 1.
declare -A marker_attrs
parse_marker() {
  local text=$1 rest
  local marker_pattern='^<!-- doc-test: ([a-z]+)(.*)-->$'
  local attribute_pattern='^[[:space:]]*([a-z]+)=("([^"]*)"|([^[:space:]"]+))(.*)$'
  marker_attrs=()
  [[ $text =~ $marker_pattern ]] || return 1
  marker_kind=${BASH_REMATCH[1]}
  rest=${BASH_REMATCH[2]}
  while [[ $rest =~ $attribute_pattern ]]; do
    marker_attrs[${BASH_REMATCH[1]}]=${BASH_REMATCH[3]}${BASH_REMATCH[4]}
    rest=${BASH_REMATCH[5]}
  done
  [[ $rest =~ ^[[:space:]]*$ ]] || { marker_error="cannot read the marker's '${rest}'"; return 2; }
  return 0
}

# parse FILE: fills the block_* arrays with the file's marked shell blocks, in order, and
# counts a failure for every unmarked shell block or malformed marker.
parse() {
  local file=$1 relative=${1#"$source_dir"/}
  local line number=0 in_block=false fence="" indent="" previous="" kind="" start=0 out=""
  while IFS= read -r line || [ -n "$line" ]; do
    number=$((number + 1))
    if ! $in_block; then
      # An opening fence; one whose info string holds a backtick is not one (CommonMark).
      if [[ $line =~ ^([[:space:]]*)(\`\`\`+)[[:space:]]*([A-Za-z0-9_+-]*)[^\`]*$ ]]; then
        in_block=true indent=${BASH_REMATCH[1]} fence=${BASH_REMATCH[2]}
        local language=${BASH_REMATCH[3]} trimmed
        trimmed=$(sed 's/^[[:space:]]*//; s/[[:space:]]*$//' <<<"$previous")
        case $language in
          sh|bash|shell|console|zsh) ;;
          *)
            if [[ $trimmed == "<!-- doc-test:"* ]]; then
              fail "$relative:$number: a doc-test marker on a \`\`\`$language block" \
                   "(only shell blocks are run)"
            fi
            previous=$line
            kind=ignore
            continue ;;
        esac
        start=$number
        if [[ $trimmed != "<!-- doc-test:"* ]]; then
          fail "$relative:$number: a \`\`\`$language block without a doc-test marker on the line" \
               "before it (mark it run, background or skip: docs/testing.md)"
          kind=ignore
        else
          local status=0
          marker_error=""
          parse_marker "$trimmed" || status=$?
          if [ $status -ne 0 ]; then
            fail "$relative:$((number - 1)): unreadable doc-test marker: $trimmed ${marker_error}"
            kind=ignore
          else
            kind=$marker_kind
            case $kind in
              run) ;;
              background)
                if [ -z "${marker_attrs[name]:-}" ] || [ -z "${marker_attrs[ready]:-}" ]; then
                  fail "$relative:$((number - 1)): a background marker needs name= and ready="
                  kind=ignore
                fi ;;
              skip)
                if [ -z "${marker_attrs[reason]:-}" ]; then
                  fail "$relative:$((number - 1)): a skip marker needs reason=\"...\""
                fi ;;
              *)
                fail "$relative:$((number - 1)): unknown doc-test marker '$kind' (run, background or skip)"
                kind=ignore ;;
            esac
          fi
          if [[ $kind == run || $kind == background ]] &&
             ! [[ ${marker_attrs[timeout]:-1} =~ ^[1-9][0-9]*$ ]]; then
            fail "$relative:$((number - 1)): timeout= takes a number of seconds"
            kind=ignore
          fi
          if [[ $kind == run || $kind == background ]]; then
            block_count=$((block_count + 1))
            out=$work/blocks/$block_count.sh
            mkdir -p "$work/blocks"
            : >"$out"
            block_kind[$block_count]=$kind
            block_line[$block_count]="$relative:$start"
            block_name[$block_count]=${marker_attrs[name]:-}
            block_ready[$block_count]=${marker_attrs[ready]:-}
            block_curl[$block_count]=${marker_attrs[curl]:-}
            block_needs[$block_count]=${marker_attrs[needs]:-}
            block_timeout[$block_count]=${marker_attrs[timeout]:-}
            block_file[$block_count]=$out
          elif [ "$kind" = skip ]; then
            echo "skip $relative:$start: ${marker_attrs[reason]:-}"
          fi
        fi
      fi
      previous=$line
    else
      if [[ $line =~ ^[[:space:]]*(\`\`\`+)[[:space:]]*$ ]] && [ ${#BASH_REMATCH[1]} -ge ${#fence} ]; then
        in_block=false
        previous=$line
        continue
      fi
      if [[ $kind == run || $kind == background ]]; then
        printf '%s\n' "${line#"$indent"}" >>"$out"
      fi
    fi
  done <"$file"
  if $in_block; then fail "$relative:$start: a fence that is never closed"; fi
}

# The blocks of one file, numbered first..last, run in order.
find_background() {  # name first last -> prints the block number
  local i
  for ((i = $2; i <= $3; i++)); do
    if [ "${block_kind[$i]}" = background ] && [ "${block_name[$i]}" = "$1" ]; then
      echo "$i"; return 0
    fi
  done
  return 1
}

answers() {  # URL [CURL ARGS...], from the tree's root
  local url=$1
  shift
  (cd "$tree" && curl -fsS -o /dev/null --max-time 2 "$@" "$url") 2>/dev/null
}

start_background() {  # block first last
  local i=$1 url=${block_ready[$1]} log=$work/logs/$1.log
  local -a curl_args
  read -ra curl_args <<<"${block_curl[$1]}"
  started[${block_name[$i]}]=$i
  start_needs "$i" "$2" "$3" || return 1
  if answers "$url" "${curl_args[@]}"; then
    fail "${block_line[$i]}: $url answers before the block is started: stop what serves it" \
         "(the documented ports are fixed)"
    return 1
  fi
  echo "background ${block_line[$i]} (${block_name[$i]})"
  (cd "$tree" && exec setsid bash -e -o pipefail "${block_file[$i]}" </dev/null >"$log" 2>&1) &
  local pid=$!
  background_pids+=("$pid")
  local deadline=$((SECONDS + ${block_timeout[$i]:-30}))
  until answers "$url" "${curl_args[@]}"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      fail "${block_line[$i]}: the background block exited before $url answered" "$log"
      show_block "$i"
      return 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      fail "${block_line[$i]}: $url did not answer within ${block_timeout[$i]:-30} s" "$log"
      show_block "$i"
      return 1
    fi
    sleep 0.1
  done
  background_of[$i]=$pid
}

start_needs() {  # block first last
  local need number
  local -a needs
  IFS=',' read -ra needs <<<"${block_needs[$1]}"
  for need in "${needs[@]}"; do
    [ -n "$need" ] || continue
    if [ -n "${started[$need]:-}" ]; then
      if [ -z "${background_of[${started[$need]}]:-}" ]; then  # it failed to start
        echo "not run ${block_line[$1]}: '$need' did not start" >&2
        return 1
      fi
      continue
    fi
    if ! number=$(find_background "$need" "$2" "$3"); then
      fail "${block_line[$1]}: needs '$need', which no background block of this file is named"
      return 1
    fi
    start_background "$number" "$2" "$3" || return 1
  done
}

run_block() {  # block first last
  local i=$1 log=$work/logs/$1.log status=0 limit=${block_timeout[$1]:-60}
  start_needs "$i" "$2" "$3" || return 1
  echo "run ${block_line[$i]}"
  (cd "$tree" && timeout --kill-after=5 "$limit" bash -e -o pipefail "${block_file[$i]}") \
    </dev/null >"$log" 2>&1 || status=$?
  if [ $status -eq 124 ] || [ $status -eq 137 ]; then
    fail "${block_line[$i]}: did not finish within $limit s" "$log"
    show_block "$i"
  elif [ $status -ne 0 ]; then
    fail "${block_line[$i]}: exited with status $status" "$log"
    show_block "$i"
  else
    tail -n 20 "$log" | awk '{ print "  > " $0 }'
  fi
}

# Stops the file's background blocks, failing for any that was ready but had exited since.
finish_file() {  # first last
  local i
  for ((i = $1; i <= $2; i++)); do
    local pid=${background_of[$i]:-}
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      fail "${block_line[$i]}: the background block (${block_name[$i]}) exited before the" \
           "file's blocks were done" "$work/logs/$i.log"
    fi
  done
  stop_backgrounds
  started=()
  background_of=()
}

# The documented ports 36789 and 36790 lie in Linux's ephemeral range (32768-60999): a
# connection another test made may have been given one as its local port, and hold it in
# TIME_WAIT for up to a minute, in which a documented settled could not listen there. Wait
# until no socket uses a documented port, at most 90 s (then the blocks say what failed).
wait_for_free_ports() {
  local deadline=$((SECONDS + 90)) port busy
  while :; do
    busy=
    for port in 36789 36790 8081 8082 8083 8084 8090 8091; do
      if [ -n "$(ss -Htan "( sport = :$port )" 2>/dev/null)" ]; then busy=$port; break; fi
    done
    [ -z "$busy" ] && return 0
    if [ $SECONDS -ge $deadline ]; then
      echo "port $busy is still in use; the blocks that need it will fail" >&2
      return 0
    fi
    sleep 0.2
  done
}
wait_for_free_ports

mkdir -p "$work/logs"
declare -A background_of
files=("$source_dir/README.md")
[ -f "$source_dir/participant-sdk/README.md" ] && files+=("$source_dir/participant-sdk/README.md")
for doc in "$source_dir"/docs/*.md; do
  [ -f "$doc" ] && files+=("$doc")
done
# Then every other Markdown file a user reads (examples/*/README.md, ...), in path order: the
# checkout's tracked ones, or every one of a tree that is not a git checkout. Build outputs,
# tests/ (its fixtures) and .git are not documentation.
markdown_files() {
  if git -C "$source_dir" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$source_dir" ls-files -z -- '*.md'
  else
    (cd "$source_dir" && find . -name .git -prune -o -name '*.md' -type f -printf '%P\0')
  fi
}
while IFS= read -r -d '' relative; do
  case $relative in
    build/* | build-*/* | tests/* | data/* | .git/*) continue ;;
    docs/*/*) ;;
    README.md | participant-sdk/README.md | docs/*.md) continue ;;  # listed above
  esac
  if [ -f "$source_dir/$relative" ]; then files+=("$source_dir/$relative"); fi
done < <(markdown_files | LC_ALL=C sort -z)
ran=0
for file in "${files[@]}"; do
  first=$((block_count + 1))
  parse "$file"
  last=$block_count
  for ((i = first; i <= last; i++)); do
    case ${block_kind[$i]} in
      run) run_block "$i" "$first" "$last" || true; ran=$((ran + 1)) ;;
      background)
        if [ -z "${started[${block_name[$i]}]:-}" ]; then
          start_background "$i" "$first" "$last" || true
        fi
        ran=$((ran + 1)) ;;
    esac
  done
  finish_file "$first" "$last"
done

status_after=$(git_status)
if [ "$status_before" != "$status_after" ]; then
  fail "the checkout's git status changed while the blocks ran (a command wrote into the source tree?):
$(diff <(echo "$status_before") <(echo "$status_after") || true)"
fi

if [ $failures -ne 0 ]; then
  echo "documented commands: $failures failure(s)" >&2
  exit 1
fi
echo "documented commands: $ran blocks run, every shell block marked"
