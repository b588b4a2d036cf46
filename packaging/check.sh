#!/usr/bin/env bash
# Builds the Debian package, installs it with dpkg, and checks what it installed: the
# service's user and state directory, `jobboard --version`, and /healthz served by the
# packaged binary from the packaged settings (on a loopback port of its own), run as the
# service's user the way the unit runs it. Removes the package (purged) at the end.
# Builds as the calling user (installing cargo-deb when missing); installs as root, through
# `sudo -n` when not root.
#
#     packaging/check.sh                      # the release build, as `cargo deb` makes it
#     PACKAGE_PROFILE=dev packaging/check.sh  # the test suite's debug binary, packaged (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != "--install" ]; then
  command -v cargo-deb >/dev/null || cargo install cargo-deb --locked --quiet
  target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  rm -f "$target"/debian/jobboard_*.deb
  if [ "${PACKAGE_PROFILE:-release}" = release ]; then
    cargo deb -p jobboard --quiet
  else
    # Packages the debug binary the test suite built (CI: what is checked is the
    # package's files, its install and its service; a release build would add the
    # whole dependency graph built a second time).
    scripts/dev-binary.sh >/dev/null
    cargo deb -p jobboard --quiet --profile dev --no-build
  fi
  deb=$(ls "$target"/debian/jobboard_*.deb)
  echo "== built $deb"
  dpkg-deb --info "$deb" | sed -n '/Package:/,/Description:/p'
  if [ "$(id -u)" -eq 0 ]; then exec "$0" --install "$deb"; fi
  exec sudo -n "$0" --install "$deb"
fi
deb=$2

port=${PACKAGE_CHECK_PORT:-18380}
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  dpkg --purge jobboard >/dev/null 2>&1 || true
  rm -rf /var/lib/jobboard
}
trap cleanup EXIT

dpkg -i "$deb"
getent passwd jobboard >/dev/null || { echo "no jobboard user" >&2; exit 1; }
[ "$(stat -c '%U %a' /var/lib/jobboard)" = "jobboard 750" ] || { echo "state directory not the service's" >&2; exit 1; }
[ "$(stat -c '%G %a' /etc/jobboard/jobboard.toml)" = "jobboard 640" ] || { echo "settings not readable by the service only" >&2; exit 1; }
/usr/bin/jobboard --version
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify /lib/systemd/system/jobboard.service
fi

cd /var/lib/jobboard
runuser -u jobboard -- /usr/bin/jobboard --config /etc/jobboard/jobboard.toml serve \
  --listen "127.0.0.1:$port" &
server=$!
for _ in $(seq 1 100); do
  if curl -fsS --noproxy '*' "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then break; fi
  sleep 0.1
done
curl -fsS --noproxy '*' "http://127.0.0.1:$port/healthz"
echo
[ -s /var/lib/jobboard/jobboard.db ] || { echo "no database in /var/lib/jobboard" >&2; exit 1; }
echo "== the package installs, and its binary serves from its settings"
