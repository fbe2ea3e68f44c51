#!/usr/bin/env bash
# Installs the real omp 18.2.3 and Bun from npm into ./node_modules (about
# 1.5 GB, git-ignored). Idempotent: a complete install is reused.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
stamp=node_modules/.xdev-installed
if [ -f "$stamp" ] && cmp -s "$stamp" package-lock.json && [ -x node_modules/@oven/bun-linux-x64/bin/bun ] &&
  [ -x node_modules/@ccusage/ccusage-linux-x64/bin/ccusage ]; then
  exit 0
fi
# --ignore-scripts: Bun ships its binary inside the package, and omp's
# postinstall steps would try to download more.
npm install --ignore-scripts --no-audit --no-fund --loglevel=error
# ccusage's package ships its binary without the executable bit (its
# install script, skipped here, would set it).
chmod +x node_modules/@ccusage/ccusage-linux-x64/bin/ccusage
cp package-lock.json "$stamp"
