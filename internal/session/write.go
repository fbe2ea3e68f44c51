package session

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/jsonx"
)

// NewOptions describe a new session.
type NewOptions struct {
	Cwd           string // the project directory; required
	ID            string // the session id; a new UUIDv7 when empty
	ParentSession string // a fork's source id, or a subagent's parent file path
	Title         string
	TitleSource   TitleSource
	Sync          SyncMode
	Blobs         *BlobStore
	Lock          LockOptions // the lockfile the store's writes take
	// Started is the header's timestamp; now when zero. A mirror of
	// another harness's session gives its source's start.
	Started time.Time
}

// New returns a memory-only session that will live at path. Nothing is
// written until EnsureOnDisk, or with EnableAutoPersist the first assistant
// message: a session that never answers leaves no file, as in omp.
func New(path string, opts NewOptions) (*Store, error) {
	if opts.Cwd == "" {
		return nil, errors.New("new session: no cwd")
	}
	id := opts.ID
	if id == "" {
		u, err := uuid.NewV7()
		if err != nil {
			return nil, err
		}
		id = u.String()
	}
	now := Now()
	s := &Store{
		path:       path,
		version:    CurrentVersion,
		tree:       tree{byID: map[string]*Entry{}},
		writeState: writeState{memoryOnly: true, sync: opts.Sync},
		opts:       OpenOptions{Blobs: opts.Blobs, Lock: opts.Lock},
		preamble: preamble{
			header: Header{
				Type: "session", Version: CurrentVersion, ID: id, Timestamp: cmp.Or(startedText(opts.Started), now),
				Cwd: opts.Cwd, ParentSession: opts.ParentSession,
			},
			hasSlot: true,
			slot:    TitleSlot{Title: CleanTitle(opts.Title), Source: opts.TitleSource, UpdatedAt: now, OmpAccepts: true},
		},
	}
	if s.slot.Title != "" {
		s.header.Title = s.slot.Title
		s.header.TitleSource = opts.TitleSource.wire()
	}
	return s, nil
}

// Create makes a new session file at path at once (slot and header). It
// fails if a file exists there.
func Create(path string, opts NewOptions) (*Store, error) {
	s, err := New(path, opts)
	if err != nil {
		return nil, err
	}
	if err := s.EnsureOnDisk(); err != nil {
		return nil, err
	}
	return s, nil
}

// SetSync chooses when later appends are synced to disk.
func (s *Store) SetSync(m SyncMode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sync = m
}

// EnsureOnDisk writes a memory-only session to its path: slot, header and
// the entries so far, in one atomic step (a temp file linked into place), so
// no reader ever sees an empty or slot-only file. It never replaces an
// existing file. It does nothing for a session already on disk.
func (s *Store) EnsureOnDisk() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ensureOnDisk(nil)
}

// EnableAutoPersist makes a memory-only session write itself to disk when
// its first assistant message is appended.
func (s *Store) EnableAutoPersist() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.autoPersist = true
}

// OnDisk reports whether the session has a file.
func (s *Store) OnDisk() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.memoryOnly
}

// Preamble returns the title slot and header lines a session made by New
// with opts begins with, as EnsureOnDisk writes them: for a writer that
// streams a new session's entries into a file of its own (an import of a
// 100 MB transcript), where New would hold them all in memory.
func Preamble(opts NewOptions) ([]byte, error) {
	s, err := New("", opts)
	if err != nil {
		return nil, err
	}
	slot, err := MarshalTitleSlot(s.slot.Title, s.slot.Source, s.slot.UpdatedAt)
	if err != nil {
		return nil, err
	}
	header, err := encodeHeader(s.header)
	if err != nil {
		return nil, err
	}
	return append(append(slot, header...), '\n'), nil
}

func (s *Store) ensureOnDisk(pending []*Entry) error {
	if !s.memoryOnly {
		return nil
	}
	slot, err := MarshalTitleSlot(s.slot.Title, s.slot.Source, s.slot.UpdatedAt)
	if err != nil {
		return err
	}
	header, err := encodeHeader(s.header)
	if err != nil {
		return err
	}
	var body bytes.Buffer
	body.Write(slot)
	body.Write(header)
	body.WriteByte('\n')
	for _, e := range append(s.entries[:len(s.entries):len(s.entries)], pending...) {
		body.Write(e.raw)
		body.WriteByte('\n')
	}
	SweepLeftovers(filepath.Dir(s.path))
	if err := writeNewFile(s.path, body.Bytes()); err != nil {
		return err
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		return err
	}
	s.header.raw = header
	s.headerLine = 2
	s.lines = 2 + len(s.entries) + len(pending)
	s.size, s.ino = int64(body.Len()), fi.Sys().(*syscall.Stat_t).Ino
	s.memoryOnly = false
	return nil
}

// Append adds an entry with the given body as a child of the leaf, writes
// it, and makes it the new leaf. On disk the leaf is the file's last entry
// at the moment of writing: if another writer (another xdev, omp) appended
// since the store last looked, the store takes those entries in first and
// chains the new one after them, so concurrent appends never fork the
// session.
func (s *Store) Append(body Body) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendBody(body, nil)
}

// AppendAt adds an entry with the given body as a child of parentID ("" for
// a new root) and makes it the leaf. The parent may lie before the window
// of a windowed store: it is then looked up in the file, and the store
// reloads after the write so that its view follows the new leaf.
func (s *Store) AppendAt(parentID string, body Body) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendBody(body, &parentID)
}

// AppendMessage appends a message entry.
func (s *Store) AppendMessage(m ai.Message) (*Entry, error) {
	return s.Append(&Message{Message: m})
}

// appendBody appends one entry; a nil parent means the leaf at the time
// of writing.
func (s *Store) appendBody(body Body, parent *string) (*Entry, error) {
	if m, ok := body.(*Message); ok {
		ext, err := s.externalizeImages(m.Message)
		if err != nil {
			return nil, err
		}
		body = &Message{Message: ext}
	}
	e := &Entry{Type: body.EntryType(), Timestamp: Now(), Body: body}
	err := s.commit([]*Entry{e}, func() error {
		if parent == nil && s.leafWithoutID() {
			return fmt.Errorf("%s: %w", s.path, ErrLeafWithoutID)
		}
		e.ParentID = s.leaf
		if parent != nil && *parent != "" {
			found, err := s.exist([]string{*parent})
			if err != nil {
				return err
			}
			if !found[*parent] {
				return fmt.Errorf("%s: no entry %q", s.path, *parent)
			}
			if err := s.ompResumesAt(*parent); err != nil {
				return err
			}
		}
		if parent != nil {
			e.ParentID = *parent
		}
		e.ID = s.freshID(nil)
		var err error
		e.raw, err = encodeEntry(e)
		return err
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// freshID draws an entry id unused in memory and not in taken.
func (s *Store) freshID(taken map[string]bool) string {
	return uniqueID(func(id string) bool { return s.byID[id] != nil || taken[id] })
}

// commit writes entries. prepare fills in what depends on the file (the
// parent, the id) and encodes them; on disk it runs under the session's
// lock once the store has taken in what other writers did (see
// lockedWrite). All the lines go in one write; then the entries join the
// tree, the last as the new leaf. Nothing is written when prepare fails.
func (s *Store) commit(es []*Entry, prepare func() error) error {
	if s.memoryOnly {
		if err := prepare(); err != nil {
			return err
		}
		if s.autoPersist && slices.ContainsFunc(es, isAssistant) {
			if err := s.ensureOnDisk(es); err != nil {
				return err
			}
			for _, e := range es {
				s.add(e)
			}
			return nil
		}
		s.addAll(es)
		return nil
	}
	return s.lockedWrite(func() error {
		if err := prepare(); err != nil {
			return err
		}
		lines := make([][]byte, len(es))
		for i, e := range es {
			lines[i] = e.raw
		}
		first, torn := s.lines+1, s.tornTail
		if err := s.appendLines(lines...); err != nil {
			return err
		}
		for i, e := range es {
			e.line = first + i
		}
		s.took(es, torn)
		return nil
	})
}

func isAssistant(e *Entry) bool {
	m := e.Message()
	return m != nil && m.Role == ai.RoleAssistant
}

// addAll adds written entries to the tree. An entry that hangs from one
// outside a windowed store's memory (a branch back past the window) makes
// the store reload, so that its path and context follow the new leaf.
func (s *Store) addAll(es []*Entry) {
	outside := false
	for _, e := range es {
		if e.ParentID != "" && s.byID[e.ParentID] == nil {
			outside = true
		}
		s.add(e)
	}
	if outside && !s.memoryOnly && s.windowed() {
		// The write succeeded; should the reload fail, the store still
		// holds the entries and the file is right.
		_ = s.reload()
	}
}

// took takes in es, just appended. If the append closed a torn last line
// (torn), what that line now is (an entry, or a malformed line) is read
// as a fresh Open reads it: the file is loaded anew.
func (s *Store) took(es []*Entry, torn bool) {
	if torn {
		// The write succeeded; should the reload fail, the store still
		// holds what it held, and the file is right.
		if s.reload() == nil {
			return
		}
	}
	s.addAll(es)
}

// add puts e, the entry after the last one in memory, into the store:
// the one place a store's tree grows (a load builds it, reload replaces
// it), so entries, byID and leaf always agree.
func (s *Store) add(e *Entry) {
	s.entries = append(s.entries, e)
	s.byID[e.ID] = e
	s.leaf = e.ID
	s.stats.Seen++
	s.stats.Retained++
}

// windowed reports whether the store holds less than the whole file.
func (s *Store) windowed() bool { return s.stats.Engaged || s.windowRoot != "" }

// exist reports which of ids are entries of the session: those in memory,
// and for a windowed store, which does not hold every entry, those in the
// file.
func (s *Store) exist(ids []string) (map[string]bool, error) {
	found := make(map[string]bool, len(ids))
	var look []string
	for _, id := range ids {
		if s.byID[id] != nil {
			found[id] = true
		} else if id != "" {
			look = append(look, id)
		}
	}
	if len(look) > 0 && s.windowed() && !s.memoryOnly {
		onDisk, err := s.findOnDisk(look)
		if err != nil {
			return nil, err
		}
		for id := range onDisk {
			found[id] = true
		}
	}
	return found, nil
}

// AppendError says which of the entries given to AppendJSONLines was
// refused (0-based); nothing was written.
type AppendError struct {
	Index int
	Err   error
}

func (e *AppendError) Error() string { return fmt.Sprintf("entry %d: %v", e.Index+1, e.Err) }
func (e *AppendError) Unwrap() error { return e.Err }

// AppendJSON appends an entry given as a JSON object, the way a script
// hands entries to `xdev append`. See AppendJSONLines.
func (s *Store) AppendJSON(obj []byte) (*Entry, error) {
	es, err := s.AppendJSONLines([][]byte{obj})
	if err != nil {
		var ae *AppendError
		if errors.As(err, &ae) {
			return nil, ae.Err
		}
		return nil, err
	}
	return es[0], nil
}

// AppendJSONLines appends entries given as JSON objects, all or none, in
// one write. Each object needs a "type"; "id", "parentId" and "timestamp"
// are filled in when absent (parentId with the entry before it, the first
// with the leaf as the file has it when written). Members xdev does not
// model are kept as given. Every object is validated before anything is
// written: a known type must decode, a parent must exist, an id must be
// new. A refused object is reported as an *AppendError.
func (s *Store) AppendJSONLines(objs [][]byte) ([]*Entry, error) {
	items := make([]appendObject, len(objs))
	es := make([]*Entry, len(objs))
	for i, obj := range objs {
		e, it, err := parseAppendObject(obj)
		if err != nil {
			return nil, &AppendError{Index: i, Err: err}
		}
		es[i], items[i] = e, it
	}
	if blobs := s.blobStore(); blobs != nil {
		// Large images go to the blob store before the line that names them
		// is written, as omp writes them.
		for i := range items {
			v, changed, err := externalizeValue(items[i].val, "", blobs)
			if err != nil {
				return nil, &AppendError{Index: i, Err: err}
			}
			if changed {
				items[i].val, items[i].v = v, v.JSON()
				if es[i].Body, err = decodeBody(es[i].Type, items[i].v); err != nil {
					return nil, &AppendError{Index: i, Err: err}
				}
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.commit(es, func() error {
		// The ids and parents given, checked against the file as it is now.
		var given []string
		for i, e := range es {
			if items[i].hasID {
				given = append(given, e.ID)
			}
			if items[i].hasParent {
				given = append(given, e.ParentID)
			}
		}
		exists, err := s.exist(given)
		if err != nil {
			return err
		}
		batch := map[string]bool{}
		leaf := s.leaf
		for i, e := range es {
			it := &items[i]
			if it.hasID {
				if exists[e.ID] || batch[e.ID] {
					return &AppendError{Index: i, Err: fmt.Errorf("entry id %q is already used", e.ID)}
				}
			} else {
				e.ID = s.freshID(batch)
			}
			if !it.hasParent {
				if i == 0 && s.leafWithoutID() {
					return &AppendError{Index: i, Err: ErrLeafWithoutID}
				}
				e.ParentID = leaf
			} else if e.ParentID != "" && !exists[e.ParentID] && !batch[e.ParentID] {
				return &AppendError{Index: i, Err: fmt.Errorf("parent %q is not in the session", e.ParentID)}
			}
			batch[e.ID] = true
			leaf = e.ID
		}
		for i, e := range es {
			it := &items[i]
			v, err := setMembers(it.v, !it.hasID, e.ID, !it.hasParent, e.ParentID, !it.hasTS, e.Timestamp)
			if err != nil {
				return &AppendError{Index: i, Err: err}
			}
			e.raw = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return es, nil
}

// appendObject is what parseAppendObject found in an object.
type appendObject struct {
	v                       jsontext.Value
	val                     jsonx.Value // v as JSON.parse reads it
	hasID, hasParent, hasTS bool
}

// parseAppendObject checks one object given to AppendJSONLines on its
// own: JSON as JSON.parse reads it (lone surrogate escapes included), a
// type that may be appended, the envelope's types, a message with a role.
func parseAppendObject(obj []byte) (*Entry, appendObject, error) {
	line := bytes.Clone(bytes.TrimSpace(obj))
	val, err := jsonx.Parse(line)
	if err != nil || val.Kind() != jsonx.Object {
		return nil, appendObject{}, errors.New("entry is not a JSON object")
	}
	typ, _ := val.Get("type").Text()
	if typ == "" || typ == "session" || typ == "title" {
		return nil, appendObject{}, fmt.Errorf("entry type %q cannot be appended", typ)
	}
	e := &Entry{Type: typ}
	id, parent, ts := val.Get("id"), val.Get("parentId"), val.Get("timestamp")
	o := appendObject{v: line, val: val, hasID: id.Defined(), hasParent: parent.Defined(), hasTS: ts.Defined()}
	if o.hasID {
		var ok bool
		if e.ID, ok = id.Text(); !ok {
			return nil, o, errors.New("entry id must be a string")
		}
		if e.ID == "" {
			return nil, o, errors.New("entry id is empty")
		}
	}
	switch parent.Kind() {
	case jsonx.String:
		e.ParentID = parent.String()
	case jsonx.Null, jsonx.Undefined:
	default:
		return nil, o, errors.New("parentId must be a string or null")
	}
	if o.hasTS {
		var ok bool
		if e.Timestamp, ok = ts.Text(); !ok {
			return nil, o, errors.New("timestamp must be a string")
		}
		if _, err := ParseTime(e.Timestamp); err != nil {
			return nil, o, fmt.Errorf("timestamp %q: %w", e.Timestamp, err)
		}
	} else {
		e.Timestamp = Now()
	}
	if typ == TypeMessage {
		if role, _ := val.Get("message").Get("role").Text(); role == "" {
			return nil, o, errors.New("message entry needs a message with a role")
		}
	}
	body, err := decodeBody(e.Type, line)
	if err != nil {
		return nil, o, fmt.Errorf("%s entry: %w", e.Type, err)
	}
	e.Body = body
	return e, o, nil
}

// setMembers fills in the envelope members the object lacked.
func setMembers(v jsontext.Value, setID bool, id string, setParent bool, parent string, setTS bool, ts string) (jsontext.Value, error) {
	ed := jsonx.Edit(v)
	if setID {
		ed.Set("id", id)
	}
	if setParent {
		ed.SetRaw("parentId", IDValue(parent).JSON()) // a key: see ids.go
	}
	if setTS {
		ed.Set("timestamp", ts)
	}
	return ed.Bytes()
}

// branchMarker is the customType of xdev's branch marker.
const branchMarker = "branch"

// Branch moves the leaf to targetID durably. It appends the design's branch
// marker, a custom entry {"customType":"branch","data":{"to":target}}, with
// parentId = target, so that omp, which resumes at the last line and follows
// parentId, lands on the same branch.
func (s *Store) Branch(targetID string) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, _ := jsonx.Marshal(struct {
		To jsontext.Value `json:"to"`
	}{IDValue(targetID).JSON()})
	if targetID == "" {
		return nil, fmt.Errorf("%s: no entry to branch to", s.path)
	}
	return s.appendBody(&Custom{CustomType: branchMarker, Data: data}, &targetID)
}

// SyncMode says when appends reach stable storage.
type SyncMode int

const (
	// SyncNever leaves appends in the page cache, as omp does: they survive
	// a crash of the process but not of the machine.
	SyncNever SyncMode = iota
	// SyncEveryEntry fdatasyncs after every append.
	SyncEveryEntry
)

// ErrOldVersion is returned when appending to a file in format v1 or v2:
// omp would re-id and rewrite such a file on its next write, so a v3 entry
// appended to it would not mean what it says.
var ErrOldVersion = errors.New("file is in an old format version; fork it to get a v3 copy")

// ErrNewerVersion is returned when appending to a file whose header claims
// a format newer than v3: xdev reads it as v3 (as omp does) but does not
// know what a writer of that version expects, so it does not write.
var ErrNewerVersion = errors.New("file is in a newer format version than this xdev writes")

// ompResumesAt returns nil when omp can rebuild the context at entry id,
// which a write is about to make the leaf's parent, and why not otherwise
// (see ErrOmpWouldRefuse). It reads the file through an Index, so a
// windowed store can check a path it does not hold; a session not yet on
// disk has nothing of another writer's to throw on. s.mu must be held.
func (s *Store) ompResumesAt(id string) error {
	if s.memoryOnly {
		return nil
	}
	x, err := OpenIndex(s.path, &s.opts)
	if err != nil {
		return err
	}
	defer x.Close()
	i, ok := x.Lookup(id)
	if !ok {
		return fmt.Errorf("%s: no entry %q", s.path, id)
	}
	if err := x.ompResumesAt(i); err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	return nil
}

// ErrLeafWithoutID is returned when appending after the session's last
// entry, which has no id (a line from another writer): the new entry
// could not name it as its parent, so it would start a new root, and omp,
// which resumes at the last line, would resume that alone. Branching to an
// entry first (Branch) gives the appends a parent.
var ErrLeafWithoutID = errors.New("the session's last entry has no id, so an entry appended after it would start a new conversation that omp resumes alone; branch to an entry first (xdev branch)")

// leafWithoutID reports whether the leaf is an entry without an id. s.mu
// must be held, and the store be up to date with the file.
func (s *Store) leafWithoutID() bool {
	return s.leaf == "" && len(s.entries) > 0
}

// maxCatchUp is how many bytes another writer may have appended before a
// write reads them in as entries; beyond it the store reloads the file
// (windowed), so memory stays bounded however much was appended.
const maxCatchUp = 8 << 20

// writer holds the append descriptor of an on-disk session.
type writer struct {
	f *os.File
}

// checkWritable refuses to write a file in a format version xdev does not
// write. s.mu must be held.
func (s *Store) checkWritable() error {
	switch {
	case s.memoryOnly:
		return nil
	case s.version < CurrentVersion:
		return fmt.Errorf("%s: format v%d: %w", s.path, s.version, ErrOldVersion)
	case s.version > CurrentVersion:
		return fmt.Errorf("%s: format v%d: %w", s.path, s.version, ErrNewerVersion)
	}
	return nil
}

// lockedWrite runs one write to an on-disk session under its lockfile.
// First it brings the store up to date with the file (see syncWithFile),
// so that build, which encodes what is to be written, sees the file's real
// leaf and ids, not the ones the store read earlier. Then write does the
// writing. If either fails, the lock is dropped and the file is as it was.
// s.mu must be held.
//
// The lockfile is kept for the lock's linger after the write (see holdLock), so a
// burst of writes pays for one lockfile. While it is held no writer that
// follows the protocol can touch the file, so the file is re-read only
// when the lock was not held since our last write, or its size is not the
// one we left.
func (s *Store) lockedWrite(write func() error) (err error) {
	if s.readOnly {
		return fmt.Errorf("%s: %w", s.path, ErrReadOnly)
	}
	fresh := s.lease != nil && s.leaseFresh && s.w != nil
	if fresh {
		// Writers that follow the protocol wait for our lock; one that does
		// not (or a stale-lock breaker) shows as a size we did not write.
		fi, err := s.w.f.Stat()
		fresh = err == nil && fi.Size() == s.size
	}
	if err := s.holdLock(); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			s.dropLock()
		} else {
			s.leaseFresh = true
			s.releaseLater()
		}
	}()
	if !fresh {
		if err := s.syncWithFile(); err != nil {
			return err
		}
	}
	if err := s.checkWritable(); err != nil {
		return err
	}
	return write()
}

// syncWithFile takes in what other writers did to the file since the
// store last read or wrote it: a retitle (the slot rewritten in place),
// entries appended (read in, so the leaf is the file's last entry), or the
// file replaced or shortened (an omp rewrite): then it is loaded anew.
// s.mu and the lock must be held.
func (s *Store) syncWithFile() error {
	fi, err := os.Stat(s.path)
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	ino := fi.Sys().(*syscall.Stat_t).Ino
	if s.w != nil && s.ino != ino {
		s.w.f.Close()
		s.w = nil
	}
	if s.w == nil {
		f, err := os.OpenFile(s.path, os.O_RDWR|os.O_APPEND, 0)
		if err != nil {
			return fmt.Errorf("%s: %w", s.path, err)
		}
		s.w = &writer{f: f}
	}
	// The descriptor's size, not the path's: the file may have been
	// replaced since the stat above.
	fi, err = s.w.f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	ino = fi.Sys().(*syscall.Stat_t).Ino
	switch size := fi.Size(); {
	case ino != s.ino || size < s.size || size-s.size > maxCatchUp:
		return s.reload()
	case size > s.size:
		if err := s.catchUp(size); err != nil {
			return err
		}
	}
	return s.rereadSlot()
}

// reload reads the file again (as Open does, with the store's options) and
// takes its state, keeping the store's descriptor, lock and settings.
func (s *Store) reload() error {
	n, err := Open(s.path, &s.opts)
	if err != nil {
		return err
	}
	s.slot, s.hasSlot, s.header, s.headerLine, s.version = n.slot, n.hasSlot, n.header, n.headerLine, n.version
	s.entries, s.byID, s.leaf = n.entries, n.byID, n.leaf
	s.windowRoot, s.prefix = n.windowRoot, n.prefix
	s.malformed, s.badLines, s.tornTail = n.malformed, n.badLines, n.tornTail
	s.stats, s.size, s.lines, s.ino = n.stats, n.size, n.lines, n.ino
	return nil
}

// catchUp reads the entries another writer appended, from s.size to size,
// into the store, by the forward step every forward reader takes
// (ReadFromReader): blank lines skipped, malformed ones counted. A v1
// file (whose ids are positions among all its entries), a store whose
// window a new entry reaches outside of, and a file that ended or ends in
// a torn line (which a load reads as an entry or counts as malformed,
// depending on what it holds) are loaded anew instead, so the store
// always shows what a fresh Open shows.
func (s *Store) catchUp(size int64) error {
	if s.version < 2 {
		return s.reload()
	}
	f := s.w.f
	c := Cursor{Offset: s.size, Line: s.lines, Header: s.header, HeaderLine: s.headerLine, Version: s.version}
	if s.size > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], s.size-1); err != nil {
			return fmt.Errorf("%s: %w", s.path, err)
		}
		if last[0] != '\n' {
			// We stopped inside a torn line, which another writer may
			// have finished into an entry: read it all again, as a fresh
			// Open would.
			return s.reload()
		}
	}
	windowed := s.windowed()
	outside := errors.New("outside the window")
	cur, st, err := ReadFromReader(s.path, f, size, c, &s.opts, func(r Read) error {
		switch e := r.Entry; {
		case e == nil:
			return nil // a line over the bound, counted in st
		case r.Err != nil:
			s.skip(lineError(r.Line, r.Err))
		case windowed && e.ParentID != "" && s.byID[e.ParentID] == nil:
			return outside
		default:
			s.add(e)
		}
		return nil
	})
	if errors.Is(err, outside) {
		return s.reload()
	}
	if err != nil {
		return fmt.Errorf("%s: reading what another writer appended: %w", s.path, err)
	}
	s.malformed += st.Malformed
	for _, b := range st.BadLines {
		if len(s.badLines) < maxBadLines {
			s.badLines = append(s.badLines, b)
		}
	}
	if cur.Offset < size {
		// It ends in a torn line, which a load reads as it reads any line
		// (an entry if it parses, else malformed): read it so.
		return s.reload()
	}
	s.size, s.lines, s.tornTail = size, cur.Line, false
	return nil
}

// findOnDisk reports which of ids are the id of an entry in the file. It
// reads the file forward, parsing the envelope only of lines that hold one
// of the ids, so a windowed store can check an entry it does not hold.
func (s *Store) findOnDisk(ids []string) (map[string]bool, error) {
	found := make(map[string]bool, len(ids))
	f, _, err := openRegular(s.path, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	quoted := make([][]byte, len(ids))
	for i, id := range ids {
		quoted[i] = IDValue(id).JSON()
	}
	// Every JSON object after the header is an entry, typed or not.
	if _, err := f.Seek(s.entriesOff, io.SeekStart); err != nil {
		return nil, err
	}
	lr := newLineReader(f, s.entriesOff, s.opts.MaxLineBytes)
	var sc scanner
	for len(found) < len(ids) {
		l, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.path, err)
		}
		// A line that names none of the ids as written is passed over,
		// unless it spells something with escapes ("\u0061…"): then only
		// its envelope can tell.
		if l.tooLong || !slices.ContainsFunc(quoted, func(q []byte) bool { return bytes.Contains(l.data, q) }) && bytes.IndexByte(l.data, '\\') < 0 {
			continue
		}
		if env, err := sc.scan(l.data); err == nil && !env.bogus {
			if slices.Contains(ids, env.id) {
				found[env.id] = true
			}
		}
	}
	return found, nil
}

// rereadSlot reads line 1 again: another process may have retitled the
// session in place.
func (s *Store) rereadSlot() error {
	if !s.hasSlot {
		return nil
	}
	buf := make([]byte, TitleSlotWidth)
	n, err := s.w.f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return fmt.Errorf("%s: reading the title slot: %w", s.path, err)
	}
	if slot, ok := ParseTitleSlot(buf[:n]); ok {
		s.slot = slot
	}
	return nil
}

// appendLines writes lines, each plus '\n', at the end of the file in one
// write. If the file's last byte is not a newline (a torn tail left by a
// crash), a newline goes first, in the same write, so the new entry is
// never glued onto the torn one. A failed write is truncated back so no
// partial line remains. It runs inside lockedWrite.
func (s *Store) appendLines(lines ...[]byte) error {
	f := s.w.f
	size := s.size
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	buf := make([]byte, 0, n+1)
	if size > 0 && s.tornTail {
		buf = append(buf, '\n')
	}
	for _, l := range lines {
		buf = append(buf, l...)
		buf = append(buf, '\n')
	}
	w, err := diskWrite(f, buf)
	if err != nil || w != len(buf) {
		if terr := diskTruncate(f, size); terr != nil {
			err = errors.Join(err, fmt.Errorf("truncating the partial line: %w", terr))
		}
		if err == nil {
			err = io.ErrShortWrite
		}
		return fmt.Errorf("%s: append: %w", s.path, err)
	}
	if s.sync == SyncEveryEntry {
		if err := fdatasync(f); err != nil {
			return fmt.Errorf("%s: sync: %w", s.path, err)
		}
	}
	s.size = size + int64(w)
	s.tornTail = false
	s.lines += len(lines)
	return nil
}

// truncateBack undoes an append when the operation it was part of failed
// afterwards: the file goes back to size bytes and lines lines. It runs
// inside lockedWrite.
func (s *Store) truncateBack(size int64, lines int) error {
	if err := diskTruncate(s.w.f, size); err != nil {
		return fmt.Errorf("%s: undoing the append: %w", s.path, err)
	}
	s.size, s.lines = size, lines
	return nil
}

// Sync flushes appended entries to stable storage, for callers that sync
// once per turn rather than per entry.
func (s *Store) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return nil
	}
	return fdatasync(s.w.f)
}

// Close releases the store's file descriptor. The store stays readable.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLock()
	if s.w == nil {
		return nil
	}
	err := s.w.f.Close()
	s.w = nil
	return err
}

func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// startedText is t in a header's form, or "" for the zero time.
func startedText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return FormatTime(t)
}
