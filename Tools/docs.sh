#!/usr/bin/env bash
# Builds the DocC documentation of `import Switchyard` (every layer's public API, through the umbrella's
# re-exports, plus the articles in Sources/Switchyard/Switchyard.docc) into .build/docs, with DocC's warnings
# treated as errors, and fails when a public symbol has no documentation comment (the list is printed).
# Then the same for `import SwitchyardPostgreSQL` (its own product) into .build/docs-postgresql.
# Usage: bash Tools/docs.sh            (the README's test command runs it; CI too)
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --target Switchyard >&2
swift build --target SwitchyardPostgreSQL >&2
bin="$(swift build --show-bin-path)"
graphs=.build/docs-symbolgraph
rm -rf "$graphs" .build/docs
mkdir -p "$graphs"
layers=SwitchyardModel,SwitchyardQuery,SwitchyardModelFiles,SwitchyardStores,SwitchyardSQLite,SwitchyardLMDB
layers+=,SwitchyardMemory,SwitchyardCoordinator,SwitchyardContext,SwitchyardMigration,SwitchyardSplit
grdb_map="$(find .build/checkouts -path '*GRDBSQLite/module.modulemap' | head -n 1)"
swift-symbolgraph-extract -module-name Switchyard -target "$(uname -m)-unknown-linux-gnu" \
    -I "$bin/Modules" -I "$bin" \
    -Xcc -fmodule-map-file=Sources/CLMDB/module.modulemap -Xcc -fmodule-map-file=Sources/CZlib/module.modulemap \
    -Xcc "-fmodule-map-file=$grdb_map" \
    -minimum-access-level public -skip-synthesized-members -output-dir "$graphs" \
    -experimental-allowed-reexported-modules="$layers"
# Only the module's own graph: extensions of Swift's and Foundation's types are documented where they are declared.
find "$graphs" -name 'Switchyard@*.symbols.json' -delete
docc convert Sources/Switchyard/Switchyard.docc --additional-symbol-graph-dir "$graphs" \
    --fallback-display-name Switchyard --fallback-bundle-identifier org.switchyard.Switchyard \
    --output-path .build/docs --warnings-as-errors >&2
check_documented() {
python3 - "$@" <<'PY'
import json, sys
symbols, relationships = {}, []
for path in sys.argv[1:]:
    graph = json.load(open(path))
    symbols.update({s["identifier"]["precise"]: s for s in graph["symbols"]})
    relationships += graph["relationships"]
graph = {"relationships": relationships}
# A member that fulfils a protocol requirement or overrides a documented declaration shows that documentation.
inherits = {r["source"] for r in graph["relationships"] if r["kind"] in ("requirementOf", "optionalRequirementOf", "overrides", "defaultImplementationOf")}
missing = sorted(".".join(s["pathComponents"]) for p, s in symbols.items() if not s.get("docComment") and p not in inherits)
print(f"docs: {len(symbols)} public symbols, {len(missing)} without a documentation comment", file=sys.stderr)
for name in missing:
    print(f"  undocumented: {name}", file=sys.stderr)
sys.exit(1 if missing else 0)
PY
}
check_documented "$graphs/Switchyard.symbols.json"
echo "docs: .build/docs written" >&2

# SwitchyardPostgreSQL: its symbols (and its extensions of the coordinator), with every C module of its
# dependencies (SwiftNIO's) visible to the extractor.
pg_graphs=.build/docs-symbolgraph-postgresql
rm -rf "$pg_graphs" .build/docs-postgresql
mkdir -p "$pg_graphs"
maps=()
while IFS= read -r map; do maps+=(-Xcc "-fmodule-map-file=$map"); done < <(find .build/checkouts -name module.modulemap -path '*/Sources/*')
swift-symbolgraph-extract -module-name SwitchyardPostgreSQL -target "$(uname -m)-unknown-linux-gnu" \
    -I "$bin/Modules" -I "$bin" \
    -Xcc -fmodule-map-file=Sources/CLMDB/module.modulemap -Xcc -fmodule-map-file=Sources/CZlib/module.modulemap "${maps[@]}" \
    -minimum-access-level public -skip-synthesized-members -output-dir "$pg_graphs"
docc convert --additional-symbol-graph-dir "$pg_graphs" \
    --fallback-display-name SwitchyardPostgreSQL --fallback-bundle-identifier org.switchyard.SwitchyardPostgreSQL \
    --output-path .build/docs-postgresql --warnings-as-errors >&2
check_documented "$pg_graphs"/SwitchyardPostgreSQL*.symbols.json
echo "docs: .build/docs-postgresql written" >&2
