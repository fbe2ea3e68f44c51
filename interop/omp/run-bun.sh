#!/usr/bin/env bash
# Runs Bun from the pinned npm package with omp's state kept in temp dirs, so
# a real ~/.omp is never touched. Usage: run-bun.sh SCRIPT [ARGS...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bun="$here/node_modules/@oven/bun-linux-x64/bin/bun"
[ -x "$bun" ] || { echo "omp interop: Bun is not installed; run $here/install.sh" >&2; exit 127; }
export HOME="${OMP_TEST_HOME:-$(mktemp -d)}"
export PI_CODING_AGENT_DIR="${PI_CODING_AGENT_DIR:-$HOME/.omp/agent}"
export XDG_DATA_HOME="$HOME/.local/share" XDG_CONFIG_HOME="$HOME/.config" XDG_STATE_HOME="$HOME/.local/state"
export NO_COLOR=1 OMP_TELEMETRY=0
cd "$here"
exec "$bun" "$@"
