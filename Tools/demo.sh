#!/usr/bin/env bash
# The README's demo command: installs what is missing, builds, and runs the Messenger story on local files
# under ./demo-output: a legacy monolithic store is generated, split by storesplit into Cloud and Local
# (SQLite) and Cache (LMDB), and the result is used through one coordinator.
set -euo pipefail
cd "$(dirname "$0")/.."
source Tools/setup.sh
MESSAGES="${MESSAGES:-200000}"
swift build -c release --product demo
swift build -c release --product storesplit
rm -rf demo-output
echo "== 1. a legacy monolithic store (Schemas/MessengerLegacy.xcdatamodeld), $MESSAGES messages"
.build/release/demo generate --output demo-output/legacy/Messenger.sqlite --messages "$MESSAGES"
echo "== 2. storesplit: Cloud and Local to SQLite, Cache to LMDB (Schemas/Messenger.xcdatamodeld)"
.build/release/storesplit demo-output/legacy/Messenger.sqlite --model Schemas/Messenger.xcdatamodeld \
    --store Cloud=demo-output/Cloud.sqlite --store Local=demo-output/Local.sqlite --store Cache=demo-output/Cache.lmdb \
    --verify
echo "== 3. the split stores through one coordinator"
.build/release/demo open --dir demo-output
