#!/usr/bin/env bash
# Runs `xdev search` and ripgrep (rg, Debian's ripgrep) side by side on the
# generated corpus at 1x, 2x and 4x its size: 10,000 small sessions and one
# 500 MB session, then 20,000 and two, 40,000 and four (the big ones are
# hard links to one file; each is a session of its own to both tools).
# With BIG=0, the small sessions alone. It prints, per scale: the first full index (time, peak RSS,
# index size against the text it holds), a refresh with nothing changed,
# and for literal words from common to rare, the wall time of one
# `xdev search -l` process (its refresh included) beside one `rg -l -F -i`
# over the same files, with whether both found the same set of sessions.
# Run it on an otherwise idle machine: both sides are timed by the wall.
#
# Usage: interop/rg/search-bench.sh [SCALES...]   (default: 10000 20000 40000)
# Needs rg and jq. The corpora are written once into $XDEV_BENCH_DIR
# (default $TMPDIR/xdev-search-bench; about 1.8 GB for the three) and reused.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${XDEV_BENCH_DIR:-${TMPDIR:-/tmp}/xdev-search-bench}
scales=("$@")
[ ${#scales[@]} -gt 0 ] || scales=(10000 20000 40000)
command -v rg >/dev/null || { echo "search-bench: needs rg (apt-get install ripgrep)" >&2; exit 1; }
command -v jq >/dev/null || { echo "search-bench: needs jq (apt-get install jq)" >&2; exit 1; }
mkdir -p "$work"
(cd "$root" && go build -o "$work/xdev" ./cmd/xdev && go build -o "$work/xdev-corpus" ./cmd/xdev-corpus)
[ -f "$work/500MB.jsonl" ] || "$work/xdev-corpus" -size 500MB -seed 1 -out "$work/500MB.jsonl"
xdev=$work/xdev

ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null || true; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }

# The words: the Vocabulary's words 10 (in about a third of the sessions),
# 200, 2,000 and 20,000 (in a handful). Names as internal/corpus spells them.
words=$(cd "$root" && go run ./cmd/xdev-corpus -vocabulary 10,200,2000,20000)

for n in "${scales[@]}"; do
	dir=$work/agent-$n
	[ -f "$dir/.complete" ] || { rm -rf "$dir"; "$work/xdev-corpus" -sessions "$n" -seed 1 -out "$dir" && touch "$dir/.complete"; }
	rm -rf "$dir/sessions/--work-big--"
	if [ "${BIG:-1}" = 1 ]; then
		mkdir -p "$dir/sessions/--work-big--"
		for k in $(seq $((n / 10000))); do ln "$work/500MB.jsonl" "$dir/sessions/--work-big--/big-$k.jsonl"; done
	fi
	export XDG_CACHE_HOME=$work/cache-$n
	rm -rf "$XDG_CACHE_HOME"
	corpus=$(find "$dir/sessions" -name '*.jsonl' -printf '%s\n' | awk '{s += $1} END {printf "%d", s}')
	echo "== $(find "$dir/sessions" -name '*.jsonl' | wc -l) files, $((corpus / 1000000)) MB"
	out=$( { /usr/bin/time -f '%e %M' "$xdev" index --json --data-dir "$dir" > "$work/index.json"; } 2>&1 )
	read -r secs rss <<<"$out"
	idx=$(jq '.[0].indexSize' "$work/index.json")
	text=$(jq '.[0].textBytes' "$work/index.json")
	printf '  first index            %8.1f s   peak RSS %4d MiB   index %d MB = %.0f%% of the %d MB of text\n' \
		"$secs" $((rss / 1024)) $((idx / 1000000)) "$(echo "100 * $idx / $text" | bc -l)" $((text / 1000000))
	printf '  refresh, no change     %8d ms  (process)\n' "$(ms "$xdev" index --data-dir "$dir")"
	printf '  %-8s %9s %8s %9s %7s   %8s %8s %7s  %s\n' word sessions xdev-ms rg-ms rg/xdev cold-xdev cold-rg rg/xdev same
	for w in $words; do
		# Warm: the files (and the index) in the page cache, each tool run
		# once untimed first. Cold: the page cache dropped before each tool
		# (needs root; otherwise "-").
		"$xdev" search -l --subagents --thinking --data-dir "$dir" "$w" >/dev/null
		rg -l -F -i "$w" "$dir/sessions" >/dev/null || true
		t0=$(date +%s%N)
		"$xdev" search -l --subagents --thinking --data-dir "$dir" "$w" | sort > "$work/xdev.txt"
		t1=$(date +%s%N)
		rg -l -F -i "$w" "$dir/sessions" | sort > "$work/rg.txt" || true
		t2=$(date +%s%N)
		xms=$(( (t1 - t0) / 1000000 )); rms=$(( (t2 - t1) / 1000000 ))
		same=no; cmp -s "$work/xdev.txt" "$work/rg.txt" && same=yes
		cx=- cr=- cratio=-
		if [ -w /proc/sys/vm/drop_caches ]; then
			sync; echo 3 > /proc/sys/vm/drop_caches
			cx=$(ms "$xdev" search -l --subagents --thinking --data-dir "$dir" "$w")
			sync; echo 3 > /proc/sys/vm/drop_caches
			cr=$(ms rg -l -F -i "$w" "$dir/sessions")
			cratio=$(printf '%.1fx' "$(echo "$cr / ($cx + 0.001)" | bc -l)")
		fi
		printf '  %-8s %9d %8d %9d %6.1fx   %8s %8s %7s  %s\n' "$w" "$(wc -l < "$work/rg.txt")" "$xms" "$rms" \
			"$(echo "$rms / ($xms + 0.001)" | bc -l)" "$cx" "$cr" "$cratio" "$same"
	done
done
