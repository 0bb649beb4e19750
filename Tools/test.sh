#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs every test, builds the DocC documentation
# with warnings as errors and every public symbol documented (Tools/docs.sh), then gives every fuzz target a
# few seconds on its committed seeds (a smoke run; `bash Tools/fuzz.sh TARGET SECONDS` fuzzes for longer).
set -euo pipefail
cd "$(dirname "$0")/.."
source Tools/setup.sh
# A throwaway PostgreSQL cluster on a loopback port for the PostgreSQL store's tests (or the server at
# SWITCHYARD_POSTGRES_URL when set), stopped and removed whatever happens; none with SWITCHYARD_SKIP_POSTGRES=1,
# which leaves those tests out.
if [ "${SWITCHYARD_SKIP_POSTGRES:-}" = 1 ]; then
    echo "test: SWITCHYARD_SKIP_POSTGRES=1: no PostgreSQL cluster; the PostgreSQL tests are left out"
else
    source Tools/postgres.sh
    trap postgres_stop EXIT
    postgres_start
fi
swift build --build-tests --traits PostgreSQL
swift test --skip-build --traits PostgreSQL "$@"
if [ "$#" -eq 0 ]; then
    echo "test: documentation (DocC, warnings as errors)"
    bash Tools/docs.sh
    echo "test: fuzz smoke run (each target 8 s; the build goes to .build/fuzz)"
    bash Tools/fuzz.sh all 8
fi
