package session

import (
	"bytes"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestRevLines: reading backward in blocks of any size gives the lines a
// forward split gives, in reverse, with their offsets; long lines are
// flagged, not held; blank lines in a row come as one run.
func TestRevLines(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := range 2000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(strings.Repeat("x", r.IntN(3)*r.IntN(40)))
			if r.IntN(5) == 0 {
				b.WriteString("\r")
			}
			b.WriteString("\n")
		}
		if r.IntN(2) == 0 {
			b.WriteString(strings.Repeat("y", r.IntN(30))) // torn tail
		}
		data := []byte(b.String())
		start := int64(r.IntN(3))
		if start > int64(len(data)) {
			start = 0
		}
		end := int64(len(data))
		if end > start && data[end-1] == '\n' {
			end--
		}
		max := 1 + r.IntN(60)
		block := 1 + r.IntN(20)

		type line struct {
			data    string
			off     int64
			blanks  int
			tooLong bool
		}
		// add appends l, merging runs of blank lines (the batches may
		// split a run; the lines they stand for are the same).
		add := func(lines []line, l line) []line {
			if n := len(lines); l.blanks > 0 && n > 0 && lines[n-1].blanks > 0 {
				lines[n-1].blanks += l.blanks
				lines[n-1].off = l.off
				return lines
			}
			return append(lines, l)
		}
		var fwd []line
		if end > start {
			off := start
			for _, l := range bytes.Split(data[start:end], []byte("\n")) {
				switch d := bytes.TrimSuffix(l, []byte("\r")); {
				case len(l) > max:
					fwd = append(fwd, line{"", off, 0, true})
				case len(d) == 0:
					fwd = append(fwd, line{"", off, 1, false})
				default:
					fwd = append(fwd, line{string(d), off, 0, false})
				}
				off += int64(len(l)) + 1
			}
		}
		slices.Reverse(fwd)
		var want, got []line
		for _, l := range fwd {
			want = add(want, l)
		}
		rl := newRevLinesSize(bytes.NewReader(data), start, end, max, block)
		var lb lineBatch
		for {
			err := rl.batch(&lb)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range lb.lines {
				got = add(got, line{string(l.data), l.off, l.blanks, l.tooLong})
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("case %d (start %d end %d max %d block %d) %q:\ngot  %+v\nwant %+v", iter, start, end, max, block, data, got, want)
		}
	}
}
