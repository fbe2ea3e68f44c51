package session

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"syscall"

	"github.com/xdev/xdev/internal/ai"
)

// Index is a session file read once, forward, as a list of where each
// entry's line is and how it hangs in the tree (type, id, parent), without
// its content. It is for work that goes over a whole file rather than the
// window a context build needs: printing every entry or the tree,
// verifying, exporting, copying a branch. Memory then follows the number
// of entries (about 100 bytes each: 8 MB for the 77,000 entries of a
// 500 MB session), not their size; an entry is read and decoded when
// asked for, one at a time.
//
// The entries are those a full Open keeps, in file order, with the same
// ids (v1 files get theirs from their position) and the same lines
// skipped as malformed. The index holds the file open until Close; it
// never writes.
type Index struct {
	s     *Store // the preamble, counts and options; no entries
	f     io.ReaderAt
	close func() error
	recs  []record
	byID  idTable // built on first use
	ahead lineCache
}

// OpenIndex reads the session file at path into an Index.
func OpenIndex(path string, opts *OpenOptions) (*Index, error) {
	if opts == nil {
		opts = &OpenOptions{}
	}
	f, fi, err := openRegular(path, 0)
	if err != nil {
		return nil, err
	}
	s := &Store{path: path, file: file{size: fi.Size(), ino: fi.Sys().(*syscall.Stat_t).Ino}, opts: *opts}
	recs, err := s.scanFile(io.NewSectionReader(f, 0, fi.Size()))
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Index{s: s, f: f, close: f.Close, recs: recs}, nil
}

// NewIndex reads the session held by r (size bytes) into an Index, by
// OpenIndex's rules, as archive/zip's NewReader is beside OpenReader: a
// session kept elsewhere than in a file (a database's rows) is read
// whole, an entry at a time, without a copy to disk. name names it in
// errors and is its Path. Close does not close r.
func NewIndex(name string, r io.ReaderAt, size int64, opts *OpenOptions) (*Index, error) {
	if opts == nil {
		opts = &OpenOptions{}
	}
	s := &Store{path: name, file: file{size: size}, opts: *opts}
	recs, err := s.scanFile(io.NewSectionReader(r, 0, size))
	if err != nil {
		return nil, err
	}
	return &Index{s: s, f: r, close: func() error { return nil }, recs: recs}, nil
}

// Close releases the file.
func (x *Index) Close() error { return x.close() }

// Path returns the file the index reads.
func (x *Index) Path() string { return x.s.path }

// Header returns the session header.
func (x *Index) Header() Header { return x.s.header }

// HeaderLine returns the header's line number.
func (x *Index) HeaderLine() int { return x.s.headerLine }

// Version returns the file's format version.
func (x *Index) Version() int { return x.s.version }

// Slot returns the title slot and whether the file has one.
func (x *Index) Slot() (TitleSlot, bool) { return x.s.slot, x.s.hasSlot }

// Title returns the title and its source, as Store.Title does.
func (x *Index) Title() (string, TitleSource) { return x.s.titleLocked() }

// Malformed returns how many lines were skipped as unreadable.
func (x *Index) Malformed() int { return x.s.malformed }

// BadLines describes the skipped lines (at most the first 100).
func (x *Index) BadLines() []BadLine { return x.s.badLines }

// TornTail reports whether the file's last line lacked its newline.
func (x *Index) TornTail() bool { return x.s.tornTail }

// Size returns the size of the file when it was indexed.
func (x *Index) Size() int64 { return x.s.size }

// Len returns the number of entries.
func (x *Index) Len() int { return len(x.recs) }

// ID returns the id of entry i (0-based, in file order).
func (x *Index) ID(i int) string { return x.recs[i].id }

// ParentID returns the parent id of entry i ("" for a root).
func (x *Index) ParentID(i int) string { return x.recs[i].parentID }

// Type returns the entry type of entry i.
func (x *Index) Type(i int) string { return x.recs[i].typeName() }

// LoadFault says what in entry i omp's loader throws on, so that omp
// cannot open the file at all (see ompfault.go); "" for nothing.
func (x *Index) LoadFault(i int) string { return string(ompFaults[x.recs[i].fault]) }

// Line returns the 1-based line number of entry i.
func (x *Index) Line(i int) int { return int(x.recs[i].line) }

// LineSize returns the length in bytes of entry i's line.
func (x *Index) LineSize(i int) int { return int(x.recs[i].size) }

// ResolveImages returns m with its image blob references replaced by the
// base64 data they name (from the blob store beside the file, or the
// options'), and how many could not be found.
func (x *Index) ResolveImages(m ai.Message) (ai.Message, int) {
	out, missing := x.s.resolveImages([]ai.Message{m})
	return out[0], missing
}

// Raw reads the line of entry i (without its newline) into a new slice.
func (x *Index) Raw(i int) ([]byte, error) { return x.AppendRaw(nil, i) }

// AppendRaw appends the line of entry i (without its newline) to dst, so
// a caller going over many lines can reuse one buffer.
func (x *Index) AppendRaw(dst []byte, i int) ([]byte, error) {
	r := &x.recs[i]
	n := len(dst)
	dst = slices.Grow(dst, int(r.size))[:n+int(r.size)]
	if err := x.ahead.readAt(x.f, dst[n:], r.off); err != nil {
		return dst[:n], fmt.Errorf("%s: line %d: %w", x.s.path, r.line, err)
	}
	return dst, nil
}

// Prefix reads at most n bytes of the start of entry i's line: what a
// caller needs that reads a member the entry puts first (a conversion's
// source line) without the cost of a long line.
func (x *Index) Prefix(i, n int) ([]byte, error) {
	r := &x.recs[i]
	dst := make([]byte, min(n, int(r.size)))
	if err := x.ahead.readAt(x.f, dst, r.off); err != nil {
		return nil, fmt.Errorf("%s: line %d: %w", x.s.path, r.line, err)
	}
	return dst, nil
}

// lineCache serves an Index's reads of short lines from the last block
// read: the lines are read mostly in file order, so a block of them costs
// one read instead of one a line. A long line is read as it is.
type lineCache struct {
	mu  sync.Mutex
	off int64
	buf []byte
}

const lineCacheBytes = 64 << 10

func (a *lineCache) readAt(f io.ReaderAt, p []byte, off int64) error {
	if len(p) > lineCacheBytes/4 {
		_, err := f.ReadAt(p, off)
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if off < a.off || off+int64(len(p)) > a.off+int64(len(a.buf)) {
		if a.buf == nil {
			a.buf = make([]byte, lineCacheBytes)
		}
		a.buf = a.buf[:cap(a.buf)]
		m, err := f.ReadAt(a.buf, off)
		a.off, a.buf = off, a.buf[:m]
		if m < len(p) {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	copy(p, a.buf[off-a.off:])
	return nil
}

// Entry reads and decodes entry i. An entry of a known type whose body
// does not decode comes back with a nil Body and the error, as a full
// Open keeps it: an opaque node of the tree.
func (x *Index) Entry(i int) (*Entry, error) {
	raw, err := x.Raw(i)
	if err != nil {
		return nil, err
	}
	r := &x.recs[i]
	e := &Entry{Type: r.typeName(), ID: r.id, ParentID: r.parentID, raw: raw, line: int(r.line)}
	if err := decodeEntry(e, r.kept(), x.s.version); err != nil {
		e.Body = nil
		return e, fmt.Errorf("%s: line %d: %w", x.s.path, r.line, err)
	}
	return e, nil
}

// Lookup returns the index of the entry with the given id. Of entries
// that share an id the later one wins, as in omp.
func (x *Index) Lookup(id string) (int, bool) {
	if x.byID.slots == nil {
		x.byID = newIDTable(x.recs)
	}
	return x.byID.lookup(x.recs, id)
}

// Leaf returns the index of the leaf (the last entry), or -1 when there
// are no entries.
func (x *Index) Leaf() int { return len(x.recs) - 1 }

// PathTo returns the indexes of the entries from the root to entry i, as
// Store.EntriesTo does for a full load: the walk follows parent ids and
// stops at a missing parent or a repeated id.
func (x *Index) PathTo(i int) []int {
	var path []int
	seen := make([]bool, len(x.recs))
	for i >= 0 && !seen[i] {
		seen[i] = true
		path = append(path, i)
		p := x.recs[i].parentID
		if p == "" {
			break
		}
		next, ok := x.Lookup(p)
		if !ok {
			break
		}
		i = next
	}
	for a, b := 0, len(path)-1; a < b; a, b = a+1, b-1 {
		path[a], path[b] = path[b], path[a]
	}
	return path
}

// Labels returns the label of every labelled entry, as Store.Labels does:
// over the whole file in order, the last label per target wins and an
// empty one clears it. Only label entries are read.
func (x *Index) Labels() map[string]string { return x.labelsOf(allIndexes(len(x.recs))) }

// labelsOf resolves the label entries among the entries at idx, in that
// order.
func (x *Index) labelsOf(idx []int) map[string]string {
	m := map[string]string{}
	for _, i := range idx {
		if x.recs[i].typeName() != TypeLabel {
			continue
		}
		if e, err := x.Entry(i); err == nil {
			applyLabel(m, e)
		}
	}
	return m
}

// Tree is the shape of an Index's entries: each entry's children in file
// order, and the roots (entries whose parent is none, missing, or itself),
// linked as omp's getTree links them.
type Tree struct {
	Roots       []int
	first, next []int32 // children as linked lists: first child, next sibling
}

// Tree links the entries of x by their parents.
func (x *Index) Tree() *Tree {
	n := x.Len()
	t := &Tree{first: make([]int32, n), next: make([]int32, n)}
	last := make([]int32, n)
	for i := range n {
		t.first[i], t.next[i], last[i] = -1, -1, -1
	}
	for i := range n {
		p, ok := -1, false
		if pid := x.ParentID(i); pid != "" && pid != x.ID(i) {
			p, ok = x.Lookup(pid)
		}
		if !ok || p == i {
			t.Roots = append(t.Roots, i)
			continue
		}
		if last[p] < 0 {
			t.first[p] = int32(i)
		} else {
			t.next[last[p]] = int32(i)
		}
		last[p] = int32(i)
	}
	return t
}

// Children returns the children of entry i in file order.
func (t *Tree) Children(i int) []int {
	var kids []int
	for k := t.first[i]; k >= 0; k = t.next[k] {
		kids = append(kids, int(k))
	}
	return kids
}
