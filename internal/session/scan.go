package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// forward is the rule the forward readers (Open's scan, Index, Scan, ReadFrom)
// apply to each line in turn: blank lines skipped, the preamble read until
// the header, then one record per entry, with lines JSON.parse refuses
// skipped and v1 ids given by position. It holds what it has read so far,
// so a read can stop at any line and go on later from there (a Cursor).
type forward struct {
	path    string
	opts    *OpenOptions
	sc      scanner
	max     int
	cur     Cursor
	slot    TitleSlot
	hasSlot bool
	skip    func(BadLine)
	// rewrite, when set, is told of each line that makes omp rewrite the
	// whole file on its next write though it reads the entry: one whose
	// entry is followed by more than white space (Bun's JSONL reader keeps
	// the entry, and omp counts the line as malformed), or a turn omp
	// changes as it loads it.
	rewrite func(line int, why rewriteReason)
	near    string // the last entry's id (see newRecord)
}

// rewriteReason says why omp rewrites a file whose entries it reads.
type rewriteReason uint8

const (
	rewriteTrailing      rewriteReason = iota // text after the entry on its line
	rewriteCopilotReplay                      // a GitHub Copilot turn's replay history, stripped on load
)

// step reads line l. It returns the line's record and true when the line
// is an entry.
func (fw *forward) step(l rawLine) (record, bool, error) {
	if !l.tooLong && blank(l.data) || l.num == 1 && fw.opts.skipLine1 {
		return record{}, false, nil
	}
	if fw.cur.Version == 0 {
		if l.tooLong {
			return record{}, false, fmt.Errorf("%s: line %d: %w: line longer than %d bytes", fw.path, l.num, ErrNoHeader, fw.max)
		}
		kind, slot, h, reason, err := readPreambleLine(l.num, l.data)
		switch {
		case err != nil:
			return record{}, false, fmt.Errorf("%s: line %d: %w (%v)", fw.path, l.num, ErrNoHeader, err)
		case kind == preSlot:
			fw.slot, fw.hasSlot = slot, true
		case kind == preMalformed:
			fw.skip(BadLine{Line: l.num, Kind: BadNotJSON, Reason: reason})
		case kind == preHeader:
			fw.cur.Header, fw.cur.HeaderLine, fw.cur.Version = h, l.num, h.FormatVersion()
			data := l.data
			if l.num == 1 {
				data = TrimBOM(data)
			}
			if fw.rewrite != nil && !jsWhiteSpace(data[len(h.raw):]) {
				fw.rewrite(l.num, rewriteTrailing)
			}
		}
		return record{}, false, nil
	}
	if l.tooLong {
		fw.skip(lineTooLong(l.num, fw.max))
		return record{}, false, nil
	}
	env, err := fw.sc.scan(l.data)
	if err != nil {
		fw.skip(lineError(l.num, err))
		return record{}, false, nil
	}
	if env.bogus && fw.cur.Version < 2 && bytes.TrimLeft(l.data, " \t\r\n")[0] != '[' {
		env.fault = faultV1Primitive
	}
	if fw.cur.Version < 2 {
		// v1: no ids; omp re-ids every entry and chains them in file
		// order. Ours are derived from the position, so they are stable.
		env.id = v1ID(fw.cur.Entries + 1)
		env.parentID = fw.cur.lastID
		if env.keptIndex > 0 {
			env.firstKept = v1ID(env.keptIndex)
		}
	}
	if fw.rewrite != nil {
		if env.size > 0 && !jsWhiteSpace(l.data[env.size:]) {
			fw.rewrite(l.num, rewriteTrailing)
		}
		if env.copilotReplay {
			fw.rewrite(l.num, rewriteCopilotReplay)
		}
	}
	fw.cur.Entries++
	fw.cur.lastID = env.id
	r := newRecord(l.off, len(env.entryBytes(l.data)), l.num, &env, fw.near)
	fw.near = r.id
	return r, true, nil
}

// Cursor is where a forward read of a session file stopped: the start of
// the first line it did not read, and what it had learnt before it (the
// header, how many entries). ReadFrom goes on from a Cursor, so that a
// reader following a growing file (a search index, a sync) reads each
// byte once. The zero Cursor is the start of a file.
type Cursor struct {
	Offset     int64  // the first byte not read
	Line       int    // lines before Offset
	Entries    int    // entries before Offset
	Header     Header // the header, once read
	HeaderLine int    // its line number; 0 until it is read
	Version    int    // the format version; 0 until the header is read
	lastID     string // the last entry's id: a v1 entry's parent
}

// LastID returns the id of the last entry before the cursor, "" if none.
func (c Cursor) LastID() string { return c.lastID }

// WithLastID returns c with its last entry's id set: the one field of a
// Cursor saved elsewhere (a search index) that ReadFrom needs back, for
// the v1 files whose ids are positions.
func (c Cursor) WithLastID(id string) Cursor { c.lastID = id; return c }

// Read is one entry ReadFrom read.
type Read struct {
	// Entry is decoded as Index.Entry decodes it: an entry of a known type
	// whose body does not decode has a nil Body, and Err says why.
	Entry  *Entry
	Err    error
	Offset int64 // where the entry's line starts
	Size   int   // the length of the entry's JSON on its line
	// Truncated, for a line longer than OpenOptions.MaxLineBytes (which
	// Open skips, and ReadStats counts), is its first TruncatedBytes:
	// Entry is then nil. A reader that can use part of an entry (a search
	// index) reads what it can from it; the line is never held whole.
	Truncated []byte
	Line      int // the line's number
}

// TruncatedBytes is how much of a line over the line bound ReadFrom hands
// on (Read.Truncated).
const TruncatedBytes = 1 << 20

// ReadStats count what ReadFrom skipped.
type ReadStats struct {
	Malformed int       // lines skipped as unreadable, as Open skips them
	BadLines  []BadLine // the first 100 of them
}

// ReadFrom reads the session file at path forward from c, calling fn with
// each entry in file order, and returns the cursor after the last complete
// line. A last line without its newline is a write in progress: it is
// left for the next call, which starts at it. Lines are read by the rule
// Open and Index read them (malformed ones skipped and counted, v1 ids by
// position, the title slot and lines before the header skipped); memory
// is bounded by one line (OpenOptions.MaxLineBytes). An error from fn
// stops the read and is returned.
//
// The caller must know the bytes before c.Offset are those it read before:
// ReadFrom cannot tell a rewritten file from a grown one.
func ReadFrom(path string, c Cursor, opts *OpenOptions, fn func(Read) error) (Cursor, ReadStats, error) {
	f, fi, err := openRegular(path, 0)
	if err != nil {
		return c, ReadStats{}, err
	}
	defer f.Close()
	return ReadFromReader(path, f, fi.Size(), c, opts, fn)
}

// ReadFromReader is ReadFrom over the first size bytes of r, named name
// in errors: for a session that is not a file, or bytes about to be
// appended to one (read with the cursor where they will go), by the same
// rule. r need serve only the bytes from c.Offset on.
func ReadFromReader(name string, r io.ReaderAt, size int64, c Cursor, opts *OpenOptions, fn func(Read) error) (Cursor, ReadStats, error) {
	path := name
	if opts == nil {
		opts = &OpenOptions{}
	}
	var st ReadStats
	if c.Offset > size {
		return c, st, fmt.Errorf("%s: %w: %d bytes, read up to %d", path, errShrunk, size, c.Offset)
	}
	// A buffer no bigger than what is left to read: a refresh reads many
	// small files, or the few new lines of a big one.
	rest := size - c.Offset
	lr := newLineReaderSize(io.NewSectionReader(r, c.Offset, rest), c.Offset, opts.MaxLineBytes, int(min(max(rest, 4096), 1<<20)))
	defer lr.release()
	lr.lineNum = c.Line
	lr.keep = TruncatedBytes
	fw := &forward{path: path, opts: opts, max: lr.max, cur: c, skip: func(b BadLine) {
		st.Malformed++
		if len(st.BadLines) < maxBadLines {
			st.BadLines = append(st.BadLines, b)
		}
	}}
	for {
		l, err := lr.next()
		if err == io.EOF || err == nil && !l.eol {
			break
		}
		if err != nil {
			return fw.cur, st, fmt.Errorf("%s: line %d: %w", path, lr.lineNum+1, err)
		}
		rec, ok, err := fw.step(l)
		if err != nil {
			return fw.cur, st, err
		}
		if l.tooLong && fw.cur.Version > 0 && fw.cur.HeaderLine < l.num {
			if err := fn(Read{Truncated: l.data, Offset: l.off, Line: l.num}); err != nil {
				return fw.cur, st, err
			}
		}
		if ok {
			e := &Entry{Type: rec.typeName(), ID: rec.id, ParentID: rec.parentID, raw: append([]byte(nil), l.data[:rec.size]...), line: l.num}
			r := Read{Entry: e, Offset: rec.off, Size: int(rec.size), Line: l.num}
			if err := decodeEntry(e, rec.kept(), fw.cur.Version); err != nil {
				e.Body = nil
				r.Err = fmt.Errorf("%s: line %d: %w", path, l.num, err)
			}
			if err := fn(r); err != nil {
				return fw.cur, st, err
			}
		}
		fw.cur.Offset, fw.cur.Line = l.off+l.size, l.num
	}
	return fw.cur, st, nil
}

// errShrunk is ReadFrom's error for a file shorter than the cursor.
var errShrunk = errors.New("file shrank")

// jsWhiteSpace reports whether b is only what JavaScript's trim() removes:
// the text omp's JSONL reader does not count against a line.
func jsWhiteSpace(b []byte) bool {
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		switch r {
		case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		default:
			if r < 0x2000 || r > 0x200A {
				return false
			}
		}
		b = b[size:]
	}
	return true
}
