package session

import (
	"io"
	"syscall"
)

// A ScannedEntry is one entry as Scan hands it on: what the scan of its
// line learnt, and its JSON as it is on the line.
type ScannedEntry struct {
	Type      string // the entry's type
	Assistant bool   // a message whose role is assistant
	Line      int    // the line's number
	// JSON is the entry's text on its line (junk after it left off),
	// valid only until the function given it returns.
	JSON []byte
}

// A Scanned is what Scan learnt of a file besides its entries: its
// header, its title and the lines it skipped, as an Index tells them.
type Scanned struct{ s *Store }

// Header returns the session's header.
func (sc Scanned) Header() Header { return sc.s.header }

// Title returns the title and its source, as Index.Title does.
func (sc Scanned) Title() (string, TitleSource) { return sc.s.title() }

// Malformed returns how many lines were skipped as unreadable.
func (sc Scanned) Malformed() int { return sc.s.malformed }

// Scan reads the session file at path as OpenIndex does, by the same
// rule, in one pass that keeps no entry: fn gets each entry in file order
// as its line is read. A reader that wants a few of a file's entries
// once (a usage ledger: the calls) decodes only those, where an Index
// would read every entry's line a second time to be asked of it. fn's
// error stops the scan and is returned.
func Scan(path string, opts *OpenOptions, fn func(ScannedEntry) error) (Scanned, error) {
	if opts == nil {
		opts = &OpenOptions{}
	}
	f, fi, err := openRegular(path, 0)
	if err != nil {
		return Scanned{}, err
	}
	defer f.Close()
	s := &Store{path: path, file: file{size: fi.Size(), ino: fi.Sys().(*syscall.Stat_t).Ino}, opts: *opts}
	err = s.scanEach(io.NewSectionReader(f, 0, fi.Size()), func(l rawLine, rec *record) error {
		return fn(ScannedEntry{Type: rec.typeName(), Assistant: rec.assistant, Line: int(rec.line), JSON: l.data[:rec.size]})
	})
	if err != nil {
		return Scanned{}, err
	}
	return Scanned{s}, nil
}
