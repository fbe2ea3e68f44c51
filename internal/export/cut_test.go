package export

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCutKeepsWordInView: an output cut to MaxOutput shows its start,
// unless a word of Around is only past the cut; then the bytes around
// that word show, and what was cut before and after adds up.
func TestCutKeepsWordInView(t *testing.T) {
	const n = 1000
	for _, c := range []struct {
		name   string
		at     int // where the word is; -1 nowhere
		size   int
		around []string
		start  bool // the start is kept
	}{
		{"no word", -1, 5000, []string{"zebra"}, true},
		{"word early", 100, 5000, []string{"zebra"}, true},
		{"word past the cut", 3000, 5000, []string{"zebra"}, false},
		{"word at the end", 4995, 5000, []string{"ZEBRA"}, false},
		{"no words asked", 3000, 5000, nil, true},
		{"short output", 300, 800, []string{"zebra"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := []byte(strings.Repeat("é", c.size/2)) // two bytes a rune: cuts must find rune starts
			if c.at >= 0 {
				copy(s[min(c.at&^1, len(s)-6):], "zebra!") // six bytes: the runes around stay whole
			}
			tr := &transcript{opts: Options{MaxOutput: n, Around: c.around}}
			it := &Item{}
			got := tr.cut(it, string(s), true)
			end := it.CutBefore + len(got)
			if len(got)+it.Cut+it.CutBefore != len(s) || len(got) > n || !utf8.RuneStart(got[0]) || end < len(s) && !utf8.RuneStart(s[end]) {
				t.Fatalf("kept %d, cut %d before and %d after, of %d", len(got), it.CutBefore, it.Cut, len(s))
			}
			if c.start != (it.CutBefore == 0) {
				t.Errorf("cut %d before; the start kept: want %v", it.CutBefore, c.start)
			}
			if c.at >= 0 && len(c.around) > 0 && !strings.Contains(got, "zebra") {
				t.Errorf("the word is not in what is kept")
			}
		})
	}
}
