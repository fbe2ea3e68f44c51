#!/usr/bin/env bash
# Runs every command of docs/performance.md's table with two xdev binaries,
# alternately, in the same minute, as whole processes (wall time by the
# clock, peak RSS by GNU time), and prints the medians side by side: the
# before/after table of a change.
#
#   interop/omp/compare.sh OLD-XDEV NEW-XDEV [RUNS]
#
# The corpus is bench.sh's ($XDEV_BENCH_DIR, default
# $TMPDIR/xdev-omp-bench; run bench.sh once to write it). Each command runs
# once first, unmeasured, for both (the page cache, a search index, a
# checkpoint: what a person's second run finds); "uncached" lines run
# with a cache dir that cannot be made (XDEV_CACHE-less: no checkpoint is
# read or kept).
set -euo pipefail
old=$1 new=$2 runs=${3:-5}
work=${XDEV_BENCH_DIR:-${TMPDIR:-/tmp}/xdev-omp-bench}
for f in 10MB 104MB 500MB; do [ -f "$work/$f.jsonl" ] || { echo "no $work/$f.jsonl: run interop/omp/bench.sh first" >&2; exit 1; }; done
[ -f "$work/agent/.complete" ] || { echo "no $work/agent: run interop/omp/bench.sh first" >&2; exit 1; }
for size in 10MB 104MB 500MB; do
	d="$work/dd-$size/sessions/-work-p"
	mkdir -p "$d"
	[ -e "$d/$size.jsonl" ] || ln "$work/$size.jsonl" "$d/$size.jsonl"
done
prefix=(env) # what runs the binary: env, with variables for one row
tf=$(mktemp)
trap 'rm -f "$tf"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# one BIN ARGS...: "ms KiB" of one run.
one() {
	local t0 t1
	t0=$(date +%s%N)
	/usr/bin/time -o "$tf" -f "%M" "${prefix[@]}" "$@" >/dev/null 2>&1 || true
	t1=$(date +%s%N)
	echo "$(( (t1 - t0) / 1000000 )) $(tail -1 "$tf")"
}
# row LABEL ARGS...: both binaries, alternately, RUNS times each.
row() {
	local label=$1 oms=() orss=() nms=() nrss=() a b
	shift
	one "$old" "$@" >/dev/null
	one "$new" "$@" >/dev/null
	for _ in $(seq "$runs"); do
		read -r a b <<<"$(one "$old" "$@")"; oms+=("$a"); orss+=("$b")
		read -r a b <<<"$(one "$new" "$@")"; nms+=("$a"); nrss+=("$b")
	done
	printf '| %s | %s ms, %s MiB | %s ms, %s MiB |\n' "$label" \
		"$(printf '%s\n' "${oms[@]}" | median)" "$(( $(printf '%s\n' "${orss[@]}" | median) / 1024 ))" \
		"$(printf '%s\n' "${nms[@]}" | median)" "$(( $(printf '%s\n' "${nrss[@]}" | median) / 1024 ))"
}
echo "| command | $(basename "$old") | $(basename "$new") |"
echo "|---|---|---|"
row "--version" --version
for size in 10MB 104MB 500MB; do
	f="$work/$size.jsonl" dd="$work/dd-$size"
	prefix=(env XDG_CACHE_HOME=/dev/null/none)
	row "context --json, $size, uncached" context --json "$f"
	prefix=(env)
	row "context --json, $size" context --json "$f"
	row "show, $size" show "$f"
	row "show --tree, $size" show --tree "$f"
	row "export --format md, $size" export --format md "$f"
	row "export --format html, $size" export --format html "$f"
	row "search (warm), $size" search --data-dir "$dd" walrus
done
row "list --all, 10,000 sessions" list --all --data-dir "$work/agent"
row "list --all --json, 10,000 sessions" list --all --json --data-dir "$work/agent"
word=gagara
row "search -l $word (warm), 10,000 sessions" search --data-dir "$work/agent" -l "$word"
row "search $word (warm), 10,000 sessions" search --data-dir "$work/agent" "$word"
echo
echo "runs: $runs each, alternately; corpus in $work; $(nproc) CPUs; $(uname -sr)"
