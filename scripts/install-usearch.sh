#!/usr/bin/env bash
# Installs the optional package usearch (the persistent approximate vector index) into node_modules on a
# Node that npm skips it on. usearch 2.26.2 declares engines node >= 22, and npm silently leaves out an
# optional dependency whose engines do not match, even with --force; its prebuilt linux/darwin/windows
# binaries load on Node 20 (N-API). So on Node 20 this installs it in a scratch folder (install script
# skipped: the prebuilt binary needs no build) and copies it with its runtime dependencies. Without it
# everything works and vector search is exact (`graphmemix --version` says which).
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(node -p "require('./package.json').optionalDependencies.usearch")
# usearch finds its binary from the importing file's path, so the check runs from a file (not node -e).
probe="node_modules/.usearch-probe.mjs"
echo "const m = await import('usearch'); console.log('usearch', typeof m.default.Index === 'function' ? 'loads' : 'is broken');" > "$probe"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch" "$probe"' EXIT
if node "$probe" 2>/dev/null; then
  exit 0
fi
(cd "$scratch" && npm init -y >/dev/null && npm install --no-audit --no-fund --ignore-scripts --save-exact "usearch@$version" >/dev/null 2>&1)
for package in usearch bindings file-uri-to-path node-gyp-build; do
  rm -rf "node_modules/$package"
  cp -r "$scratch/node_modules/$package" node_modules/
done
node "$probe"
