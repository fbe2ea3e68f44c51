package term

import (
	"bytes"
	"io"
)

// A lineFilter writes to w each whole line written to it as fn returns
// it, holding back a line not yet ended until the next write or Flush.
// A write's lines are filtered where they are, not copied first, and
// written on in pieces of about filterChunk: a listing of 25,000
// sessions written at once cost 11 MB of copies (the whole text, twice,
// and a slice of its lines) on the way to the terminal.
type lineFilter struct {
	w   io.Writer
	fn  func(line []byte) []byte
	buf []byte // the line not yet ended
	out []byte // filtered lines not yet written to w
}

// filterChunk is about how much a lineFilter writes to w at a time.
const filterChunk = 32 << 10

func (f *lineFilter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			f.buf = append(f.buf, p...)
			break
		}
		line := p[:i+1]
		p = p[i+1:]
		if len(f.buf) > 0 {
			f.buf = append(f.buf, line...)
			line = f.buf
		}
		f.out = append(f.out, f.fn(line)...)
		f.buf = f.buf[:0]
		if len(f.out) >= filterChunk {
			if err := f.writeOut(); err != nil {
				return n, err
			}
		}
	}
	return n, f.writeOut()
}

// writeOut writes the filtered lines held to w.
func (f *lineFilter) writeOut() error {
	if len(f.out) == 0 {
		return nil
	}
	_, err := f.w.Write(f.out)
	f.out = f.out[:0]
	return err
}

// Flush writes the line not yet ended.
func (f *lineFilter) Flush() {
	if len(f.buf) > 0 {
		f.w.Write(f.fn(f.buf))
		f.buf = f.buf[:0]
	}
}

// Filter passes every line written to Out, ErrOut and RawOut through fn
// before it is written (before Out's and ErrOut's escaping): for a
// command whose every output, data or message, must not carry what fn
// takes out. A line not ended is held until Flush.
func (s *IOStreams) Filter(fn func(line []byte) []byte) {
	out, errOut, raw := &lineFilter{w: s.Out, fn: fn}, &lineFilter{w: s.ErrOut, fn: fn}, &lineFilter{w: s.RawOut, fn: fn}
	s.Out, s.ErrOut, s.RawOut = out, errOut, raw
	s.filters = append(s.filters, out, errOut, raw)
}
