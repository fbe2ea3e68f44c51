package foreign

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/jsonx"
)

// TestLineReader reads random texts with a small buffer (so that lines
// end in it, fill it exactly, and run over it many times) and every
// bound, each line against the same text split by hand: its bytes, its
// newline, a line over the bound read as empty with over set, a last
// line without a newline read before io.EOF; and readLineBounded, the
// same rule into a line of its own.
func TestLineReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 43))
	for round := range 2000 {
		var text strings.Builder
		for range rng.IntN(8) {
			text.WriteString(strings.Repeat(string(rune('a'+rng.IntN(26))), []int{0, 1, 15, 16, 17, 31, 32, 33, 100}[rng.IntN(9)]))
			if rng.IntN(8) > 0 {
				text.WriteString([]string{"\n", "\r\n"}[rng.IntN(2)])
			}
		}
		max := []int{1, 16, 17, 40, 1 << 20}[rng.IntN(5)]
		name := fmt.Sprintf("round %d (max %d): %q", round, max, text.String())

		var want []string
		for rest := text.String(); rest != ""; {
			line := rest
			if i := strings.IndexByte(rest, '\n'); i >= 0 {
				line = rest[:i+1]
			}
			rest = rest[len(line):]
			want = append(want, line)
		}
		lr := lineReader{br: bufio.NewReaderSize(strings.NewReader(text.String()), 16)}
		var got []string
		for {
			line, over, err := lr.next(max)
			if errors.Is(err, io.EOF) {
				if len(line) > 0 || over {
					t.Fatalf("%s: io.EOF with a line", name)
				}
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if k := len(got); k >= len(want) {
				t.Fatalf("%s: line %d past the end: %q", name, k+1, line)
			}
			w := want[len(got)]
			switch {
			case len(w) > max:
				if !over || len(line) != 0 {
					t.Fatalf("%s: line %d of %d bytes over %d read as %q, over %v", name, len(got)+1, len(w), max, line, over)
				}
			case over || string(line) != w:
				t.Fatalf("%s: line %d read as %q (over %v), want %q", name, len(got)+1, line, over, w)
			}
			got = append(got, w)
			if cl, _, _ := readLineBounded(bufio.NewReader(strings.NewReader(w)), max); len(w) <= max && string(cl) != w {
				t.Fatalf("%s: readLineBounded read %q, want %q", name, cl, w)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d lines, want %d", name, len(got), len(want))
		}
	}
}

// TestEachRecordKeepsWhatItParsed: the values eachRecord hands on may be
// kept past the line (a Gemini chat's messages are, to the end of the
// file; jsonx.Parse keeps the text a value was read from, to write it
// again): each written after the whole file is read, long past the read
// buffer's reuse, is its line. The usage scans read lines in place
// (eachLineInPlace) and keep nothing of them.
func TestEachRecordKeepsWhatItParsed(t *testing.T) {
	var b strings.Builder
	var want []string
	for k := range 3000 {
		line := fmt.Sprintf(`{"k":%d,"text":"%s","args":{"n":%d}}`, k, strings.Repeat(string(rune('a'+k%26)), 50+k%400), k)
		want = append(want, line)
		b.WriteString(line + "\n")
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var kept []jsonx.Value
	if _, err := eachRecord(path, func(r record) error { kept = append(kept, r.v); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(kept) != len(want) {
		t.Fatalf("%d records, want %d", len(kept), len(want))
	}
	for k, v := range kept {
		if got := string(v.JSON()); got != want[k] {
			t.Fatalf("record %d written after the read: %s, want %s", k, got, want[k])
		}
	}
}
