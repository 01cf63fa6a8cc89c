#!/usr/bin/env bash
# The Debian packages as an operator gets them: `cpack -G DEB` from the build, their contents
# and maintainer scripts checked, both installed with dpkg -i, the installed settled started as
# the packaged `settle` user from /usr/bin with /etc/settle/settled.toml, a service built
# against the installed SDK (find_package without a prefix path), and both purged again.
# Needs root (dpkg -i): CI runs as root; elsewhere it uses sudo -n, or fails saying so.
# Usage: deb_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd) source=$(cd "$2" && pwd)
work=$(mktemp -d)
chmod 0755 "$work"  # the settle user reads the consumer and writes its database below
# shellcheck source=../../scripts/lib/processes.sh
source "$source/scripts/lib/processes.sh"

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  sudo -n true 2>/dev/null || { echo "deb_test: dpkg -i needs root, or sudo without a password" >&2; exit 1; }
  as_root=(sudo -n)
fi
purge() { "${as_root[@]}" dpkg --purge settle-dev settle >/dev/null 2>&1 || true; }
cleanup() {
  stop_started
  purge
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "deb_test: $*" >&2; exit 1; }

cpack --config "$build/CPackConfig.cmake" -B "$work/packages" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; exit 1; }
server=$(ls "$work"/packages/settle_*_amd64.deb) dev=$(ls "$work"/packages/settle-dev_*_amd64.deb)

# What the server package holds, and what it declares.
contents=$(dpkg-deb --contents "$server" | awk '{print $6}')
for file in ./usr/bin/settled ./usr/bin/settle-check ./usr/lib/systemd/system/settled.service \
            ./etc/settle/settled.toml ./usr/share/doc/settle/operations.md; do
  grep -qx "$file" <<<"$contents" || fail "settle's package lacks $file"
done
[ "$(dpkg-deb --info "$server" conffiles)" = /etc/settle/settled.toml ] ||
  fail "/etc/settle/settled.toml is not a conffile"
dpkg-deb --field "$server" Depends | grep -q libsqlite3 || fail "settle does not depend on libsqlite3"
unit=$(dpkg-deb --fsys-tarfile "$server" | tar -xO ./usr/lib/systemd/system/settled.service)
grep -q '^ExecStart=/usr/bin/settled --config /etc/settle/settled.toml' <<<"$unit" ||
  fail "the unit does not start /usr/bin/settled with /etc/settle/settled.toml"
doc=$(sed -n 's|^Documentation=file://||p' <<<"$unit")
grep -qx ".$doc" <<<"$contents" || fail "the unit's Documentation=$doc is not in the package"

purge
"${as_root[@]}" dpkg -i "$server" "$dev" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; exit 1; }
getent passwd settle >/dev/null || fail "installing did not create the settle user"
[ "$("${as_root[@]}" stat -c %a /etc/settle/tokens)" = 600 ] || fail "/etc/settle/tokens is not 0600"
/usr/bin/settled --version | grep -q '^settled ' || fail "/usr/bin/settled --version"

# The packaged configuration, as the packaged user; the store moved to a scratch directory.
install -d -o settle -g settle -m 0700 "$work/state"
start "$work/settled.log" "${as_root[@]}" runuser -u settle -- /usr/bin/settled \
  --config /etc/settle/settled.toml --port 0 --grpc-port 0 --store "$work/state/settle.db"
curl -sf "http://$address/api/ping" >/dev/null || fail "the installed settled does not answer"
# Read whole first: grep -q stops at its match, and with pipefail curl's SIGPIPE would fail it.
metrics=$(curl -sf "http://$address/api/metrics") || fail "the installed settled serves no metrics"
grep -q '^settle_build_info{' <<<"$metrics" || fail "the installed settled has no settle_build_info"

# A team's service against the installed settle-dev: no prefix path, as with any system package.
cp -r "$source/tests/install/consumer" "$work/consumer"
cmake -S "$work/consumer" -B "$work/consumer/build" >"$work/consumer.log" 2>&1 &&
  cmake --build "$work/consumer/build" >>"$work/consumer.log" 2>&1 ||
  { cat "$work/consumer.log" >&2; exit 1; }
"$work/consumer/build/stock-service" "http://$address/api/settle" "$work/stock.db"
stop_started

purge
[ ! -e /usr/bin/settled ] || fail "purging left /usr/bin/settled"
[ ! -e /etc/settle ] || fail "purging left /etc/settle"
echo "settle and settle-dev: built, installed, run as the settle user, and purged"
