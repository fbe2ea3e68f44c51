package term

import (
	"bytes"
	"io"
)

// A lineFilter writes to w each whole line written to it as fn returns
// it, holding back a line not yet ended until the next write or Flush.
type lineFilter struct {
	w   io.Writer
	fn  func(line []byte) []byte
	buf []byte
}

func (f *lineFilter) Write(p []byte) (int, error) {
	f.buf = append(f.buf, p...)
	i := bytes.LastIndexByte(f.buf, '\n')
	if i < 0 {
		return len(p), nil
	}
	var out []byte
	for _, line := range bytes.SplitAfter(f.buf[:i+1], []byte{'\n'}) {
		if len(line) > 0 {
			out = append(out, f.fn(line)...)
		}
	}
	f.buf = append(f.buf[:0], f.buf[i+1:]...)
	_, err := f.w.Write(out)
	return len(p), err
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
