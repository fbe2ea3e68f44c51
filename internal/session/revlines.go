package session

import (
	"bytes"
	"io"
	"slices"
)

// revLines yields the lines of a byte range of a file from the last to the
// first, reading it backward in blocks. Open uses it to walk from the leaf
// (the last entry) toward the root, so it can stop keeping lines once it
// has passed what the next context build needs.
type revLines struct {
	f     io.ReaderAt
	start int64 // the first byte of the range
	lo    int64 // blk holds the bytes [lo, pos) not yet returned
	pos   int64
	blk   []byte
	max   int
	parts [][]byte // a line spanning blocks, last part first
	line  []byte   // the joined line, reused
}

const revBlockSize = 1 << 20

// newRevLines reads the lines of [start, end). A final newline ends the
// last line; without one the last line is torn.
func newRevLines(f io.ReaderAt, start, end int64, max int) *revLines {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return &revLines{f: f, start: start, lo: end, pos: end, blk: make([]byte, revBlockSize), max: max}
}

// prev returns the line before the previous one (first call: the last
// line), without its newline or a trailing '\r', and its offset. data is
// valid until the next call; it is nil when the line is longer than max.
// At the start of the range it returns io.EOF.
func (r *revLines) prev() (data []byte, off int64, tooLong bool, err error) {
	if r.pos <= r.start {
		return nil, 0, false, io.EOF
	}
	r.parts = r.parts[:0]
	total := 0
	for {
		if r.lo == r.pos {
			if r.lo == r.start {
				off = r.start
				break
			}
			n := min(int64(len(r.blk)), r.lo-r.start)
			r.lo -= n
			if _, err := r.f.ReadAt(r.blk[:n], r.lo); err != nil && err != io.EOF {
				return nil, 0, false, err
			}
		}
		buffered := r.blk[:r.pos-r.lo]
		if i := bytes.LastIndexByte(buffered, '\n'); i >= 0 {
			if !tooLong {
				r.parts = append(r.parts, buffered[i+1:])
			}
			total += len(buffered) - i - 1
			off = r.lo + int64(i) + 1
			r.pos = r.lo + int64(i) // the newline ends the line before
			break
		}
		total += len(buffered)
		if !tooLong {
			// The block will be overwritten: keep a copy of this part.
			r.parts = append(r.parts, slices.Clone(buffered))
		}
		r.pos = r.lo
		if total > r.max {
			tooLong = true
			r.parts = r.parts[:0]
		}
	}
	if total > r.max {
		tooLong = true
	}
	if tooLong {
		return nil, off, true, nil
	}
	if len(r.parts) == 1 {
		data = r.parts[0]
	} else {
		r.line = r.line[:0]
		for i := len(r.parts) - 1; i >= 0; i-- {
			r.line = append(r.line, r.parts[i]...)
		}
		data = r.line
	}
	return bytes.TrimSuffix(data, []byte("\r")), off, false, nil
}
