#!/usr/bin/env bash
# Installs the system libraries Switchyard links (SQLite, LMDB, zlib) where they are missing.
# Idempotent: does nothing when every package is present.
set -euo pipefail
needed=()
for pkg in libsqlite3-dev liblmdb-dev zlib1g-dev sqlite3; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || needed+=("$pkg")
done
if [ "${#needed[@]}" -gt 0 ]; then
  echo "setup: installing ${needed[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${needed[@]}" >/dev/null
fi
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
