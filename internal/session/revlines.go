package session

import (
	"bytes"
	"io"
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

	// pending is the end of a line whose start lies in earlier blocks,
	// last part first; pendingLen is its length so far.
	pending    [][]byte
	pendingLen int
	nls        []int
}

// lineBatch is one block's worth of lines, with the buffers they point
// into; Open reads the next batch while it parses this one.
type lineBatch struct {
	blk    []byte
	joined [][]byte // lines assembled from several blocks
	lines  []revLine
	err    error
}

// revLine is one line: its bytes (without the newline or a trailing '\r';
// nil when longer than max) and the offset of its first byte.
type revLine struct {
	data    []byte
	off     int64
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
	b.joined = b.joined[:0]
	if len(b.blk) < r.block {
		b.blk = make([]byte, r.block)
	}
	for len(b.lines) == 0 {
		if r.lo <= r.start {
			if r.pendingLen > 0 || len(r.pending) > 0 {
				b.lines = append(b.lines, r.flush(b, r.start))
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
		// Newlines found forward: IndexByte is vectorized, LastIndexByte not.
		r.nls = r.nls[:0]
		for i := 0; ; {
			j := bytes.IndexByte(blk[i:], '\n')
			if j < 0 {
				break
			}
			r.nls = append(r.nls, i+j)
			i += j + 1
		}
		if len(r.nls) == 0 {
			r.push(blk)
			continue
		}
		// The block's last line ends in what earlier batches left pending.
		last := r.nls[len(r.nls)-1]
		r.push(blk[last+1:])
		b.lines = append(b.lines, r.flush(b, r.lo+int64(last)+1))
		for k := len(r.nls) - 1; k > 0; k-- {
			i, j := r.nls[k-1]+1, r.nls[k]
			b.lines = append(b.lines, r.line(blk[i:j], r.lo+int64(i)))
		}
		r.push(blk[:r.nls[0]])
		if r.lo == r.start {
			b.lines = append(b.lines, r.flush(b, r.start))
		}
	}
	return nil
}

// push puts part in front of the pending line, copying it: the block is
// reused.
func (r *revLines) push(part []byte) {
	r.pendingLen += len(part)
	if r.pendingLen > r.max {
		r.pending = r.pending[:0]
		return
	}
	if len(part) > 0 {
		// Reuse the buffers of earlier pending lines: no garbage per block.
		var buf []byte
		if n := len(r.pending); n < cap(r.pending) {
			buf = r.pending[:n+1][n][:0]
		}
		r.pending = append(r.pending, append(buf, part...))
	}
}

// flush returns the pending line, which starts at off, assembled in a
// buffer of b.
func (r *revLines) flush(b *lineBatch, off int64) revLine {
	n := r.pendingLen
	r.pendingLen = 0
	if n > r.max {
		r.pending = r.pending[:0]
		return revLine{off: off, tooLong: true}
	}
	var joined []byte
	if k := len(b.joined); k < cap(b.joined) {
		joined = b.joined[:k+1][k][:0]
	}
	for i := len(r.pending) - 1; i >= 0; i-- {
		joined = append(joined, r.pending[i]...)
	}
	b.joined = append(b.joined, joined)
	r.pending = r.pending[:0]
	return r.line(joined, off)
}

func (r *revLines) line(data []byte, off int64) revLine {
	if len(data) > r.max {
		return revLine{off: off, tooLong: true}
	}
	return revLine{data: bytes.TrimSuffix(data, []byte("\r")), off: off}
}
