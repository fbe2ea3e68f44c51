package session

import (
	"errors"
	"path/filepath"

	"github.com/xdev/xdev/internal/atomicfile"
)

// A NewFile is a session file being written whole, an entry at a time,
// from entries made elsewhere (an import's, a mirror's conversion): its
// slot and header as Create writes them, then each entry as one line.
// Nothing is at the path until Commit puts the whole file there at once
// (internal/atomicfile: a nameless file linked or renamed into place), so
// a writer killed or failing part-way leaves nothing. Its writes go
// through the store's disk seam (disk.go), as every write of the store
// does.
type NewFile struct {
	path    string
	replace bool
	t       *atomicfile.Temp
	w       seamWriter // over t, which buffers
	err     error
}

// StartFile starts a new session file for path, with the slot and header
// of opts (as Create makes them). With replace, Commit replaces a file at
// path: a cache's (a mirror), written unsynced (atomicfile.Temp.ForCache:
// its reader checks it; syncing each of the thousands a refresh writes
// was most of its time); without, it fails if one is there.
func StartFile(path string, opts NewOptions, replace bool) (*NewFile, error) {
	pre, err := Preamble(opts)
	if err != nil {
		return nil, err
	}
	SweepLeftovers(filepath.Dir(path))
	t, err := atomicfile.NewTemp(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return nil, err
	}
	if replace {
		t.ForCache()
	}
	f := &NewFile{path: path, replace: replace, t: t, w: seamWriter{t}}
	f.write(pre)
	return f, f.err
}

func (f *NewFile) write(b []byte) {
	if f.err == nil {
		_, f.err = f.w.Write(b)
	}
}

// WriteEntry writes one entry, its JSON object as one line. An entry
// holding a newline would be two lines: it is refused, and the file with
// it.
func (f *NewFile) WriteEntry(entry []byte) error {
	if len(entry) == 0 || entry[0] != '{' {
		f.fail(errors.New("an entry is a JSON object"))
	}
	for _, c := range entry {
		if c == '\n' {
			f.fail(errors.New("an entry holds a newline"))
			break
		}
	}
	f.write(entry)
	f.write([]byte{'\n'})
	return f.err
}

func (f *NewFile) fail(err error) {
	if f.err == nil {
		f.err = err
	}
}

// Commit puts the whole file in place, or, after any error, nothing.
func (f *NewFile) Commit() error {
	if f.err != nil {
		f.t.Abort()
		return f.err
	}
	if f.replace {
		return f.t.Rename(f.path)
	}
	return f.t.Link(f.path)
}

// Abort drops the file; nothing was put at the path.
func (f *NewFile) Abort() { f.t.Abort() }
