package secrets

import (
	"runtime"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/testscale"
)

// TestHugeInput: the shapes that cost a detector most for their size (one
// line of 100 MB, a million short lines, keywords at every few bytes, a
// secret on every line) are masked in memory that follows what is found,
// not the text times the rules: a text with nothing to mask allocates
// almost nothing, and one with a secret on every line of 25 bytes about
// 20 times its size (the findings, the matches' groups, the output).
// Times are printed, not asserted (docs/secrets.md has them); the sizes
// are a tenth unless $XDEV_TEST_LONG.
func TestHugeInput(t *testing.T) {
	if raceEnabled {
		t.Skip("hundreds of MB through the race detector")
	}
	scale := testscale.N(1, 10)
	cases := []struct {
		name   string
		text   string
		masked int
		perMB  uint64 // bytes allocated a byte of text, at most
	}{
		{"plain line", strings.Repeat("abcdefghij", scale<<20), 0, 0},
		{"keywords everywhere", strings.Repeat("key token ", scale<<20), 0, 0},
		{"curl on every line", strings.Repeat("curl -H x\n", scale<<20), 0, 0},
		{"one curl line", strings.Repeat("curl -H 'Authorization: Bearer ab' ", scale<<20*3/10), 0, 0},
		{"empty lines", strings.Repeat("\n", scale<<20), 0, 0},
		{"a secret a line", strings.Repeat("api_key=Zq8xLm2Pw9Rt4Kv7\n", scale<<17), scale << 17, 32},
	}
	for _, c := range cases {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, n := Default().Mask(c.text)
		runtime.ReadMemStats(&after)
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%-20s %4d MB: %d masked, %d MB allocated", c.name, len(c.text)>>20, n, alloc>>20)
		if n != c.masked {
			t.Errorf("%s: %d masked, want %d", c.name, n, c.masked)
		}
		if limit := c.perMB*uint64(len(c.text)) + 8<<20; alloc > limit {
			t.Errorf("%s: %d MB allocated for %d MB of text", c.name, alloc>>20, len(c.text)>>20)
		}
	}
}
