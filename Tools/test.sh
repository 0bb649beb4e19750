#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
source Tools/setup.sh
swift build --build-tests
swift test --skip-build "$@"
