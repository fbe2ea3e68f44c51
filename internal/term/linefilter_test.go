package term

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFilterSeesEveryLineWhole: whatever pieces a text is written in,
// the filter is given each of its lines whole, in order, once (the last
// one, not ended, at Flush), and what reaches the stream is what it
// returned for them. Lines of every length: empty, short, and longer
// than the pieces a filter writes on in.
func TestFilterSeesEveryLineWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 42))
	for c := range 300 {
		var lines []string
		for range r.IntN(60) {
			lines = append(lines, randomLine(r)+"\n")
		}
		if l := randomLine(r); l != "" && r.IntN(3) == 0 {
			lines = append(lines, l) // not ended
		}
		text := strings.Join(lines, "")
		var seen []string
		fn := func(line []byte) []byte {
			seen = append(seen, string(line))
			if bytes.Contains(line, []byte("key")) {
				return []byte("[masked]\n")
			}
			return line
		}
		var want strings.Builder
		for _, l := range lines {
			if strings.Contains(l, "key") {
				want.WriteString("[masked]\n")
			} else {
				want.WriteString(l)
			}
		}

		var out bytes.Buffer
		f := &lineFilter{w: &out, fn: fn}
		for rest := text; rest != ""; {
			n := min(len(rest), 1+r.IntN(3*filterChunk/2))
			if r.IntN(2) == 0 {
				n = min(len(rest), 1+r.IntN(40))
			}
			if k, err := f.Write([]byte(rest[:n])); k != n || err != nil {
				t.Fatalf("case %d: Write of %d bytes: %d, %v", c, n, k, err)
			}
			rest = rest[n:]
		}
		f.Flush()
		if out.String() != want.String() {
			t.Fatalf("case %d: wrote %d bytes, want %d", c, out.Len(), want.Len())
		}
		if strings.Join(seen, "\x00") != strings.Join(lines, "\x00") {
			t.Fatalf("case %d: the filter saw %d lines, the text has %d", c, len(seen), len(lines))
		}
	}
}

// randomLine is a line's text without its newline: empty, short, or up
// to twice the size a filter writes on in, sometimes holding "key".
func randomLine(r *rand.Rand) string {
	n := []int{0, 1 + r.IntN(80), 1 + r.IntN(80), r.IntN(2 * filterChunk)}[r.IntN(4)]
	if n > 80 && r.IntN(4) > 0 {
		n = 80 + r.IntN(2000)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = "abcdefghij key "[r.IntN(15)]
	}
	return string(b)
}

// TestFilterReportsTheStreamsError: a stream that fails makes Write
// fail, having taken the whole piece.
func TestFilterReportsTheStreamsError(t *testing.T) {
	boom := errors.New("boom")
	f := &lineFilter{w: failingWriter{boom}, fn: func(l []byte) []byte { return l }}
	if n, err := f.Write([]byte("one\ntwo\n")); n != 8 || !errors.Is(err, boom) {
		t.Errorf("Write: %d, %v; want 8, %v", n, err, boom)
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write(p []byte) (int, error) { return 0, w.err }
