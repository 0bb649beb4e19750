#!/usr/bin/env bash
# The README's demo command: installs what is missing, builds, and runs the Messenger story on local files
# under ./demo-output: a legacy monolithic store is generated, split by storesplit into Cloud and Local
# (SQLite) and Cache (LMDB), and the result is used through one coordinator.
#
#   bash Tools/demo.sh                                  # everything on embedded stores
#   bash Tools/demo.sh --cloud-url postgres://user@127.0.0.1:5432/db?schema=messenger
#                                                       # Cloud on PostgreSQL instead (builds with the
#                                                       # PostgreSQL trait: SwiftNIO too); an existing
#                                                       # store in that schema is replaced
set -euo pipefail
cd "$(dirname "$0")/.."
CLOUD_URL=""
while [ $# -gt 0 ]; do
    case "$1" in
        --cloud-url) CLOUD_URL="${2:?--cloud-url needs a postgres:// URL}"; shift 2 ;;
        --cloud-url=*) CLOUD_URL="${1#--cloud-url=}"; shift ;;
        *) echo "demo.sh: unknown argument $1 (usage: bash Tools/demo.sh [--cloud-url postgres://...])" >&2; exit 64 ;;
    esac
done
source Tools/setup.sh
MESSAGES="${MESSAGES:-200000}"
TRAITS=()
CLOUD_STORE=(--store Cloud=demo-output/Cloud.sqlite)
OPEN_CLOUD=()
if [ -n "$CLOUD_URL" ]; then
    TRAITS=(--traits PostgreSQL)
    CLOUD_STORE=(--store "Cloud=$CLOUD_URL" --force)
    OPEN_CLOUD=(--cloud-url "$CLOUD_URL")
fi
swift build -c release "${TRAITS[@]}" --product demo
swift build -c release "${TRAITS[@]}" --product storesplit
rm -rf demo-output
echo "== 1. a legacy monolithic store (Schemas/MessengerLegacy.xcdatamodeld), $MESSAGES messages"
.build/release/demo generate --output demo-output/legacy/Messenger.sqlite --messages "$MESSAGES"
if [ -n "$CLOUD_URL" ]; then
    echo "== 2. storesplit: Cloud to PostgreSQL, Local to SQLite, Cache to LMDB (Schemas/Messenger.xcdatamodeld)"
else
    echo "== 2. storesplit: Cloud and Local to SQLite, Cache to LMDB (Schemas/Messenger.xcdatamodeld)"
fi
.build/release/storesplit demo-output/legacy/Messenger.sqlite --model Schemas/Messenger.xcdatamodeld \
    "${CLOUD_STORE[@]}" --store Local=demo-output/Local.sqlite --store Cache=demo-output/Cache.lmdb \
    --verify
echo "== 3. the split stores through one coordinator"
.build/release/demo open --dir demo-output "${OPEN_CLOUD[@]}"
