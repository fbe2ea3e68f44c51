package session

import "fmt"

// A LineDecoder decodes the entry lines of a session that no file holds,
// one line at a time as they are made: another harness's transcript
// converted as it is read (a search index reads Claude Code's and Codex's
// in place, with no copy written). Each line is read by the rule ReadFrom
// reads a file's lines after its header (ReadFrom and LineDecoder share
// it): a blank line is skipped, a line JSON.parse refuses is skipped and
// counted (Stats), a line over OpenOptions.MaxLineBytes is handed on as
// its first TruncatedBytes (Read.Truncated), never decoded whole.
//
// The lines are of a session of the current version (CurrentVersion):
// no header, no title slot. Read.Line is the line's number among those
// given, and Read.Offset where it would start in a file of them alone.
type LineDecoder struct {
	fw  forward
	st  ReadStats
	off int64
	num int
}

// NewLineDecoder returns a decoder of a session's entry lines; name names
// them in errors (the source's path).
func NewLineDecoder(name string, opts *OpenOptions) *LineDecoder {
	if opts == nil {
		opts = &OpenOptions{}
	}
	max := opts.MaxLineBytes
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	d := &LineDecoder{}
	d.fw = forward{path: name, opts: opts, max: max, cur: Cursor{Version: CurrentVersion}}
	d.fw.skip = func(b BadLine) {
		d.st.Malformed++
		if len(d.st.BadLines) < maxBadLines {
			d.st.BadLines = append(d.st.BadLines, b)
		}
	}
	return d
}

// Decode reads the next line, without its newline. ok is false for a line
// that is not an entry (blank, or skipped and counted). The Read's Entry
// does not keep line, which the caller may reuse.
func (d *LineDecoder) Decode(line []byte) (r Read, ok bool) {
	d.num++
	off := d.off
	d.off += int64(len(line)) + 1
	l := rawLine{data: line, off: off, size: int64(len(line)) + 1, num: d.num, eol: true}
	if len(line) > d.fw.max {
		k := min(len(line), TruncatedBytes)
		l.tooLong, l.data = true, line[:k:k]
	}
	rec, isEntry, err := d.fw.step(l)
	if err != nil {
		// Only a header line can fail the step, and the decoder starts
		// past the header: counted as a line skipped, should it happen.
		d.fw.skip(lineError(l.num, err))
		return Read{}, false
	}
	if l.tooLong {
		return Read{Truncated: l.data, Offset: off, Line: d.num}, true
	}
	if !isEntry {
		return Read{}, false
	}
	e := &Entry{Type: rec.typeName(), ID: rec.id, ParentID: rec.parentID, raw: append([]byte(nil), line[:rec.size]...), line: d.num}
	r = Read{Entry: e, Offset: rec.off, Size: int(rec.size), Line: d.num}
	if err := decodeEntry(e, rec.kept(), d.fw.cur.Version); err != nil {
		e.Body = nil
		r.Err = fmt.Errorf("%s: line %d: %w", d.fw.path, d.num, err)
	}
	return r, true
}

// Stats are the lines skipped so far.
func (d *LineDecoder) Stats() ReadStats { return d.st }
