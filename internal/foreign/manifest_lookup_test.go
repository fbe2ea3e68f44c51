package foreign

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSearchSortedLinesAsWhole: the binary search of a manifest's file
// finds each line the manifest read whole finds (manifestLines.line), and
// no line for a name it has not: random manifests of 0 to 300 lines,
// of a few bytes to several lookupChunks each, every name in them and
// names between, before and after them looked up. Out of order, torn or
// with a line of another shape, what it finds is still the line of the
// name asked, or nothing.
func TestSearchSortedLinesAsWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 42))
	name := func() string { return fmt.Sprintf("%024x.jsonl", rng.Uint64()>>rng.IntN(60)) }
	for round := range 120 {
		n := rng.IntN(300)
		if round%10 == 0 {
			n = rng.IntN(3)
		}
		var names []string
		for range n {
			names = append(names, name())
		}
		slices.Sort(names)
		names = slices.Compact(names)
		var b bytes.Buffer
		for _, nm := range names {
			pad := rng.IntN(200)
			if rng.IntN(20) == 0 {
				pad = rng.IntN(3 * lookupChunk)
			}
			fmt.Fprintf(&b, `%s%s","title":"%s"}`+"\n", manifestPrefix, nm, strings.Repeat("x", pad))
		}
		spoil := round%4 == 3 && len(names) > 2
		data := b.Bytes()
		if spoil {
			switch rng.IntN(3) {
			case 0: // out of order: two lines swapped
				lines := bytes.SplitAfter(data, []byte("\n"))
				i, j := rng.IntN(len(names)), rng.IntN(len(names))
				lines[i], lines[j] = lines[j], lines[i]
				data = bytes.Join(lines, nil)
			case 1: // torn
				data = data[:rng.IntN(len(data))]
			case 2: // a line of another shape
				lines := bytes.SplitAfter(data, []byte("\n"))
				lines[rng.IntN(len(names))] = []byte("{\"other\":1}\n")
				data = bytes.Join(lines, nil)
			}
		}
		whole := newManifestLines(data)
		asks := slices.Clone(names)
		for range 20 {
			asks = append(asks, name())
		}
		asks = append(asks, "", "0", "zzzz")
		for _, ask := range asks {
			got, ok := searchSortedLines(bytes.NewReader(data), int64(len(data)), ask)
			if ok && string(lineKey(got)) != ask {
				t.Fatalf("round %d: %q found the line of %q", round, ask, lineKey(got))
			}
			if ok && !bytes.Contains(data, append(got, '\n')) {
				t.Fatalf("round %d: %q: a line that is not one: %q", round, ask, got)
			}
			if spoil {
				continue
			}
			want, wok := whole.line(ask)
			if ok != wok || !bytes.Equal(got, want) {
				t.Fatalf("round %d (%d lines): %q: found %v %.40q, want %v %.40q", round, len(names), ask, ok, got, wok, want)
			}
		}
	}
}
