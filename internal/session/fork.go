package session

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/google/uuid"
	"github.com/xdev/xdev/internal/jsonx"
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
	return forkSession(src, dst, "", label)
}

// ForkSessionInto is ForkSession with the copy put into dataDir, in the
// project directory of the source's cwd (see Slug), wherever the source
// lies: the way to copy a session kept elsewhere (another harness's
// directory, a file handed over) into a data dir without writing a byte
// beside it.
func ForkSessionInto(src, dataDir, label string) (*Store, error) {
	return forkSession(src, "", dataDir, label)
}

func forkSession(src, dst, dataDir, label string) (*Store, error) {
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
	dst = child.dest(dst, dataDir, src, pre.header.Cwd)

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

// ForkBranch writes a new session at dst (a fresh name beside src when
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
func ForkBranch(src, dst, entryID string) (*Store, error) {
	return forkBranch(src, dst, "", entryID)
}

// ForkBranchInto is ForkBranch with the copy put into dataDir, as
// ForkSessionInto puts a whole copy.
func ForkBranchInto(src, dataDir, entryID string) (*Store, error) {
	return forkBranch(src, "", dataDir, entryID)
}

func forkBranch(src, dst, dataDir, entryID string) (*Store, error) {
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
	if err := x.ompResumesAt(at); err != nil {
		return nil, fmt.Errorf("branch %s: %w", src, err)
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
	child.header, _ = jsonx.RemoveMember(child.header, "providerPromptCacheKey")
	dst = child.dest(dst, dataDir, src, x.Header().Cwd)
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
		nid := uniqueID(func(id string) bool { return used[id] })
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

func allIndexes(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
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
	ed := jsonx.Edit(h).Set("version", CurrentVersion).Set("id", c.id).Set("timestamp", now).Set("parentSession", parentSession)
	if title != "" {
		ed.Set("title", title)
	} else {
		ed.Remove("title")
	}
	if w := source.wire(); w != "" {
		ed.Set("titleSource", w)
	} else {
		ed.Remove("titleSource")
	}
	h, err = ed.Bytes()
	c.header = h
	return c, err
}

// cacheKey keeps the provider prompt cache warm across a fork, as omp's
// fork() does: the source's key, or the source's id.
func (c *child) cacheKey(src Header) {
	var probe struct {
		Key *string `json:"providerPromptCacheKey"`
	}
	json.Unmarshal(src.raw, &probe, jsonx.DecodeOptions)
	key := src.ID
	if probe.Key != nil && *probe.Key != "" {
		key = *probe.Key
	}
	if h, err := jsonx.Edit(c.header).Set("providerPromptCacheKey", key).Bytes(); err == nil {
		c.header = h
	}
}

// dest is where the child goes: dst when given, else a fresh name in
// dataDir's project directory for cwd when dataDir is given, else a fresh
// name beside src.
func (c *child) dest(dst, dataDir, src, cwd string) string {
	name := FileName(c.created, c.id)
	switch {
	case dst != "":
		return dst
	case dataDir != "":
		return filepath.Join(SessionsDir(dataDir), Slug(cwd), name)
	}
	return filepath.Join(filepath.Dir(src), name)
}

// write creates dst atomically: slot, header, then what body writes.
func (c *child) write(dst string, body func(io.Writer) error) error {
	SweepLeftovers(filepath.Dir(dst))
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
