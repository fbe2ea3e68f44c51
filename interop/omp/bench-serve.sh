#!/usr/bin/env bash
# xdev serve over a data dir of 10,000 omp sessions (xdev-corpus, 250 MB)
# plus every real fixture of the other harnesses: how long its first
# index takes, its memory (RSS) and CPU idle and under a burst of appends,
# the server time of its pages, how soon an appended entry is indexed,
# and `xdev search -l` with it running against the same search with it
# stopped and against `rg -l` over the same files, and `xdev usage` with
# it running and stopped. The figures are in
# docs/performance.md, "Serve", and docs/serve.md.
#
#   interop/omp/bench-serve.sh [RUNS]
#
# The corpus is written once under $XDEV_BENCH_DIR (default
# $TMPDIR/xdev-omp-bench)/agent; the fixtures are copied from
# ../shared/fixtures/real. Everything the server writes (its index, the
# mirrors, the usage cache) goes to a temp cache dir, removed at the end.
set -euo pipefail
runs=${1:-9}
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../..
work=${XDEV_BENCH_DIR:-${TMPDIR:-/tmp}/xdev-omp-bench}
real=$root/../shared/fixtures/real
bin=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$bin"' EXIT
(cd "$root" && CGO_ENABLED=0 go build -o "$bin/xdev" ./cmd/xdev && go build -o "$bin/xdev-corpus" ./cmd/xdev-corpus)
[ -f "$work/agent/.complete" ] || { rm -rf "$work/agent"; "$bin/xdev-corpus" -sessions 10000 -out "$work/agent" && touch "$work/agent/.complete"; }

# A copy of the data dir (the burst appends to it) and of the fixtures.
data=$bin/agent
cp -r "$work/agent" "$data"
roots=$bin/roots
mkdir -p "$roots/claude/projects" "$roots/codex/sessions" "$roots/pi/sessions/--tmp--" "$roots/opencode"
cp -r "$real/claude/." "$roots/claude/projects/"
cp -r "$real/codex/." "$roots/codex/sessions/"
cp -r "$real/copilot" "$roots/copilot"
cp -r "$real/gemini" "$roots/gemini"
cp "$real/opencode-sqlite/opencode.db" "$roots/opencode/"
cp "$real"/pi-v1-*.jsonl "$roots/pi/sessions/--tmp--/"
env=(env -i PATH=/usr/bin:/bin HOME="$bin/home" XDG_CACHE_HOME="$bin/cache" XDEV_DATA_DIR="$data")
flags=(--claude-dir "$roots/claude" --codex-dir "$roots/codex" --pi-dir "$roots/pi" --copilot-dir "$roots/copilot"
	--gemini-dir "$roots/gemini" --opencode-dir "$roots/opencode")
mkdir -p "$bin/home"

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
p99() { sort -g | awk '{a[NR]=$1} END {i=int(NR*0.99+0.5); if (i<1) i=1; print a[i]}'; }
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; } # utime + stime, in clock ticks
rss() { awk '/^VmRSS/ {printf "%.0f", $2/1024}' "/proc/$pid/status"; }
hwm() { awk '/^VmHWM/ {printf "%.0f", $2/1024}' "/proc/$pid/status"; }
hz=$(getconf CLK_TCK)

start_serve() {
	"${env[@]}" "$bin/xdev" serve --addr 127.0.0.1:0 "${flags[@]}" >"$bin/url" 2>"$bin/serve.log" &
	pid=$!
	for _ in $(seq 200); do [ -s "$bin/url" ] && break; sleep 0.05; done
	url=$(head -1 "$bin/url")
	base=${url%%/\?token=*}
	token=${url##*token=}
	auth=(-H "Authorization: Bearer $token")
}
wait_ready() {
	until curl -s "${auth[@]}" "$base/api/status" | grep -q '"ready":true.*"usage":true'; do sleep 0.1; done
}

echo "xdev serve: $(find "$data/sessions" -name '*.jsonl' | wc -l) sessions in the data dir ($(du -sh "$data" | cut -f1)) + the real fixtures; $(nproc) CPUs; $(uname -sr)"
t0=$(date +%s%N)
start_serve
wait_ready
echo "first start (an empty cache: every session indexed, the ledger read): $(ms "$t0") ms, peak RSS $(hwm) MiB"
kill "$pid"; wait "$pid" 2>/dev/null || true
t0=$(date +%s%N)
start_serve
wait_ready
echo "start with a warm cache: $(ms "$t0") ms to ready"
sleep 2
echo "RSS serving and watching: $(rss) MiB (peak $(hwm) MiB)"

c0=$(cpu); sleep 30; c1=$(cpu)
echo "idle CPU over 30 s: $(awk -v d=$((c1 - c0)) -v hz="$hz" 'BEGIN {printf "%.2f%%", d / hz / 30 * 100}') of one core ($((c1 - c0)) ticks)"

# Page times: the server's (curl's time to the last byte on loopback).
page() {
	local label=$1 path=$2 t=()
	for _ in $(seq "$runs"); do
		t+=("$(curl -s -o /dev/null -w '%{time_total}' "${auth[@]}" "$base$path" | awk '{printf "%.1f", $1*1000}')")
	done
	printf '%-44s p50 %6s ms  p99 %6s ms\n' "$label" "$(printf '%s\n' "${t[@]}" | median)" "$(printf '%s\n' "${t[@]}" | p99)"
}
page "sessions list, page 1" "/"
page "sessions list, page 100" "/?page=100"
page "sessions list, filtered by project" "/?project=proj-07"
page "sessions list, filtered by text" "/?q=refactor"
word=$("$bin/xdev-corpus" -vocabulary 40)
page "search '$word'" "/search?q=$word&fragment=1"
page "usage" "/usage"
key=$(curl -s "${auth[@]}" "$base/" | grep -o 'href="/s/[0-9a-f]*"' | sed -n '1{s/href="//;s/"//;p}')
page "a session's page (newest 100 entries)" "$key"

# An append, and how soon the live index has it (the handshake waits
# for it), as a search from another process sees it.
lag=()
target=$(find "$data/sessions" -name '*.jsonl' -print -quit)
for i in $(seq "$runs"); do
	w="zzlive$i$RANDOM"
	t0=$(date +%s%N)
	echo "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"$w\",\"timestamp\":1}}" | "${env[@]}" "$bin/xdev" append "$target" >/dev/null
	"${env[@]}" "$bin/xdev" search -l "$w" | grep -q . || echo "  the search missed $w"
	lag+=("$(ms "$t0")")
done
echo "append + xdev search -l that finds it (two processes): p50 $(printf '%s\n' "${lag[@]}" | median) ms"

# A burst: 20 sessions appended to, 10 entries a second, for 10 s.
mapfile -t files < <(find "$data/sessions" -name '*.jsonl' | sort | awk 'NR % 500 == 1')
c0=$(cpu)
for i in $(seq 100); do
	f=${files[$((i % 20))]}
	echo "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"burst $i\",\"timestamp\":1}}" | "${env[@]}" "$bin/xdev" append "$f" >/dev/null
	sleep 0.1
done
c1=$(cpu)
echo "burst (100 appends over 20 sessions, ~10 s): CPU $(awk -v d=$((c1 - c0)) -v hz="$hz" 'BEGIN {printf "%.1f%%", d / hz / 10 * 100}') of one core, RSS $(rss) MiB, peak $(hwm) MiB"

# search -l with serve running, stopped, and rg.
proc() {
	local t=()
	for _ in $(seq "$runs"); do
		local t0
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1 || true
		t+=("$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN {printf "%.1f", (b-a)/1e6}')")
	done
	printf '%s\n' "${t[@]}" | median
}
# A common word (in a fifth of the sessions: the query and its output
# are most of the time) and a rare one (in a few: what is left is the
# process's start).
rare=$("$bin/xdev-corpus" -vocabulary 8000)
declare -A live stopped rg
for w in "$word" "$rare"; do
	live[$w]=$(proc "${env[@]}" "$bin/xdev" search -l "$w")
	rg[$w]=$(proc rg -l -F "$w" "$data/sessions")
done
# xdev usage with serve running (the cache it vouches for, no walk) and
# stopped (a walk of every place, the same cache), with the server's
# places (another set of places is another cache file).
"${env[@]}" "$bin/xdev" usage daily --json "${flags[@]}" >/dev/null
usage_live=$(proc "${env[@]}" "$bin/xdev" usage daily --json "${flags[@]}")
kill "$pid"; wait "$pid" 2>/dev/null || true
pid=""
"${env[@]}" "$bin/xdev" usage daily --json "${flags[@]}" >/dev/null
usage_stopped=$(proc "${env[@]}" "$bin/xdev" usage daily --json "${flags[@]}")
printf '%-44s %8s ms\n' "xdev usage daily --json, serve running" "$usage_live" "  the same, serve stopped (warm cache)" "$usage_stopped"
"${env[@]}" "$bin/xdev" search -l "$word" >/dev/null
for w in "$word" "$rare"; do
	stopped[$w]=$(proc "${env[@]}" "$bin/xdev" search -l "$w")
	n=$("${env[@]}" "$bin/xdev" search -l "$w" | wc -l)
	printf '%-44s %8s ms\n' "xdev search -l '$w' ($n sessions), serve running" "${live[$w]}" \
		"  the same, serve stopped (warm index)" "${stopped[$w]}" "  rg -l -F '$w'" "${rg[$w]}"
	awk -v l="${live[$w]}" -v s="${stopped[$w]}" -v r="${rg[$w]}" 'BEGIN {printf "  rg/xdev with serve %.1fx; stopped/running %.1fx\n", r/l, s/l}'
done
# The floor of any xdev command here: the process's start and package
# init (a 40 MB binary), which bounds the ratio above whatever a search
# costs; rg/floor is the most any search could reach on this corpus.
floor=$(proc "${env[@]}" "$bin/xdev" version)
printf '%-44s %8s ms\n' "xdev version (the start of any command)" "$floor"
awk -v f="$floor" -v r="${rg[$rare]}" 'BEGIN {printf "  rg/start %.1fx: the ceiling of the ratio on this corpus\n", r/f}'

# One 500 MB session (xdev-corpus, as bench.sh's) in a data dir of its
# own, once the server has indexed it: its page the first time (the
# session's index of every line read) and again
# (the index kept open), and how much each sends.
big=$work/500MB.jsonl
if [ -f "$big" ]; then
	data=$bin/big
	mkdir -p "$data/sessions/--work-big--"
	ln "$big" "$data/sessions/--work-big--/$(basename "$big")" 2>/dev/null || cp "$big" "$data/sessions/--work-big--/"
	env=(env -i PATH=/usr/bin:/bin HOME="$bin/home" XDG_CACHE_HOME="$bin/cache-big" XDEV_DATA_DIR="$data")
	flags=(--claude-dir "$bin/none" --codex-dir "$bin/none" --pi-dir "$bin/none" --copilot-dir "$bin/none" --gemini-dir "$bin/none" --opencode-dir "$bin/none")
	start_serve
	wait_ready # its index and ledger first, so that the page's time is its own
	key=$(curl -s "${auth[@]}" "$base/" | grep -o 'href="/s/[0-9a-f]*"' | sed -n '1{s/href="//;s/"//;p}')
	first=$(curl -s -o /dev/null -w '%{time_total} %{size_download}' "${auth[@]}" "$base$key")
	again=$(curl -s -o /dev/null -w '%{time_total} %{size_download}' "${auth[@]}" "$base$key")
	older=$(curl -s -o /dev/null -w '%{time_total} %{size_download}' "${auth[@]}" "$base$key?from=0")
	awk -v f="$first" -v a="$again" -v o="$older" 'BEGIN {
		split(f, x, " "); split(a, y, " "); split(o, z, " ")
		printf "500 MB session: its page %.0f ms the first time, %.0f ms again, the first window %.0f ms; %.0f KB sent\n", x[1]*1000, y[1]*1000, z[1]*1000, x[2]/1024 }'
	echo "  RSS with it open: $(rss) MiB (peak $(hwm) MiB)"
	kill "$pid"; wait "$pid" 2>/dev/null || true
	pid=""
fi
