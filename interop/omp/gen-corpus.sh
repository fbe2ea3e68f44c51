#!/usr/bin/env bash
# Regenerates the omp-written corpus under internal/session/testdata/omp
# with the real omp. Usage: interop/omp/gen-corpus.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../../internal/session/testdata/omp"
"$here/install.sh"
rm -rf "$out"
mkdir -p "$out"
export OMP_TEST_HOME=$(mktemp -d)
PI_CODING_AGENT_DIR="$out" "$here/run-bun.sh" scripts/gen-corpus.ts "$out"
# omp's own indexes are not session data.
rm -rf "$out/history.db" "$out/custom-session-files" "$out"/*.db-* 2>/dev/null || true
