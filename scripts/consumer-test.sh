#!/usr/bin/env bash
# Consumer test: the package as a user gets it. Packs the repo (prepack builds dist/), installs the tarball
# into an empty folder WITHOUT the optional media packages (a text-only install), and checks with plain
# node (no tsx) that: the tarball holds only what users need; import('graphmemix') works and loads no server,
# MCP, viewer, eval, CLI, image or OCR module; a TypeScript consumer type-checks (moduleResolution nodenext,
# no @types of its own, skipLibCheck off); `graphmemix --help` answers within the budget; add + retrieve work
# from the library and the CLI; a format needing a missing optional package fails with a clear CONFIG error.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/graphmemix-consumer-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
HELP_BUDGET_MS="${GRAPHMEMIX_HELP_BUDGET_MS:-300}"
fail() { echo "consumer test FAILED: $*" >&2; exit 1; }
step() { echo "== $*"; }

step "npm pack"
cd "$ROOT"
TARBALL="$WORK/$(npm pack --silent --pack-destination "$WORK" | tail -1)"
[ -f "$TARBALL" ] || fail "npm pack produced no tarball"
CONTENTS="$(tar tzf "$TARBALL")"
for must in package/dist/index.js package/dist/index.d.ts package/dist/cli/main.js package/bin/graphmemix.js \
  package/dist/server/index.js package/dist/mcp/index.js package/dist/eval/index.js package/dist/core/index.js; do
  grep -qx "$must" <<<"$CONTENTS" || fail "tarball lacks $must"
done
if grep -E '^package/(src|test|bench|scripts|docs|dist/demo)/' <<<"$CONTENTS"; then fail "tarball ships files users do not need (above)"; fi
echo "tarball: $(wc -l <<<"$CONTENTS") files, $(du -k "$TARBALL" | cut -f1) KiB"

step "install into an empty folder (no optional packages)"
APP="$WORK/app"
mkdir -p "$APP"
cd "$APP"
echo '{ "name": "graphmemix-consumer", "private": true, "type": "module" }' >package.json
# --ignore-scripts + the repo's own compiled better-sqlite3 addon (same pinned version, same node): its install
# script would fetch a prebuilt binary from GitHub (unreachable here) and then compile for minutes. Every
# other file comes from the tarball and the registry (cache first).
npm install --prefer-offline --no-audit --no-fund --omit=optional --ignore-scripts "$TARBALL" >/dev/null
want="$(node -p "require('$ROOT/node_modules/better-sqlite3/package.json').version")"
have="$(node -p "require('./node_modules/better-sqlite3/package.json').version")"
[ "$want" = "$have" ] || fail "better-sqlite3 $have installed, the repo built $want"
mkdir -p node_modules/better-sqlite3/build/Release
cp "$ROOT/node_modules/better-sqlite3/build/Release/better_sqlite3.node" node_modules/better-sqlite3/build/Release/
for pkg in sharp tesseract.js @tesseract.js-data/eng mailparser exifr pg tsx typescript vitest; do
  [ ! -e "node_modules/$pkg" ] || fail "a text-only install got $pkg"
done
echo "installed: $(ls node_modules | wc -l) top-level packages; no sharp, tesseract.js, mailparser, exifr, tsx, typescript"

step "import('graphmemix') with plain node loads the library only"
GRAPHMEMIX_LOADED_LOG="$WORK/loaded.txt" node --import "$ROOT/test/support/record-loaded-modules.mjs" \
  --input-type=module -e "const gm = await import('graphmemix'); if (typeof gm.openGraphmemix !== 'function') process.exit(3);"
grep -q '/node_modules/graphmemix/dist/graphmemix.js$' "$WORK/loaded.txt" || fail "the module log missed the library"
if grep -E '/graphmemix/dist/(server|mcp|viewer|eval|cli|demo)/|/node_modules/(hono|@hono|@modelcontextprotocol|sharp|@img|tesseract\.js|mailparser|exifr|pg)/' "$WORK/loaded.txt"; then
  fail "import('graphmemix') loaded the modules above"
fi
echo "loaded $(grep -c '/graphmemix/dist/' "$WORK/loaded.txt") graphmemix modules, $(grep -c '^node:' "$WORK/loaded.txt") node builtins, none of server/mcp/viewer/eval/cli/hono/MCP SDK/sharp/tesseract/mailparser/exifr"

step "library: add + retrieve"
cat >smoke.mjs <<'JS'
import { openGraphmemix } from 'graphmemix';
const gm = await openGraphmemix({ db: process.argv[2] });
await gm.addMemories('alice', [
  { id: 'm1', text: 'Design review moved to Monday', timestamp: '2024-04-03' },
  { id: 'm2', text: 'Lunch with Bob at noon', timestamp: '2024-04-04' },
]);
const result = await gm.retrieve('alice', 'When is the design review?', { k: 5 });
await gm.close();
if (!result.packetText.includes('Design review moved to Monday')) throw new Error(`packet: ${result.packetText}`);
console.log(`packet starts: ${JSON.stringify(result.packetText.split('\n')[0])}; flags: ${result.trace.flags.join(',')}`);
JS
node smoke.mjs "$WORK/library.db"

step "TypeScript consumer (moduleResolution nodenext, types: [], skipLibCheck false)"
cat >consumer.ts <<'TS'
import { type Graphmemix, GraphmemixError, openGraphmemix, type RetrievalResult } from 'graphmemix';
import { solveForest } from 'graphmemix/core';
import { runEval } from 'graphmemix/eval';
import { createServer } from 'graphmemix/server';

const gm: Graphmemix = await openGraphmemix({ db: ':memory:' });
const result: RetrievalResult = await gm.retrieve('alice', 'When?', { k: 3 });
const flags: readonly string[] = result.trace.flags;
// @ts-expect-error retrieve needs a question: the types are real, not any.
await gm.retrieve('alice');
export { createServer, flags, GraphmemixError, runEval, solveForest };
TS
cat >tsconfig.json <<'JSON'
{ "compilerOptions": { "target": "ES2022", "module": "nodenext", "moduleResolution": "nodenext", "strict": true,
  "noEmit": true, "skipLibCheck": false, "types": [], "lib": ["ES2023"] }, "files": ["consumer.ts"] }
JSON
"$ROOT/node_modules/.bin/tsc" -p . || fail "the consumer does not type-check"
# The MCP SDK's own declarations name fetch types that only the DOM lib defines (HeadersInit): a consumer of
# graphmemix/mcp needs lib DOM (or skipLibCheck), whatever graphmemix does.
cat >consumer-mcp.ts <<'TS'
import { createMcpServer } from 'graphmemix/mcp';
export { createMcpServer };
TS
cat >tsconfig.mcp.json <<'JSON'
{ "extends": "./tsconfig.json", "compilerOptions": { "lib": ["ES2023", "DOM"] }, "files": ["consumer-mcp.ts"] }
JSON
"$ROOT/node_modules/.bin/tsc" -p tsconfig.mcp.json || fail "the graphmemix/mcp consumer does not type-check"
echo "tsc: 0 errors (library, core, eval, server with lib ES2023; mcp with lib ES2023 + DOM)"

step "npx graphmemix --help"
npx --no-install graphmemix --help | grep -q 'retrieve \[options\] <question>' || fail "--help does not list retrieve"
times=()
for _ in $(seq 1 10); do
  start=$(date +%s%N)
  ./node_modules/.bin/graphmemix --help >/dev/null
  times+=($((($(date +%s%N) - start) / 1000000)))
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
echo "graphmemix --help, 10 runs (ms): ${times[*]}; min ${sorted[0]}, median ${sorted[5]}; load: $(cut -d' ' -f1-3 /proc/loadavg)"
# The minimum is the figure least disturbed by other work on a shared machine; the module graph (above and
# test/api/library-import-graph.test.ts) is the structural check.
[ "${sorted[0]}" -le "$HELP_BUDGET_MS" ] || fail "graphmemix --help took ${sorted[0]} ms at best (budget $HELP_BUDGET_MS ms)"

step "CLI: ingest + retrieve"
printf '%s\n' '{"id":"m1","text":"The pottery workshop moved to Thursday","timestamp":"2024-05-02"}' \
  '{"id":"m2","text":"Bought new running shoes","timestamp":"2024-05-03"}' >chats.jsonl
npx --no-install graphmemix ingest chats.jsonl --format unified --db "$WORK/cli.db" --context alice >/dev/null
npx --no-install graphmemix retrieve "When is the pottery workshop?" --db "$WORK/cli.db" --context alice --json \
  >retrieve.json
# The CLI's --json speaks the HTTP API's field names (snake_case).
node -e "const r = JSON.parse(require('fs').readFileSync('retrieve.json', 'utf8'));
  if (!r.packet_text.includes('pottery workshop moved to Thursday')) { console.error(r.packet_text); process.exit(1); }" \
  || fail "CLI retrieve did not find the memory"
echo "retrieve found m1"

step "a missing optional package is a clear error"
printf 'From a@example.com Mon Jan  1 00:00:00 2024\nFrom: a@example.com\nSubject: hi\n\nhello\n' >box.mbox
set +e
npx --no-install graphmemix ingest box.mbox --format mail --db "$WORK/cli.db" --context alice 2>err.txt >/dev/null
code=$?
set -e
cat err.txt
[ "$code" = 2 ] || fail "mail import without mailparser exited $code (want 2, CONFIG)"
grep -q 'CONFIG.*npm install mailparser' err.txt || fail "the error does not name the missing package"

echo "consumer test passed"
