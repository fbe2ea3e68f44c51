package session

import (
	"bytes"
	"fmt"
	"io"

	"github.com/xdev/xdev/internal/jsonx"
)

// preambleKind classifies a line read before the header.
type preambleKind int

const (
	preBlank     preambleKind = iota // skipped
	preSlot                          // the title slot (line 1 only)
	preMalformed                     // not JSON: skipped and counted, as omp skips it
	preHeader                        // the header; entries follow
)

// utf8BOM is what some editors put before line 1; omp's TextDecoder drops it.
var utf8BOM = []byte("\xef\xbb\xbf")

// TrimBOM returns line 1 of a file without the UTF-8 byte order mark it
// may start with, as omp's TextDecoder reads it.
func TrimBOM(line []byte) []byte { return bytes.TrimPrefix(line, utf8BOM) }

// readPreambleLine reads line num of a file whose header has not been met
// yet: the one rule every reader (Open, Index, List, fork, verify) applies
// before the entries. Line 1 may start with a BOM and may be the slot.
// Lines JSON.parse refuses are skipped, as omp's lenient JSONL parser
// skips them; the first JSON value must be the header, or the file is no
// session (ErrNoHeader), as omp refuses to resume it.
func readPreambleLine(num int, data []byte) (kind preambleKind, slot TitleSlot, h Header, reason string, err error) {
	if num == 1 {
		data = TrimBOM(data)
	}
	if blank(data) {
		return preBlank, slot, h, "", nil
	}
	if num == 1 {
		if slot, ok := ParseTitleSlot(data); ok {
			return preSlot, slot, h, "", nil
		}
	}
	v, n, perr := jsonx.ParsePrefix(data)
	if perr != nil {
		return preMalformed, slot, h, "not valid JSON: " + perr.Error(), nil
	}
	h, err = headerFromValue(v, data[:n]) // junk after the header is dropped, as omp drops it
	if err != nil {
		return 0, slot, h, "", err
	}
	return preHeader, slot, h, "", nil
}

// noHeaderError reports a file that ended before its header, naming the
// first line that was skipped on the way, if any: a file of garbage says
// where the garbage is.
func noHeaderError(path string, bad []BadLine) error {
	if len(bad) > 0 {
		return fmt.Errorf("%s: line %d: %w (%s)", path, bad[0].Line, ErrNoHeader, bad[0].Reason)
	}
	return fmt.Errorf("%s: %w", path, ErrNoHeader)
}

// preamble is the slot and header of a file, and where its entries start.
type preamble struct {
	slot       TitleSlot
	hasSlot    bool
	header     Header
	headerLine int
	entriesOff int64
	bad        []BadLine // lines before the header that are not JSON
}

// title is the session's title: the slot's, else the header's (a file
// written before the slot existed), as text: a header title of another
// type reads as JavaScript's String() of it, as omp renders it. The one
// place that rule is written.
func (p preamble) title() (string, TitleSource) {
	v, src := p.titleValue()
	if v.Nullish() || v.Kind() == jsonx.Bool && !v.Truthy() {
		return "", src
	}
	return v.ToString(), src
}

// titleValue is the title as omp holds it: the slot's string, else the
// header's "title" of whatever type (undefined when it has none).
func (p preamble) titleValue() (jsonx.Value, TitleSource) {
	if p.hasSlot {
		return jsonx.Str(p.slot.Title), p.slot.Source
	}
	src, _ := ParseTitleSource(p.header.TitleSource)
	if p.header.raw == nil || p.header.Title != "" {
		return jsonx.Str(p.header.Title), src
	}
	v, err := jsonx.Parse(p.header.raw)
	if err != nil {
		return jsonx.Str(""), src
	}
	return v.Get("title"), src
}

// readPreamble reads the slot and header of f as Open does.
func readPreamble(f io.Reader, path string, maxLine int) (preamble, error) {
	var p preamble
	lr := newLineReaderSize(f, 0, maxLine, 16<<10) // a slot and a header
	for {
		l, err := lr.next()
		if err == io.EOF {
			return p, noHeaderError(path, p.bad)
		}
		if err != nil {
			return p, fmt.Errorf("%s: line %d: %w", path, lr.lineNum+1, err)
		}
		if l.tooLong {
			return p, fmt.Errorf("%s: line %d: %w: line longer than %d bytes", path, l.num, ErrNoHeader, lr.max)
		}
		kind, slot, h, reason, err := readPreambleLine(l.num, l.data)
		switch {
		case err != nil:
			return p, fmt.Errorf("%s: line %d: %w (%v)", path, l.num, ErrNoHeader, err)
		case kind == preSlot:
			p.slot, p.hasSlot = slot, true
			continue
		case kind == preMalformed:
			p.bad = append(p.bad, BadLine{Line: l.num, Kind: BadNotJSON, Reason: reason})
			continue
		case kind == preBlank:
			continue
		}
		p.header, p.headerLine, p.entriesOff = h, l.num, l.off+l.size
		return p, nil
	}
}
