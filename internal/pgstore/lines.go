package pgstore

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/xdev/xdev/internal/searchtext"
	"github.com/xdev/xdev/internal/session"
)

// lineRow is one row of the lines table: a line of a session file, with
// what the core reader read of it when it is an entry.
type lineRow struct {
	off      int64
	seq      int
	entryID  *string // nil for a line that is not an entry (the slot, the header, a torn or junk line)
	parentID *string
	typ      *string
	role     *string
	ts       *int64
	line     []byte // without its '\n'
	doc      *string
	terms    *string // doc's tokens, as the server's search reads them (terms.go)
}

// lineColumns are the lines table's columns a push writes, in lineRow's
// order (values).
var lineColumns = []string{"session", "off", "seq", "entry_id", "parent_id", "type", "role", "ts", "line", "doc", "terms"}

func (r *lineRow) values(key int64) []any {
	return []any{key, r.off, r.seq, r.entryID, r.parentID, r.typ, r.role, r.ts, r.line, r.doc, r.terms}
}

// readOptions are how a push reads session files: as the search index
// reads them, so that the searchable text is the same.
var readOptions = searchtext.ReadOptions

// maxLine bounds the one line a push holds whole: PostgreSQL takes a
// value whole. A longer line fails the push of its file, naming it.
const maxLine = 512 << 20

// scanLines reads the session of size bytes at r (named name) from cursor
// c, handing every complete line after c.Offset to emit: the entries the
// core reader (session.ReadFromReader) reads, with their envelope and
// searchable text, and every other line (the slot, the header, a line
// that is not JSON) as bytes alone, so that the rows put back together
// are the file byte for byte. It returns the cursor after the last
// complete line. An error from emit stops it and is returned.
func scanLines(name string, r io.ReaderAt, size int64, c session.Cursor, emit func(lineRow) error) (session.Cursor, error) {
	raw := bufio.NewReaderSize(io.NewSectionReader(r, c.Offset, size-c.Offset), 256<<10)
	at, seq := c.Offset, c.Line
	// next reads the next raw line, which must start at at.
	next := func() (lineRow, error) {
		line, err := readLine(raw, nil, name, seq+1)
		if err != nil {
			return lineRow{}, err
		}
		seq++
		row := lineRow{off: at, seq: seq, line: line[:len(line)-1]}
		at += int64(len(line))
		return row, nil
	}
	send := emit
	// upTo sends the lines before offset end.
	upTo := func(end int64) error {
		for at < end {
			row, err := next()
			if err != nil {
				return err
			}
			if err := send(row); err != nil {
				return err
			}
		}
		return nil
	}
	cur, _, err := session.ReadFromReader(name, r, size, c, readOptions, func(rd session.Read) error {
		if err := upTo(rd.Offset); err != nil {
			return err
		}
		row, err := next()
		if err != nil {
			return err
		}
		if row.off != rd.Offset {
			return fmt.Errorf("%s: line %d: the entry read at offset %d is not at a line start (%d)", name, row.seq, rd.Offset, row.off)
		}
		if e := rd.Entry; e != nil {
			id, parent, typ := pgText(session.DisplayID(e.ID)), pgText(session.DisplayID(e.ParentID)), pgText(e.Type)
			row.entryID, row.typ = &id, &typ
			if e.ParentID != "" {
				row.parentID = &parent
			}
			if d := searchtext.Of(e); d.Role != "" {
				text := pgText(d.Text)
				t := terms(text)
				row.role, row.doc, row.terms = &d.Role, &text, &t
				if d.TS != 0 {
					row.ts = &d.TS
				}
			}
		}
		return send(row)
	})
	if err != nil {
		return cur, err
	}
	return cur, upTo(cur.Offset)
}

// bytesAt is an io.ReaderAt serving b as if it lay at offset base: a
// line about to be appended, read where it will go.
type bytesAt struct {
	base int64
	b    []byte
}

func (r bytesAt) ReadAt(p []byte, off int64) (int, error) {
	if off < r.base || off-r.base >= int64(len(r.b)) {
		return 0, io.EOF
	}
	n := copy(p, r.b[off-r.base:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// pgText is s as a PostgreSQL text value can hold it: valid UTF-8 without
// NUL. A JSON string may hold both (a "\u0000", a lone surrogate, which
// omp's reader keeps); the line's bytes are stored exact all the same,
// and only the columns a listing or a search reads are cleaned.
func pgText(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// readLine reads one whole line of r, its newline too, into buf (reused),
// for the seq'th line of the file name: a line over maxLine, or one the
// file ends in the middle of, is an error.
func readLine(r *bufio.Reader, buf []byte, name string, seq int) ([]byte, error) {
	line := buf[:0]
	for {
		part, err := r.ReadSlice('\n')
		if len(line)+len(part) > maxLine {
			return nil, fmt.Errorf("%s: line %d is over %d MiB: too long to store", name, seq, maxLine>>20)
		}
		line = append(line, part...)
		if err == nil {
			return line, nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF // the caller was told the line was complete
		}
		return nil, fmt.Errorf("%s: line %d: %w", name, seq, err)
	}
}
