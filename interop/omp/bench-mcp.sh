#!/usr/bin/env bash
# xdev mcp's tools, the p50 and p99 of each as a client calls them (the
# Go SDK's, in process: BenchmarkTools), over a data dir of 10,000 omp
# sessions (xdev-corpus, 250 MB) plus every real fixture of the other
# harnesses at their default places: with xdev serve running (a search
# asks it and walks nothing) and with it stopped (each search refreshes
# its indexes by a stat walk, as `xdev search` does). The figures are in
# docs/mcp.md.
#
#   interop/omp/bench-mcp.sh [RUNS]
#
# The corpus is written once under $XDEV_BENCH_DIR (default
# $TMPDIR/xdev-omp-bench)/agent and only read; everything else (a home
# with the fixtures, the caches) is a temp dir, removed at the end.
set -euo pipefail
runs=${1:-50}
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../..
work=${XDEV_BENCH_DIR:-${TMPDIR:-/tmp}/xdev-omp-bench}
real=$root/../shared/fixtures/real
bin=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$bin"' EXIT
(cd "$root" && CGO_ENABLED=0 go build -o "$bin/xdev" ./cmd/xdev && go build -o "$bin/xdev-corpus" ./cmd/xdev-corpus)
[ -f "$work/agent/.complete" ] || { rm -rf "$work/agent"; "$bin/xdev-corpus" -sessions 10000 -out "$work/agent" && touch "$work/agent/.complete"; }

home=$bin/home
mkdir -p "$home/.claude/projects" "$home/.codex/sessions" "$home/.pi/agent/sessions/--tmp--" "$home/.local/share/opencode"
cp -r "$real/claude/." "$home/.claude/projects/"
cp -r "$real/codex/." "$home/.codex/sessions/"
cp -r "$real/copilot" "$home/.copilot"
cp -r "$real/gemini" "$home/.gemini"
cp "$real/opencode-sqlite/opencode.db" "$home/.local/share/opencode/"
cp "$real"/pi-v1-*.jsonl "$home/.pi/agent/sessions/--tmp--/"
gopaths=(GOPATH="$(go env GOPATH)" GOMODCACHE="$(go env GOMODCACHE)" GOCACHE="$(go env GOCACHE)" GOFLAGS="$(go env GOFLAGS)")
env=(env -i PATH="$PATH" HOME="$home" XDG_CACHE_HOME="$bin/cache" XDEV_DATA_DIR="$work/agent" "${gopaths[@]}")

bench() {
	(cd "$root" && "${env[@]}" go test -run '^$' -bench Tools -benchtime "${runs}x" ./internal/recall -recall.env) |
		awk '/^BenchmarkTools/ {sub("BenchmarkTools/", "", $1); sub("-[0-9]+$", "", $1); printf "  %-22s p50 %7s ms  p99 %7s ms\n", $1, $5, $7}'
}

echo "xdev mcp: $(find "$work/agent/sessions" -name '*.jsonl' | wc -l) sessions in the data dir + the real fixtures; $(nproc) CPUs; $runs calls of each"
"${env[@]}" "$bin/xdev" serve --addr 127.0.0.1:0 >"$bin/url" 2>"$bin/serve.log" &
pid=$!
for _ in $(seq 200); do [ -s "$bin/url" ] && break; sleep 0.05; done
url=$(head -1 "$bin/url")
base=${url%%/\?token=*}
token=${url##*token=}
until curl -s -H "Authorization: Bearer $token" "$base/api/status" | grep -q '"ready":true.*"usage":true'; do sleep 0.2; done
echo "xdev serve running (searches ask it; no walk):"
bench
kill "$pid"; wait "$pid" 2>/dev/null || true
pid=""
echo "xdev serve stopped (each search walks every place):"
bench
