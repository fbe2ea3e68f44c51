package session

import (
	"bytes"
	"io"
	"slices"
)

// revLines yields the lines of a byte range of a file from the last to the
// first, a block at a time. Open uses it to walk from the leaf (the last
// entry) toward the root, so it can stop holding lines once it has passed
// what the next context build needs.
type revLines struct {
	f     io.ReaderAt
	start int64 // the first byte of the range
	lo    int64 // the next block ends here
	block int   // bytes read at a time
	max   int

	// pendingLen is the length so far of a line whose end lies in blocks
	// already read and whose start is not yet found: it is read whole from
	// the file once it is (see flush), never assembled from copies.
	pendingLen int64
	pending    bool
	nls        []int32 // the newlines of the block being split
}

// lineBatch is one block's worth of lines, with the buffers they point
// into; Open reads the next batch while it parses this one.
type lineBatch struct {
	blk   []byte
	lines []revLine
	err   error
}

// revLine is one line: its bytes (without the newline or a trailing '\r';
// nil when longer than max) and the offset of its first byte; or, when
// blanks is above zero, that many blank lines in a row (data empty). A
// run is one element so that a block of newlines costs a few bytes, not
// a line record (and a parse) for each of its million lines.
type revLine struct {
	data    []byte
	off     int64
	blanks  int
	tooLong bool
}

const revBlockSize = 1 << 20

// newRevLines reads the lines of [start, end). A final newline ends the
// last line; without one the last line is torn.
func newRevLines(f io.ReaderAt, start, end int64, max int) *revLines {
	return newRevLinesSize(f, start, end, max, revBlockSize)
}

func newRevLinesSize(f io.ReaderAt, start, end int64, max, block int) *revLines {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return &revLines{f: f, start: start, lo: end, block: block, max: max}
}

// batch fills b.lines with the lines of the next block back, last line
// first. They point into b's buffers. At the start of the range it returns
// io.EOF.
func (r *revLines) batch(b *lineBatch) error {
	b.lines = b.lines[:0]
	if want := int(min(int64(r.block), r.lo-r.start)); len(b.blk) < want {
		b.blk = make([]byte, want) // no more than the range: most files are small
	}
	for len(b.lines) == 0 {
		if r.lo <= r.start {
			if r.pending {
				l, err := r.flush(r.start)
				if err != nil {
					return err
				}
				b.lines = r.add(b.lines, l)
				continue
			}
			return io.EOF
		}
		n := min(int64(r.block), r.lo-r.start)
		r.lo -= n
		blk := b.blk[:n]
		if _, err := r.f.ReadAt(blk, r.lo); err != nil && err != io.EOF {
			return err
		}
		// Newlines found forward: IndexByte is vectorized, LastIndexByte
		// not. Counted first (Count is vectorized too), for a block of
		// newlines not to grow the list by doubling.
		r.nls = slices.Grow(r.nls[:0], bytes.Count(blk, []byte{'\n'}))
		for i := 0; ; {
			j := bytes.IndexByte(blk[i:], '\n')
			if j < 0 {
				break
			}
			r.nls = append(r.nls, int32(i+j))
			i += j + 1
		}
		if len(r.nls) == 0 {
			r.push(len(blk))
			continue
		}
		// The block's last line ends in what earlier batches left pending.
		last := int(r.nls[len(r.nls)-1])
		if r.pending {
			r.push(len(blk) - last - 1)
			l, err := r.flush(r.lo + int64(last) + 1)
			if err != nil {
				return err
			}
			b.lines = r.add(b.lines, l)
		} else {
			b.lines = r.add(b.lines, r.line(blk[last+1:], r.lo+int64(last)+1))
		}
		for k := len(r.nls) - 1; k > 0; k-- {
			i, j := int(r.nls[k-1])+1, int(r.nls[k])
			b.lines = r.add(b.lines, r.line(blk[i:j], r.lo+int64(i)))
		}
		if r.lo == r.start {
			b.lines = r.add(b.lines, r.line(blk[:r.nls[0]], r.start))
		} else {
			r.push(int(r.nls[0]))
		}
	}
	return nil
}

// add appends l to lines, a blank line to the run of blank lines that
// ends lines, if there is one. The run's offset is its earliest line's.
func (r *revLines) add(lines []revLine, l revLine) []revLine {
	if l.tooLong || !blank(l.data) {
		return append(lines, l)
	}
	if n := len(lines); n > 0 && lines[n-1].blanks > 0 {
		lines[n-1].blanks++
		lines[n-1].off = l.off
		return lines
	}
	return append(lines, revLine{off: l.off, blanks: 1})
}

// push counts n more bytes of the line whose start is still to be found.
func (r *revLines) push(n int) {
	r.pending = true
	r.pendingLen += int64(n)
}

// flush reads the pending line, which starts at off, into a buffer of its
// own size (nothing for one longer than max: it is skipped unread).
func (r *revLines) flush(off int64) (revLine, error) {
	n := r.pendingLen
	r.pending, r.pendingLen = false, 0
	if n > int64(r.max) {
		return revLine{off: off, tooLong: true}, nil
	}
	data := make([]byte, n)
	if _, err := r.f.ReadAt(data, off); err != nil {
		return revLine{}, err
	}
	return r.line(data, off), nil
}

func (r *revLines) line(data []byte, off int64) revLine {
	if len(data) > r.max {
		return revLine{off: off, tooLong: true}
	}
	return revLine{data: bytes.TrimSuffix(data, []byte("\r")), off: off}
}
