package session

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// readerOnly hides a reader's ReadAt, so that lineReader reads its long
// lines piece by piece.
type readerOnly struct{ io.Reader }

// TestLongLinesReadAtOnce: a lineReader over a file reads a line longer
// than its buffer in one piece from its offset; over a plain reader it
// appends the pieces. On 2,000 generated texts (lines around the buffer
// size and the bound, CRLF, a torn last line, blank lines, a kept prefix
// of too-long lines) both give the same lines, offsets, sizes and flags.
func TestLongLinesReadAtOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 11))
	for k := range 2000 {
		var text bytes.Buffer
		for range r.IntN(8) {
			n := r.IntN(80)
			for range n {
				text.WriteByte("ab{}\" "[r.IntN(6)])
			}
			switch r.IntN(4) {
			case 0:
				text.WriteString("\r\n")
			default:
				text.WriteString("\n")
			}
		}
		if r.IntN(3) == 0 {
			text.WriteString("torn")
		}
		max, size, keep := 1+r.IntN(60), 16+r.IntN(20), r.IntN(3)*7
		read := func(src io.Reader) []string {
			lr := newLineReaderSize(src, 0, max, size)
			lr.keep = keep
			var out []string
			for {
				l, err := lr.next()
				if err == io.EOF {
					return out
				}
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, fmt.Sprintf("%q off=%d size=%d num=%d long=%v eol=%v", l.data, l.off, l.size, l.num, l.tooLong, l.eol))
			}
		}
		got := read(bytes.NewReader(text.Bytes()))
		want := read(readerOnly{bytes.NewReader(text.Bytes())})
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("text %d (max %d, buffer %d, keep %d) %q:\nread at once %v\npiece by piece %v", k, max, size, keep, text.String(), got, want)
		}
	}
}
