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
if [ "${XDEV_BENCH_PROCESSES_ONLY:-}" = "" ]; then
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
fi

# Whole processes: what a person waits for, runtime start and package
# init included. Each line is the median wall time and the median peak RSS
# (/usr/bin/time) over the runs; omp's operations run through Bun as a
# process too, and rg is ripgrep on the same files.
(cd "$root" && CGO_ENABLED=0 go build -o "$work/xdev" ./cmd/xdev)
for size in 10MB 104MB 500MB; do
	d="$work/dd-$size/sessions/-work-p"
	mkdir -p "$d"
	[ -e "$d/$size.jsonl" ] || ln "$work/$size.jsonl" "$d/$size.jsonl"
done
# proc LABEL CMD...: prints "ms rssMiB" (medians), stdout discarded.
proc() {
	local ms=() rss=() t0 t1 tf="$work/time.out"
	for _ in $(seq "$runs"); do
		# Wall time by the clock around the process (time's %e counts in
		# 10 ms steps), peak RSS by GNU time.
		t0=$(date +%s%N)
		/usr/bin/time -o "$tf" -f "%M" "$@" >/dev/null 2>&1 || true
		t1=$(date +%s%N)
		ms+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", (b-a)/1e6}')")
		rss+=("$(awk '{printf "%.0f", $1/1024}' <<<"$(tail -1 "$tf")")")
	done
	echo "$(printf '%s\n' "${ms[@]}" | median) $(printf '%s\n' "${rss[@]}" | median)"
}
prow() {
	read -r ms rss <<<"$2"
	printf '%-44s %8s ms %6s MiB\n' "$1" "$ms" "$rss"
}
ratio() {
	read -r xms _ <<<"$2"
	read -r oms _ <<<"$3"
	awk -v l="$1" -v x="$xms" -v o="$oms" 'BEGIN { printf "%-44s %8.1fx\n", l, o/(x>0?x:1) }'
}
ompproc=(env PI_CODING_AGENT_DIR="$work/omp-agent" OMP_TEST_HOME="$work/omp-home" "$here/run-bun.sh" scripts/bench.ts)
echo
printf '%-44s %11s %10s\n' "command (a whole process)" time "peak RSS"
prow "xdev --version" "$(proc "$work/xdev" --version)"
for size in 10MB 104MB 500MB; do
	f="$work/$size.jsonl" dd="$work/dd-$size"
	x=$(proc "$work/xdev" context --json "$f")
	o=$(proc "${ompproc[@]}" open "$f")
	prow "xdev context --json, $size" "$x"
	prow "omp open + context (bench.ts), $size" "$o"
	ratio "  omp/xdev" "$x" "$o"
	prow "xdev show, $size" "$(proc "$work/xdev" show "$f")"
	prow "xdev show --tree, $size" "$(proc "$work/xdev" show --tree "$f")"
	prow "xdev export --format md, $size" "$(proc "$work/xdev" export --format md "$f")"
	prow "xdev export --format html, $size" "$(proc "$work/xdev" export --format html "$f")"
	"$work/xdev" search --data-dir "$dd" -l zzqx >/dev/null 2>&1 || true # the index, once
	prow "xdev search (warm), $size" "$(proc "$work/xdev" search --data-dir "$dd" walrus)"
done
x=$(proc "$work/xdev" list --all --data-dir "$work/agent")
o=$(proc "${ompproc[@]}" list "$work/agent")
prow "xdev list --all, 10,000 sessions" "$x"
prow "omp listAllSessions (bench.ts), 10,000" "$o"
ratio "  omp/xdev" "$x" "$o"
prow "xdev list --all --json, 10,000 sessions" "$(proc "$work/xdev" list --all --json --data-dir "$work/agent")"
"$work/xdev" search --data-dir "$work/agent" -l zzqx >/dev/null 2>&1 || true
word=$("$work/xdev-corpus" -vocabulary 40)
x=$(proc "$work/xdev" search --data-dir "$work/agent" -l "$word")
r=$(proc rg -l -F "$word" "$work/agent/sessions")
prow "xdev search -l '$word' (warm), 10,000" "$x"
prow "rg -l -F '$word', 10,000" "$r"
ratio "  rg/xdev" "$x" "$r"
prow "xdev search '$word' (warm), 10,000" "$(proc "$work/xdev" search --data-dir "$work/agent" "$word")"
