#!/usr/bin/env bash
# Runs one libFuzzer target for SECONDS: bash Tools/fuzz.sh TARGET SECONDS [libFuzzer options...]
# TARGET: predicate modelxml plist deflate sqlite lmdb (Tools/Fuzz/<TARGET>/main.swift), or `all`: each
# target for SECONDS in turn (a CI smoke run: `bash Tools/fuzz.sh all 8`), failing on the first finding.
# Builds with -sanitize=fuzzer,address into .build/fuzz (never part of the ordinary build), copies the
# committed seeds (Tools/Fuzz/corpus/TARGET) into a working corpus (.build/fuzz-corpus/TARGET) and writes
# crashing inputs to .build/fuzz-crashes/TARGET. Exit status: libFuzzer's (0: no finding).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: Tools/fuzz.sh TARGET SECONDS [libFuzzer options]}
seconds=${2:?usage: Tools/fuzz.sh TARGET SECONDS [libFuzzer options]}
shift 2
if [ "$target" = all ]; then
    for each in predicate modelxml plist deflate sqlite lmdb; do
        bash "$0" "$each" "$seconds" "$@" 2>&1 | grep -E "^(stat::number_of_executed_units|parity:|==[0-9]+==ERROR)" | sed "s/^/$each: /"
        [ "${PIPESTATUS[0]}" = 0 ] || { echo "$each: finding (see .build/fuzz-crashes/$each)"; exit 1; }
    done
    exit 0
fi
export SWITCHYARD_FUZZ=1
flags=(-c debug --scratch-path .build/fuzz -Xswiftc -sanitize=fuzzer,address
       -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld)
swift build "${flags[@]}" --product "fuzz-$target" >&2
binary="$(swift build "${flags[@]}" --show-bin-path)/fuzz-$target"
corpus=.build/fuzz-corpus/$target
crashes=.build/fuzz-crashes/$target
mkdir -p "$corpus" "$crashes"
if [ -d "Tools/Fuzz/corpus/$target" ]; then cp -n Tools/Fuzz/corpus/"$target"/* "$corpus"/ 2>/dev/null || true; fi
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
exec "$binary" -max_total_time="$seconds" -detect_leaks=0 -print_final_stats=1 -artifact_prefix="$crashes/" \
    -timeout=10 -rss_limit_mb=4096 "$@" "$corpus"
