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
// flagged, not held.
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
			tooLong bool
		}
		var want []line
		if end > start {
			off := start
			for _, l := range bytes.Split(data[start:end], []byte("\n")) {
				if len(l) > max {
					want = append(want, line{"", off, true})
				} else {
					want = append(want, line{string(bytes.TrimSuffix(l, []byte("\r"))), off, false})
				}
				off += int64(len(l)) + 1
			}
		}
		slices.Reverse(want)
		var got []line
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
				got = append(got, line{string(l.data), l.off, l.tooLong})
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("case %d (start %d end %d max %d block %d) %q:\ngot  %+v\nwant %+v", iter, start, end, max, block, data, got, want)
		}
	}
}
