#!/usr/bin/env bash
# Runs xdev and the real omp 18.2.3 on the same generated sessions, each
# operation in a fresh process, and prints time, peak RSS and the omp/xdev
# ratio. Usage: interop/omp/bench.sh [RUNS]   (default 3 runs; medians)
#
# The corpus (internal/corpus: 10, 104 and 500 MB sessions, 10,000 small
# sessions) is written once into $XDEV_BENCH_DIR (default
# $TMPDIR/xdev-omp-bench, about 1.3 GB) and reused. Times are measured
# inside each process, so neither side pays for its runtime's start.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
runs=${1:-3}
work=${XDEV_BENCH_DIR:-${TMPDIR:-/tmp}/xdev-omp-bench}
mkdir -p "$work"
"$here/install.sh" >/dev/null
(cd "$root" && go build -o "$work/xdev-bench" ./cmd/xdev-bench && go build -o "$work/xdev-corpus" ./cmd/xdev-corpus)

for size in 10MB 104MB 500MB; do
	[ -f "$work/$size.jsonl" ] || "$work/xdev-corpus" -size "$size" -seed 1 -out "$work/$size.jsonl"
done
[ -f "$work/agent/.complete" ] || { rm -rf "$work/agent"; "$work/xdev-corpus" -sessions 10000 -seed 1 -out "$work/agent" && touch "$work/agent/.complete"; }

field() { sed -E "s/.*\"$1\":([0-9.]+).*/\1/"; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# measure WHO OP ARG [N]: prints "ms rssKiB p50us count" (medians over runs).
measure() {
	local who=$1 op=$2 arg=$3 n=${4:-} out ms=() rss=() p50=() count=0
	for _ in $(seq "$runs"); do
		local target=$arg
		if [[ $op == append* ]]; then
			target="$work/append-$who.jsonl"
			cp "$arg" "$target"
		fi
		if [ "$who" = xdev ]; then
			out=$("$work/xdev-bench" "$op" "$target" $n)
		else
			out=$(PI_CODING_AGENT_DIR="$work/omp-agent" OMP_TEST_HOME="$work/omp-home" "$here/run-bun.sh" scripts/bench.ts "${op%-locked}" "$target" $n)
		fi
		ms+=("$(field ms <<<"$out")")
		rss+=("$(field peakRssKiB <<<"$out")")
		p50+=("$(if [[ $out == *p50us* ]]; then field p50us <<<"$out"; else echo 0; fi)")
		count=$(field count <<<"$out")
	done
	echo "$(printf '%s\n' "${ms[@]}" | median) $(printf '%s\n' "${rss[@]}" | median) $(printf '%s\n' "${p50[@]}" | median) $count"
}

mkdir -p "$work/omp-home"
printf '%-28s %12s %12s %12s %12s %8s %8s\n' operation "xdev" "xdev RSS" "omp" "omp RSS" "omp/xdev" "RSS"
row() {
	local label=$1 unit=$2 x=$3 o=$4
	read -r xms xrss xp50 xcount <<<"$x"
	read -r oms orss op50 ocount <<<"$o"
	local xv=$xms ov=$oms
	if [ "$unit" = µs ]; then xv=$xp50 ov=$op50; fi
	if [ "$xcount" != "$ocount" ]; then echo "warning: $label: xdev counted $xcount, omp $ocount" >&2; fi
	awk -v l="$label" -v u="$unit" -v xv="$xv" -v ov="$ov" -v xr="$xrss" -v orr="$orss" 'BEGIN {
		printf "%-28s %9.1f %-2s %8.0f MiB %9.1f %-2s %8.0f MiB %7.1fx %7.1fx\n", l, xv, u, xr/1024, ov, u, orr/1024, ov/xv, orr/xr }'
}
for size in 10MB 104MB 500MB; do
	row "open+context $size" ms "$(measure xdev open "$work/$size.jsonl")" "$(measure omp open "$work/$size.jsonl")"
done
row "list 10,000 sessions" ms "$(measure xdev list "$work/agent")" "$(measure omp list "$work/agent")"
row "append p50 (1000 in a row)" µs "$(measure xdev append "$work/10MB.jsonl" 1000)" "$(measure omp append "$work/10MB.jsonl" 1000)"
row "  same, lockfile each time" µs "$(measure xdev append-locked "$work/10MB.jsonl" 1000)" "$(measure omp append "$work/10MB.jsonl" 1000)"
echo "runs: $runs each; corpus in $work; $(nproc) CPUs; $(uname -sr)"
