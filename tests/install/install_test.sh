#!/usr/bin/env bash
# docs/install.md as a team would follow it: `cmake --install` into a prefix, then a service in
# a directory of its own built against the installed tree twice, with find_package(Settle) and
# with pkg-config, each run against the installed settled.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd) source=$(cd "$2" && pwd)
work=$(mktemp -d)
# shellcheck source=../../scripts/lib/processes.sh
source "$source/scripts/lib/processes.sh"
cleanup() {
  stop_started
  rm -rf "$work"
}
trap cleanup EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for file in bin/settled bin/settle-check include/settle/sdk/saga.h include/settle/core/status.h \
            include/settle/db/pg_connection.h lib/libsettle_sdk_{core,barrier,initiator,participant,idempotency,xa,workflow,grpc,grpc_client}.a \
            include/settle/sdk/grpc_client.h include/settle/sdk/grpc_branch_server.h \
            include/settle/sdk/workflow.h include/settle/async/asio.h \
            lib/cmake/Settle/SettleConfig.cmake \
            lib/pkgconfig/settle-sdk.pc share/doc/settle/operations.md; do
  [ -e "$prefix/$file" ] || { echo "cmake --install did not install $file" >&2; exit 1; }
done
"$prefix/bin/settled" --version
"$prefix/bin/settle-check" --help >/dev/null

# The consumer, copied out of Settle's tree so that nothing there is within reach.
cp -r "$source/tests/install/consumer" "$work/consumer"
cmake -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$work/consumer/build" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
# shellcheck disable=SC2046  # pkg-config's words are flags
g++ -O1 -o "$work/stock-service-pc" "$work/consumer/stock_service.cc" \
  $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs settle-sdk)

# A free port for settled's gRPC API: the kernel's pick, released for settled to take.
grpc_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start "$work/settled.log" "$prefix/bin/settled" --port 0 --grpc-port "$grpc_port" --db "$work/settle.db"
api="http://$address"

"$work/consumer/build/stock-service" "$api/api/settle" "$work/cmake.db"
"$work/stock-service-pc" "$api/api/settle" "$work/pkg-config.db"
"$work/consumer/build/stock-grpc" "grpc://127.0.0.1:$grpc_port" "$work/grpc.db"
echo "installed Settle: find_package and pkg-config services ran their sagas against settled," \
     "over HTTP and over gRPC"
