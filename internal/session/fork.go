package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/google/uuid"

	"github.com/xdev/xdev/internal/ai"
)

// ForkSession copies the session at src into a new session file at dst (a
// fresh omp-style name beside src when dst is ""), and opens the copy.
//
// The copy has a new title slot and a new header: a new UUIDv7 id, the
// source's id as parentSession, the source's title and source, or label as
// a manual title when label is not empty. Other header members (cwd and
// those xdev does not model) are carried. The entries are the source's,
// byte for byte, so the fork starts as a branch of the same tree with the
// same leaf; image blobs are shared by reference. A v1 or v2 source is
// migrated instead (its entries gain ids), as omp's first write would do.
//
// dst appears atomically and an existing file is never replaced. The source
// is only read.
func ForkSession(src, dst, label string) (*Store, error) {
	f, fi, err := openRegular(src, 0)
	if err != nil {
		return nil, fmt.Errorf("fork: %w", err)
	}
	defer f.Close()
	pre, err := readPreamble(f, src, 0)
	if err != nil {
		return nil, fmt.Errorf("fork: %w", err)
	}
	title, source := pre.title()
	if label = CleanTitle(label); label != "" {
		title, source = label, TitleManual
	}
	child, err := newChild(pre.header, pre.header.ID, title, source)
	if err != nil {
		return nil, err
	}
	child.cacheKey(pre.header)
	if dst == "" {
		dst = filepath.Join(filepath.Dir(src), FileName(child.created, child.id))
	}

	var body func(w io.Writer) error
	if pre.header.FormatVersion() >= CurrentVersion {
		size := fi.Size()
		body = func(w io.Writer) error { return copyEntries(w, f, pre.entriesOff, size) }
	} else {
		s, err := Open(src, &OpenOptions{Full: true})
		if err != nil {
			return nil, err
		}
		lines, err := s.migratedLines(s.entries)
		if err != nil {
			return nil, err
		}
		body = func(w io.Writer) error { return writeLines(w, lines) }
	}
	if err := child.write(dst, body); err != nil {
		return nil, fmt.Errorf("fork %s: %w", src, err)
	}
	return Open(dst, nil)
}

// BranchedSession writes a new session at dst (a fresh name beside src when
// dst is "") holding only the path from the root to entryID of the session
// at src, as omp's createBranchedSession does, and opens it. Its
// parentSession is the source's file path; its title is carried.
//
// omp drops the label entries on the path, which breaks the parent chain
// of whatever followed them. Here the path is copied whole, byte for byte,
// label entries included, and a fresh label entry is chained after the last
// one for each entry on the path whose label in the source (resolved over
// the whole file, last write wins) differs from its label in the copy. So
// the copy has every label the path's entries had, and an unbroken chain.
func BranchedSession(src, dst, entryID string) (*Store, error) {
	s, err := Open(src, &OpenOptions{Full: true})
	if err != nil {
		return nil, err
	}
	if _, ok := s.byID[entryID]; !ok {
		return nil, fmt.Errorf("branch %s: no entry %q", src, entryID)
	}
	path := s.pathTo(entryID)
	lines, err := s.migratedLines(path)
	if err != nil {
		return nil, err
	}
	carried, err := carryLabels(s.entries, path)
	if err != nil {
		return nil, err
	}
	lines = append(lines, carried...)

	abs, err := filepath.Abs(src)
	if err != nil {
		return nil, err
	}
	title, source := s.Title()
	child, err := newChild(s.header, abs, title, source)
	if err != nil {
		return nil, err
	}
	child.header, _ = ai.RemoveMember(child.header, "providerPromptCacheKey")
	if dst == "" {
		dst = filepath.Join(filepath.Dir(src), FileName(child.created, child.id))
	}
	if err := child.write(dst, func(w io.Writer) error { return writeLines(w, lines) }); err != nil {
		return nil, fmt.Errorf("branch %s: %w", src, err)
	}
	return Open(dst, nil)
}

// carryLabels returns label entries, chained after the last entry of path,
// that give each entry on path the label it has in the whole source.
func carryLabels(all, path []*Entry) ([][]byte, error) {
	want := labelsInEffect(all)
	have := labelsInEffect(path)
	used := make(map[string]bool, len(path))
	for _, e := range path {
		used[e.ID] = true
	}
	parent := ""
	if len(path) > 0 {
		parent = path[len(path)-1].ID
	}
	var lines [][]byte
	for _, e := range path {
		if want[e.ID] == have[e.ID] {
			continue
		}
		id := NewID()
		for used[id] {
			id = NewID()
		}
		used[id] = true
		le := &Entry{Type: TypeLabel, ID: id, ParentID: parent, Timestamp: Now(),
			Body: &Label{TargetID: e.ID, Label: want[e.ID]}}
		raw, err := encodeEntry(le)
		if err != nil {
			return nil, err
		}
		lines = append(lines, raw)
		parent = id
	}
	return lines, nil
}

// labelsInEffect resolves label entries as omp does: over the given
// entries in order, the last label per target wins and an empty one clears.
func labelsInEffect(entries []*Entry) map[string]string {
	m := map[string]string{}
	for _, e := range entries {
		if l, ok := e.Body.(*Label); ok {
			if l.Label == "" {
				delete(m, l.TargetID)
			} else {
				m[l.TargetID] = l.Label
			}
		}
	}
	return m
}

// migratedLines returns the lines of entries as a v3 file holds them: the
// raw line for a v3 source; for v1 and v2, the line with the migration omp
// applies on its first write (ids and parentIds appended, firstKeptEntryIndex
// replaced by firstKeptEntryId, the hookMessage role renamed custom).
func (s *Store) migratedLines(entries []*Entry) ([][]byte, error) {
	lines := make([][]byte, 0, len(entries))
	for _, e := range entries {
		line := e.raw
		if s.version < CurrentVersion {
			var err error
			if line, err = migrateLine(s.version, e); err != nil {
				return nil, fmt.Errorf("%s: line %d: %w", s.path, e.line, err)
			}
		}
		lines = append(lines, line)
	}
	return lines, nil
}

func migrateLine(version int, e *Entry) ([]byte, error) {
	line := e.raw
	set := func(name string, v any) error {
		b, err := json.Marshal(v)
		if err == nil {
			line, err = ai.ReplaceMember(line, name, b)
		}
		return err
	}
	var errs []error
	if version < 2 {
		var parent any
		if e.ParentID != "" {
			parent = e.ParentID
		}
		errs = append(errs, set("id", e.ID), set("parentId", parent))
		if c, ok := e.Body.(*Compaction); ok && c.FirstKeptEntryID != nil {
			var err error
			line, err = ai.RemoveMember(line, "firstKeptEntryIndex")
			errs = append(errs, err, set("firstKeptEntryId", *c.FirstKeptEntryID))
		}
	}
	if m, ok := e.Body.(*Message); ok && bytes.Contains(e.raw, []byte(`"hookMessage"`)) {
		var err error
		line, err = ai.ReplaceMember(line, "message", m.Message.Raw())
		errs = append(errs, err)
	}
	return line, errors.Join(errs...)
}

// preamble is the slot and header of a file, and where its entries start.
type preamble struct {
	slot       TitleSlot
	hasSlot    bool
	header     Header
	headerLine int
	entriesOff int64
}

func (p preamble) title() (string, TitleSource) {
	if p.hasSlot {
		return p.slot.Title, p.slot.Source
	}
	src, _ := ParseTitleSource(p.header.TitleSource)
	return p.header.Title, src
}

// readPreamble reads the slot and header of f as Open does.
func readPreamble(f io.Reader, path string, maxLine int) (preamble, error) {
	var p preamble
	lr := newLineReaderSize(f, 0, maxLine, 16<<10) // a slot and a header
	for {
		l, err := lr.next()
		if err == io.EOF {
			return p, fmt.Errorf("%s: %w", path, ErrNoHeader)
		}
		if err != nil {
			return p, fmt.Errorf("%s: line %d: %w", path, lr.lineNum+1, err)
		}
		if l.tooLong {
			return p, fmt.Errorf("%s: line %d: %w: line longer than %d bytes", path, l.num, ErrNoHeader, lr.max)
		}
		if blank(l.data) {
			continue
		}
		if l.num == 1 {
			if slot, ok := ParseTitleSlotSource(l.data); ok {
				p.slot, p.hasSlot = slot, true
				continue
			}
		}
		h, err := parseHeader(l.data)
		if err != nil {
			return p, fmt.Errorf("%s: line %d: %w (%v)", path, l.num, ErrNoHeader, err)
		}
		p.header, p.headerLine, p.entriesOff = h, l.num, l.off+l.size
		return p, nil
	}
}

// child is the slot and header of a session made from another.
type child struct {
	id      string
	created time.Time
	slot    []byte
	header  []byte
}

// newChild derives a header from the source's (keeping its members) with
// a new id and timestamp, version 3, parentSession and the title.
func newChild(src Header, parentSession, title string, source TitleSource) (*child, error) {
	u, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	c := &child{id: u.String(), created: time.Now()}
	now := FormatTime(c.created)
	if source == TitleSubagent {
		source = TitleNone
	}
	if title == "" {
		source = TitleNone
	}
	if c.slot, err = MarshalTitleSlot(title, source, now); err != nil {
		return nil, err
	}
	h := src.raw
	if h == nil {
		if h, err = encodeHeader(src); err != nil {
			return nil, err
		}
	}
	set := func(name string, v any) {
		if err != nil {
			return
		}
		var b []byte
		if b, err = json.Marshal(v); err == nil {
			h, err = ai.ReplaceMember(h, name, b)
		}
	}
	set("version", CurrentVersion)
	set("id", c.id)
	set("timestamp", now)
	set("parentSession", parentSession)
	if title != "" {
		set("title", title)
	} else if err == nil {
		h, err = ai.RemoveMember(h, "title")
	}
	if w := source.wire(); w != "" {
		set("titleSource", w)
	} else if err == nil {
		h, err = ai.RemoveMember(h, "titleSource")
	}
	c.header = h
	return c, err
}

// cacheKey keeps the provider prompt cache warm across a fork, as omp's
// fork() does: the source's key, or the source's id.
func (c *child) cacheKey(src Header) {
	var probe struct {
		Key *string `json:"providerPromptCacheKey"`
	}
	json.Unmarshal(src.raw, &probe, ai.DecodeOptions)
	key := src.ID
	if probe.Key != nil && *probe.Key != "" {
		key = *probe.Key
	}
	b, _ := json.Marshal(key)
	if h, err := ai.ReplaceMember(c.header, "providerPromptCacheKey", b); err == nil {
		c.header = h
	}
}

// write creates dst atomically: slot, header, then what body writes.
func (c *child) write(dst string, body func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	return createFile(dst, func(w io.Writer) error {
		if _, err := w.Write(c.slot); err != nil {
			return err
		}
		if _, err := w.Write(append(c.header, '\n')); err != nil {
			return err
		}
		return body(w)
	})
}

// copyEntries copies bytes [from, to) of f, ending with a newline so a torn
// last line stays one (malformed) line rather than joining the next append.
func copyEntries(w io.Writer, f io.ReaderAt, from, to int64) error {
	if to <= from {
		return nil
	}
	n, err := io.Copy(w, io.NewSectionReader(f, from, to-from))
	if err != nil {
		return err
	}
	if n != to-from {
		return io.ErrUnexpectedEOF
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, to-1); err != nil {
		return err
	}
	if last[0] != '\n' {
		_, err = w.Write([]byte{'\n'})
	}
	return err
}

func writeLines(w io.Writer, lines [][]byte) error {
	for _, l := range lines {
		if _, err := w.Write(l); err != nil {
			return err
		}
		if _, err := w.Write([]byte{'\n'}); err != nil {
			return err
		}
	}
	return nil
}
