#!/usr/bin/env bash
# xdev usage beside ccusage 20.0.24 (installed by install.sh) on one
# generated Claude Code dir of 10,000 sessions (xdev-corpus -claude: 458
# MB, 250,000 calls, a tenth of the sessions resumed), as whole processes
# (wall time by the clock, peak RSS by GNU time), each program in turn in
# the same minute, the median of RUNS; then the ratios. The figures are in
# docs/performance.md, "Usage".
#
#   interop/omp/bench-usage.sh [RUNS]
#
# The statusline row: Claude Code's full statusLine JSON (ccusage refuses
# input without its model and workspace).
#
# The corpus is written once under $XDEV_BENCH_DIR (default
# $TMPDIR/xdev-omp-bench)/claude. "cold" runs have an empty cache dir
# (xdev's ledger cache; ccusage keeps none); "warm" the one the run
# before left; "statusline" hands both Claude Code's statusLine JSON for
# one session on stdin, after a line was appended to that session.
set -euo pipefail
runs=${1:-5}
here=$(cd "$(dirname "$0")" && pwd)
work=${XDEV_BENCH_DIR:-${TMPDIR:-/tmp}/xdev-omp-bench}
ccusage=$here/node_modules/@ccusage/ccusage-linux-x64/bin/ccusage
[ -x "$ccusage" ] || "$here/install.sh"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
(cd "$here/../.." && CGO_ENABLED=0 go build -o "$bin/xdev" ./cmd/xdev && go build -o "$bin/xdev-corpus" ./cmd/xdev-corpus)
claude=$work/claude
[ -f "$claude/.complete" ] || { rm -rf "$claude"; "$bin/xdev-corpus" -claude 10000 -out "$claude" && touch "$claude/.complete"; }
home=$bin/home cache=$bin/cache
mkdir -p "$home" "$bin/agent"
env=(env -i PATH=/usr/bin:/bin HOME="$home" CLAUDE_CONFIG_DIR="$claude" XDG_CACHE_HOME="$cache" XDEV_DATA_DIR="$bin/agent")
live=$(ls "$claude"/projects/-work-project-5/*.jsonl | head -1)
status="{\"session_id\":\"$(basename "$live" .jsonl)\",\"transcript_path\":\"$live\",\"cwd\":\"/work/project-5\",\"model\":{\"id\":\"claude-sonnet-4-5\",\"display_name\":\"Sonnet 4.5\"},\"workspace\":{\"current_dir\":\"/work/project-5\",\"project_dir\":\"/work/project-5\"},\"version\":\"2.0.28\"}"
tf=$bin/time
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# one [--stdin TEXT] ARGS...: "ms KiB" of one run.
one() {
	local in=/dev/null t0 t1
	if [ "$1" = --stdin ]; then in=$bin/stdin; echo "$2" >"$in"; shift 2; fi
	t0=$(date +%s%N)
	/usr/bin/time -o "$tf" -f "%M" "${env[@]}" "$@" <"$in" >/dev/null 2>&1 || true
	t1=$(date +%s%N)
	echo "$(( (t1 - t0) / 1000000 )) $(tail -1 "$tf")"
}
# row LABEL SETUP -- XDEV-ARGS -- CCUSAGE-ARGS: both, alternately.
row() {
	local label=$1 setup=$2 xs=() xr=() cs=() cr=() a b x=() c=() stdin=()
	shift 2; shift # --
	while [ "$1" != -- ]; do x+=("$1"); shift; done; shift
	c=("$@")
	if [ "$label" = statusline ]; then stdin=(--stdin "$status"); fi
	for _ in $(seq "$runs"); do
		eval "$setup"
		read -r a b < <(one "${stdin[@]}" "$bin/xdev" "${x[@]}"); xs+=("$a"); xr+=("$b")
		read -r a b < <(one "${stdin[@]}" "$ccusage" "${c[@]}"); cs+=("$a"); cr+=("$b")
	done
	local xm cm
	xm=$(printf '%s\n' "${xs[@]}" | median); cm=$(printf '%s\n' "${cs[@]}" | median)
	printf '| %s | %s ms, %s MiB | %s ms, %s MiB | %s× |\n' "$label" "$xm" "$(( $(printf '%s\n' "${xr[@]}" | median) / 1024 ))" \
		"$cm" "$(( $(printf '%s\n' "${cr[@]}" | median) / 1024 ))" "$(awk -v a="$cm" -v b="$xm" 'BEGIN {printf "%.1f", a / b}')"
}
append='tail -1 "$live" | sed "s/msg_/msg_$RANDOM$RANDOM/" >>"$live"'
echo "| 10,000 Claude Code sessions | xdev | ccusage 20.0.24 | ratio |"
echo "|---|---|---|---|"
row "daily, cold" 'rm -rf "$cache"' -- usage --from claude --json -z UTC -- claude daily --json --offline -z UTC
"${env[@]}" "$bin/xdev" usage --from claude >/dev/null
row "daily, warm" ':' -- usage --from claude --json -z UTC -- claude daily --json --offline -z UTC
row "session, warm" ':' -- usage session --from claude --json -z UTC -- claude session --json --offline -z UTC
# ccusage's statusline keeps its last line for a second (--refresh-interval)
# and prints it again: --no-cache has it compute one, as xdev does.
row statusline "$append" -- usage --statusline --from claude -- statusline --offline --no-cache
