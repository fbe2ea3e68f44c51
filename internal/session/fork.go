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
	switch v := pre.header.FormatVersion(); {
	case v > CurrentVersion:
		return nil, fmt.Errorf("fork %s: format v%d: %w", src, v, ErrNewerVersion)
	case v == CurrentVersion:
		size := fi.Size()
		body = func(w io.Writer) error { return copyEntries(w, f, pre.entriesOff, size) }
	default:
		x, err := OpenIndex(src, nil)
		if err != nil {
			return nil, err
		}
		defer x.Close()
		body = func(w io.Writer) error { return x.writeMigrated(w, allIndexes(x.Len()), nil) }
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
	x, err := OpenIndex(src, nil)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	if v := x.Version(); v > CurrentVersion {
		return nil, fmt.Errorf("branch %s: format v%d: %w", src, v, ErrNewerVersion)
	}
	at, ok := x.Lookup(entryID)
	if !ok {
		return nil, fmt.Errorf("branch %s: no entry %q", src, entryID)
	}
	path := x.PathTo(at)
	ids := make([]string, len(path))
	for k, i := range path {
		ids[k] = x.ID(i)
	}
	carried, err := carryLabels(x.Labels(), x.labelsOf(path), ids)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(src)
	if err != nil {
		return nil, err
	}
	title, source := x.Title()
	child, err := newChild(x.Header(), abs, title, source)
	if err != nil {
		return nil, err
	}
	child.header, _ = ai.RemoveMember(child.header, "providerPromptCacheKey")
	if dst == "" {
		dst = filepath.Join(filepath.Dir(src), FileName(child.created, child.id))
	}
	err = child.write(dst, func(w io.Writer) error {
		if err := x.writeMigrated(w, path, nil); err != nil {
			return err
		}
		return writeLines(w, carried)
	})
	if err != nil {
		return nil, fmt.Errorf("branch %s: %w", src, err)
	}
	return Open(dst, nil)
}

// carryLabels returns label entries, chained after the last of path (the
// ids of a branch, root first), that give each entry on path the label
// want has for it, where have (the labels the path itself sets) differs.
func carryLabels(want, have map[string]string, path []string) ([][]byte, error) {
	used := make(map[string]bool, len(path))
	for _, id := range path {
		used[id] = true
	}
	parent := ""
	if len(path) > 0 {
		parent = path[len(path)-1]
	}
	var lines [][]byte
	for _, id := range path {
		if want[id] == have[id] {
			continue
		}
		nid := NewID()
		for used[nid] {
			nid = NewID()
		}
		used[nid] = true
		le := &Entry{Type: TypeLabel, ID: nid, ParentID: parent, Timestamp: Now(),
			Body: &Label{TargetID: id, Label: want[id]}}
		raw, err := encodeEntry(le)
		if err != nil {
			return nil, err
		}
		lines = append(lines, raw)
		parent = nid
	}
	return lines, nil
}

// writeMigrated writes the lines of the entries at idx as a v3 file holds
// them: byte for byte from a v3 file; from v1 and v2, migrated as omp's
// first write migrates them (see migrateLine); then through edit, when
// not nil. One entry is read at a time.
func (x *Index) writeMigrated(w io.Writer, idx []int, edit func(i int, line []byte) ([]byte, error)) error {
	var buf []byte
	for _, i := range idx {
		var line []byte
		var err error
		if x.Version() >= CurrentVersion {
			buf, err = x.AppendRaw(buf[:0], i)
			line = buf
		} else {
			e, derr := x.Entry(i)
			if e == nil {
				return derr
			}
			if line, err = migrateLine(x.Version(), e); err != nil {
				err = fmt.Errorf("%s: line %d: %w", x.Path(), e.line, err)
			}
		}
		if err == nil && edit != nil {
			line, err = edit(i, line)
		}
		if err != nil {
			return err
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
		if _, err := w.Write([]byte{'\n'}); err != nil {
			return err
		}
	}
	return nil
}

func allIndexes(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// labelsInEffect resolves label entries as omp does: over the given
// entries in order, the last label per target wins and an empty one clears.
func labelsInEffect(entries []*Entry) map[string]string {
	m := map[string]string{}
	for _, e := range entries {
		applyLabel(m, e)
	}
	return m
}

// applyLabel applies e to m if it is a label entry.
func applyLabel(m map[string]string, e *Entry) {
	if l, ok := e.Body.(*Label); ok {
		if l.Label == "" {
			delete(m, l.TargetID)
		} else {
			m[l.TargetID] = l.Label
		}
	}
}

// migrateLine returns the line of e from a v1 or v2 file as omp's first
// write migrates it: ids and parentIds appended (v1), firstKeptEntryIndex
// replaced by firstKeptEntryId, the hookMessage role renamed custom.
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
	bad        []BadLine // lines before the header that are not JSON
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
			return p, noHeaderError(path, p.bad)
		}
		if err != nil {
			return p, fmt.Errorf("%s: line %d: %w", path, lr.lineNum+1, err)
		}
		if l.tooLong {
			return p, fmt.Errorf("%s: line %d: %w: line longer than %d bytes", path, l.num, ErrNoHeader, lr.max)
		}
		kind, slot, h, reason, err := readPreambleLine(l.num, l.data)
		switch {
		case err != nil:
			return p, fmt.Errorf("%s: line %d: %w (%v)", path, l.num, ErrNoHeader, err)
		case kind == preSlot:
			p.slot, p.hasSlot = slot, true
			continue
		case kind == preMalformed:
			p.bad = append(p.bad, BadLine{Line: l.num, Reason: reason})
			continue
		case kind == preBlank:
			continue
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
