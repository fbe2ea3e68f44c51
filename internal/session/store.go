package session

import (
	"sync"
	"time"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/jsonx"
)

// Store is an open session: its header, title and the entries in memory.
// Its methods are safe for concurrent use.
type Store struct {
	mu sync.Mutex

	path     string
	opts     OpenOptions
	readOnly bool // OpenReader's: every write fails with ErrReadOnly
	// keepParsed: the load keeps its kept lines' parsed values for the
	// first context build (decodeRecords).
	keepParsed bool
	preamble
	version int

	tree
	window
	diag
	file
	writeState
}

// tree is the part of the session in memory. Invariants: entries are in
// file order; byID maps each id to the last entry with it (as omp's Map);
// leaf is the id of the last entry ("" for an id-less one, or none).
type tree struct {
	entries []*Entry
	byID    map[string]*Entry
	leaf    string
}

// window says where a windowed load cut the path: a walk toward the root
// that reaches windowRoot (the window's first entry on the path) continues
// with prefix, the settings entries from further up the path that still
// apply. windowRoot is "" when nothing was cut.
type window struct {
	windowRoot string
	prefix     []*Entry
	prefixAt   []int32 // record indexes of prefix, while Open decodes
}

// diag is what a load skipped: malformed counts every skipped line,
// badLines describes the first maxBadLines of them; nullLines counts the
// lines that are JSON null (omp's loader throws on the first, firstNull).
type diag struct {
	malformed int
	badLines  []BadLine
	nullLines int
	firstNull int
	tornTail  bool
	stats     WindowStats
	// rewrites are the lines that make omp rewrite the whole file on its
	// next write though it reads their entries, by reason (a forward scan
	// sees them): how many, and the first maxBadLines line numbers.
	rewrites [2]struct {
		count int
		lines []int
	}
}

// file is the file as this store last read or wrote it; a writer compares
// it with the file under the lock to see what other writers did.
type file struct {
	size  int64  // the file size
	ino   uint64 // the inode: a rewrite by omp replaces it
	mtime int64  // its modification time (ns) when opened; 0 for no file
	lines int    // the line count
}

// writeState is the writer: nil until the first write; the lease on the
// lockfile while it is held across a burst of writes (LockOptions.Linger); and the
// lazy-persistence switches of a session with no file yet.
type writeState struct {
	w           *writer
	lease       *fileLock
	leaseFresh  bool        // the last write under lease was ours: the file is as we left it
	leaseUntil  time.Time   // when the lease lapses
	leaseTimer  *time.Timer // releases the lease
	memoryOnly  bool        // no file yet: see New and EnsureOnDisk
	autoPersist bool        // materialize on the first assistant message
	sync        SyncMode
}

// Path returns the file the store reads and appends to.
func (s *Store) Path() string { return s.path }

// Header returns the session header.
func (s *Store) Header() Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.header
}

// ID returns the session id from the header.
func (s *Store) ID() string { return s.Header().ID }

// Version returns the format version of the file as written on disk.
func (s *Store) Version() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// Title returns the current title and its source. The slot is
// authoritative, as in omp; without a slot the header's title is used.
func (s *Store) Title() (string, TitleSource) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.titleLocked()
}

func (s *Store) titleLocked() (string, TitleSource) { return s.title() }

// TitleValue returns the title as omp holds it: the slot's string, else
// the header's "title" of whatever type it has there (a number stays a
// number; undefined when there is none). Title gives its text.
func (s *Store) TitleValue() jsonx.Value {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, _ := s.titleValue()
	return v
}

// Slot returns the decoded title slot and whether the file has one.
func (s *Store) Slot() (TitleSlot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.slot, s.hasSlot
}

// LeafID returns the id of the current leaf: the last entry in the file
// unless the store was re-pointed since.
func (s *Store) LeafID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leaf
}

// Entries returns the entries in memory, in file order.
func (s *Store) Entries() []*Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Entry(nil), s.entries...)
}

// Entry returns the entry with the given id, if it is in memory.
func (s *Store) Entry(id string) (*Entry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byID[id]
	return e, ok
}

// Malformed returns how many lines were skipped as unreadable. A windowed
// load counts the lines that are not JSON objects wherever they are, but
// lines JSON.parse rejects only where it decodes them (on the leaf's path);
// OpenOptions.Full, an Index and Verify count every line.
func (s *Store) Malformed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.malformed
}

// BadLines describes the skipped lines (at most the first 100).
func (s *Store) BadLines() []BadLine {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]BadLine(nil), s.badLines...)
}

// TornTail reports whether the file's last line lacked its newline when read.
func (s *Store) TornTail() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tornTail
}

// WindowStats reports how much of the file Open kept in memory.
func (s *Store) WindowStats() WindowStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// decodeEntry fills in the timestamp and body of e from its raw line, as
// the store's format version reads it.
// A windowed load of a small window keeps the parsed line for the first
// context build (see decodeRecords).
func (s *Store) decodeEntry(e *Entry, kept string) error {
	v, err := decodeEntryValue(e, kept, s.version)
	if s.keepParsed {
		e.parsed = v
	}
	return err
}

// keepParsedBytes is the largest window whose parsed lines a load keeps
// for the first context build.
const keepParsedBytes = 4 << 20

// decodeEntry fills in the timestamp and body of e from its raw line, read
// as omp reads it: JSON.parse, then whatever fields have the expected
// types (see jsonx.Decode). Only a line that is not JSON fails.
func decodeEntry(e *Entry, kept string, version int) error {
	_, err := decodeEntryValue(e, kept, version)
	return err
}

// decodeEntryValue is decodeEntry that also returns the parsed line.
func decodeEntryValue(e *Entry, kept string, version int) (jsonx.Value, error) {
	// The entry's line is its own and never changes: the body shares it.
	v, err := jsonx.ParseOwned(e.raw)
	if err != nil {
		return jsonx.Value{}, err
	}
	e.Timestamp, _ = v.Get("timestamp").Text()
	body := newBody(e.Type)
	if body != nil {
		jsonx.Decode(v, body)
	}
	e.Body = body
	switch b := body.(type) {
	case *Compaction:
		if b.FirstKeptEntryID == nil && kept != "" {
			b.FirstKeptEntryID = &kept
		}
	case *Message:
		if version < 3 && b.Message.Role == ai.RoleHookMessage {
			// v2 → v3 renames hookMessage to custom.
			b.Message.DecodeJS(v.Get("message").With("role", jsonx.Str(string(ai.RoleCustom))))
		}
	}
	return v, nil
}

// pathTo returns the entries from the root to id, in order. The walk stops
// at a dangling parent or a repeated id; when it stops at the window's cut,
// the settings entries kept from before the window come first.
func (s *Store) pathTo(id string) []*Entry {
	var path []*Entry
	seen := make(map[string]bool)
	e := s.byID[id]
	for e != nil && !seen[e.ID] {
		seen[e.ID] = true
		path = append(path, e)
		if s.windowRoot != "" && e.ID == s.windowRoot {
			for i := len(s.prefix) - 1; i >= 0; i-- {
				path = append(path, s.prefix[i])
			}
			break
		}
		if e.ParentID == "" {
			break
		}
		e = s.byID[e.ParentID]
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}

// EntriesTo returns the entries from the root to id in order: the branch
// that ends at id, as a transcript shows it. With a windowed Open it
// starts at the window (after the settings kept from before it); open
// with OpenOptions.Full for the whole branch.
func (s *Store) EntriesTo(id string) []*Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pathTo(id)
}

// Labels returns the label of every labelled entry, resolved as omp
// resolves them: over the whole file in order, the last label per target
// wins and an empty one clears it.
func (s *Store) Labels() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return labelsInEffect(s.entries)
}

// ResolveImages returns m with its image blob references replaced by the
// base64 data they name, and how many could not be found.
func (s *Store) ResolveImages(m ai.Message) (ai.Message, int) {
	out, missing := s.resolveImages([]ai.Message{m})
	return out[0], missing
}
