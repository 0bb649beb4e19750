#!/usr/bin/env bash
# The README's demo command: installs what is missing, builds, and runs the Messenger demo on local files
# (stores written under ./demo-output).
set -euo pipefail
cd "$(dirname "$0")/.."
source Tools/setup.sh
swift build -c release --product demo
.build/release/demo --dir demo-output "$@"
