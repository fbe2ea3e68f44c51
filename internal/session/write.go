package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"

	"github.com/xdev/xdev/internal/ai"
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
		byID:       map[string]*Entry{},
		memoryOnly: true,
		sync:       opts.Sync,
		opts:       OpenOptions{Blobs: opts.Blobs},
		header: Header{
			Type: "session", Version: CurrentVersion, ID: id, Timestamp: now,
			Cwd: opts.Cwd, ParentSession: opts.ParentSession,
		},
		hasSlot: true,
		slot:    TitleSlot{Title: CleanTitle(opts.Title), Source: opts.TitleSource, UpdatedAt: now, OmpAccepts: true},
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
	return s.ensureOnDisk()
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

func (s *Store) ensureOnDisk() error {
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
	for _, e := range s.entries {
		body.Write(e.raw)
		body.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	if err := writeFileAtomic(s.path, body.Bytes(), true); err != nil {
		return err
	}
	s.header.raw = header
	s.headerLine = 2
	s.size = int64(body.Len())
	s.memoryOnly = false
	return nil
}

// Append adds an entry with the given body as a child of the leaf, writes
// it, and makes it the new leaf.
func (s *Store) Append(body Body) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendBody(body, s.leaf)
}

// AppendAt adds an entry with the given body as a child of parentID ("" for
// a new root) and makes it the leaf.
func (s *Store) AppendAt(parentID string, body Body) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if parentID != "" && s.byID[parentID] == nil {
		return nil, fmt.Errorf("%s: no entry %q", s.path, parentID)
	}
	return s.appendBody(body, parentID)
}

// AppendMessage appends a message entry.
func (s *Store) AppendMessage(m ai.Message) (*Entry, error) {
	return s.Append(&Message{Message: m})
}

func (s *Store) appendBody(body Body, parentID string) (*Entry, error) {
	if m, ok := body.(*Message); ok {
		ext, err := s.externalizeImages(m.Message)
		if err != nil {
			return nil, err
		}
		body = &Message{Message: ext}
	}
	e := &Entry{Type: body.EntryType(), ID: s.freshID(), ParentID: parentID, Timestamp: Now(), Body: body}
	raw, err := encodeEntry(e)
	if err != nil {
		return nil, err
	}
	e.raw = raw
	return e, s.commit(e)
}

// freshID draws entry ids until one is unused in memory.
func (s *Store) freshID() string {
	for {
		if id := NewID(); s.byID[id] == nil {
			return id
		}
	}
}

// commit writes an encoded entry (unless the session is memory-only) and
// adds it to the tree as the new leaf.
func (s *Store) commit(e *Entry) error {
	if s.version < CurrentVersion && !s.memoryOnly {
		return fmt.Errorf("%s: format v%d: %w", s.path, s.version, ErrOldVersion)
	}
	if s.version > CurrentVersion && !s.memoryOnly {
		return fmt.Errorf("%s: format v%d: %w", s.path, s.version, ErrNewerVersion)
	}
	if s.memoryOnly && s.autoPersist {
		if m := e.Message(); m != nil && m.Role == ai.RoleAssistant {
			s.entries = append(s.entries, e)
			if err := s.ensureOnDisk(); err != nil {
				s.entries = s.entries[:len(s.entries)-1]
				return err
			}
			s.index(e)
			return nil
		}
	}
	if !s.memoryOnly {
		if err := s.appendLine(e.raw); err != nil {
			return err
		}
	}
	s.entries = append(s.entries, e)
	s.index(e)
	return nil
}

func (s *Store) index(e *Entry) {
	s.byID[e.ID] = e
	s.leaf = e.ID
	s.stats.Seen++
	s.stats.Retained++
}

// AppendJSON appends an entry given as a JSON object, the way a script
// hands entries to `xdev append`. The object needs a "type"; "id",
// "parentId" and "timestamp" are filled in when absent (parentId with the
// leaf). Members xdev does not model are kept as given. The object is
// validated: a known type must decode, the parent must exist, the id must
// be new.
func (s *Store) AppendJSON(obj []byte) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := jsontext.Value(bytes.TrimSpace(obj))
	if err := v.Compact(); err != nil || v.Kind() != '{' {
		return nil, errors.New("entry is not a JSON object")
	}
	var env struct {
		Type      string          `json:"type"`
		ID        *string         `json:"id"`
		ParentID  *jsontext.Value `json:"parentId"`
		Timestamp *string         `json:"timestamp"`
	}
	if err := json.Unmarshal(v, &env); err != nil {
		return nil, fmt.Errorf("entry envelope: %w", err)
	}
	if env.Type == "" || env.Type == "session" || env.Type == "title" {
		return nil, fmt.Errorf("entry type %q cannot be appended", env.Type)
	}
	e := &Entry{Type: env.Type}
	set := func(name string, value any) error {
		b, err := json.Marshal(value)
		if err == nil {
			v, err = ai.ReplaceMember(v, name, b)
		}
		return err
	}
	var err error
	if env.ID != nil {
		e.ID = *env.ID
		if e.ID == "" || s.byID[e.ID] != nil {
			return nil, fmt.Errorf("entry id %q is empty or already used", e.ID)
		}
	} else {
		e.ID = s.freshID()
		err = errors.Join(err, set("id", e.ID))
	}
	if env.ParentID != nil {
		if k := env.ParentID.Kind(); k == '"' {
			_ = json.Unmarshal(*env.ParentID, &e.ParentID)
		} else if k != 'n' {
			return nil, errors.New("parentId must be a string or null")
		}
		if e.ParentID != "" && s.byID[e.ParentID] == nil {
			return nil, fmt.Errorf("parent %q is not in the session", e.ParentID)
		}
	} else {
		e.ParentID = s.leaf
		var p any
		if s.leaf != "" {
			p = s.leaf
		}
		err = errors.Join(err, set("parentId", p))
	}
	if env.Timestamp != nil {
		e.Timestamp = *env.Timestamp
		if _, terr := ParseTime(e.Timestamp); terr != nil {
			return nil, fmt.Errorf("timestamp %q: %w", e.Timestamp, terr)
		}
	} else {
		e.Timestamp = Now()
		err = errors.Join(err, set("timestamp", e.Timestamp))
	}
	if err != nil {
		return nil, err
	}
	body, derr := decodeBody(e.Type, v)
	if derr != nil {
		return nil, fmt.Errorf("%s entry: %w", e.Type, derr)
	}
	e.Body = body
	e.raw = v
	return e, s.commit(e)
}

// BranchMarker is the customType of xdev's branch marker.
const BranchMarker = "branch"

// Branch moves the leaf to targetID durably. It appends the design's branch
// marker, a custom entry {"customType":"branch","data":{"to":target}}, with
// parentId = target, so that omp, which resumes at the last line and follows
// parentId, lands on the same branch.
func (s *Store) Branch(targetID string) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID[targetID] == nil {
		return nil, fmt.Errorf("%s: no entry %q in memory", s.path, targetID)
	}
	data, _ := json.Marshal(struct {
		To string `json:"to"`
	}{targetID})
	return s.appendBody(&Custom{CustomType: BranchMarker, Data: data}, targetID)
}
