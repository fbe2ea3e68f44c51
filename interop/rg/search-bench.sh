#!/usr/bin/env bash
# Runs `xdev search` and ripgrep (rg, Debian's ripgrep) side by side on the
# generated data dir at 1x, 2x and 4x its size (10,000, 20,000 and 40,000
# sessions), and prints, per scale: the first full index (time, peak RSS,
# index size against the text it holds), a refresh with nothing changed,
# and for literal words from common to rare, the wall time of one
# `xdev search` process (its refresh included) beside one `rg -l -F -i`
# over the same files, with whether both found the same set of sessions.
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
xdev=$work/xdev

ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }

# The words: the Vocabulary's words 10 (in about a third of the sessions),
# 200, 2,000 and 20,000 (in a handful). Names as internal/corpus spells them.
words=$(cd "$root" && go run ./cmd/xdev-corpus -vocabulary 10,200,2000,20000)

for n in "${scales[@]}"; do
	dir=$work/agent-$n
	[ -f "$dir/.complete" ] || { rm -rf "$dir"; "$work/xdev-corpus" -sessions "$n" -seed 1 -out "$dir" && touch "$dir/.complete"; }
	export XDG_CACHE_HOME=$work/cache-$n
	rm -rf "$XDG_CACHE_HOME"
	corpus=$(du -sb "$dir/sessions" | cut -f1)
	echo "== $n sessions, $((corpus / 1000000)) MB"
	out=$( { /usr/bin/time -f '%e %M' "$xdev" index --json --data-dir "$dir" > "$work/index.json"; } 2>&1 )
	read -r secs rss <<<"$out"
	idx=$(jq '.[0].indexSize' "$work/index.json")
	text=$(jq '.[0].textBytes' "$work/index.json")
	printf '  first index            %8.1f s   peak RSS %4d MiB   index %d MB = %.0f%% of the %d MB of text\n' \
		"$secs" $((rss / 1024)) $((idx / 1000000)) "$(echo "100 * $idx / $text" | bc -l)" $((text / 1000000))
	printf '  refresh, no change     %8d ms  (process)\n' "$(ms "$xdev" index --data-dir "$dir")"
	printf '  %-8s %8s %8s %9s %9s %7s  %s\n' word matches xdev-ms rg-ms sessions rg/xdev same
	for w in $words; do
		t0=$(date +%s%N)
		"$xdev" search --subagents --thinking --json --limit 1000000 --data-dir "$dir" "$w" > "$work/hits.json"
		t1=$(date +%s%N)
		rg -l -F -i "$w" "$dir/sessions" | sort > "$work/rg.txt" || true
		t2=$(date +%s%N)
		jq -r '.[] | .path, .alsoIn[]' "$work/hits.json" | sort -u > "$work/xdev.txt"
		xms=$(( (t1 - t0) / 1000000 )); rms=$(( (t2 - t1) / 1000000 ))
		same=no; cmp -s "$work/xdev.txt" "$work/rg.txt" && same=yes
		printf '  %-8s %8d %8d %9d %9d %6.1fx  %s\n' "$w" "$(jq length "$work/hits.json")" "$xms" "$rms" \
			"$(wc -l < "$work/rg.txt")" "$(echo "$rms / ($xms + 0.001)" | bc -l)" "$same"
	done
done
