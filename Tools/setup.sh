#!/usr/bin/env bash
# Installs the system libraries Switchyard links (SQLite, LMDB, zlib) where they are missing, and what the
# I/O-error tests mount (libfuse2, fuse and python3's fusepy for Tools/faultfs/faultfs.py; those tests skip
# visibly when it cannot be installed).
# Idempotent: does nothing when every package is present.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
needed=()
for pkg in libsqlite3-dev liblmdb-dev zlib1g-dev sqlite3 libfuse2 fuse; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || needed+=("$pkg")
done
if [ "${#needed[@]}" -gt 0 ]; then
  echo "setup: installing ${needed[*]}"
  apt_install "${needed[@]}"
fi
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
if command -v python3 >/dev/null 2>&1 && ! python3 -c "import fuse" >/dev/null 2>&1 \
  && ! python3 -c "import fusepy" >/dev/null 2>&1; then
  # pip first (a pyenv or venv python); Debian's own python refuses pip (EXTERNALLY-MANAGED), so for it the
  # distribution's package.
  python3 -m pip install --quiet --disable-pip-version-check fusepy >/dev/null 2>&1 \
    || { [ "$(command -v python3)" = /usr/bin/python3 ] \
         && apt_install python3-fusepy >/dev/null 2>&1; } \
    || echo "setup: fusepy could not be installed; the I/O-error injection tests will be skipped"
fi
