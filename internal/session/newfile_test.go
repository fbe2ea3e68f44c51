package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestNewFile writes sessions through NewFile the ways an import and a
// mirror do, and fails them every way: a disk that fills at any entry, an
// entry that is not one line, an existing file without replace. Whatever
// fails leaves nothing in the directory; what commits opens as written.
func TestNewFile(t *testing.T) {
	entries := [][]byte{
		[]byte(`{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1}}`),
		[]byte(`{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"again","timestamp":2}}`),
	}
	opts := NewOptions{Cwd: "/w", ID: "01a00000-0000-7000-8000-000000000001", Title: "T", TitleSource: TitleAuto}
	write := func(path string, replace bool, failAt int, bad []byte) error {
		f, err := StartFile(path, opts, replace)
		if err != nil {
			return err
		}
		for i, e := range entries {
			if i == failAt {
				failDisk(t, syscall.ENOSPC)
			}
			f.WriteEntry(e)
		}
		if bad != nil {
			f.WriteEntry(bad)
		}
		err = f.Commit()
		restoreDisk()
		return err
	}
	empty := func(dir string) {
		t.Helper()
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("a failed write left %d files", len(ents))
		}
	}
	for failAt := range len(entries) {
		dir := t.TempDir()
		if err := write(filepath.Join(dir, "s.jsonl"), false, failAt, nil); !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("disk full at entry %d: %v", failAt, err)
		}
		empty(dir)
	}
	for _, bad := range [][]byte{[]byte("{\"a\":\n1}"), []byte("[1]")} {
		dir := t.TempDir()
		if err := write(filepath.Join(dir, "s.jsonl"), false, -1, bad); err == nil {
			t.Errorf("%q written as an entry", bad)
		}
		empty(dir)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := write(path, false, -1, nil); err != nil {
		t.Fatal(err)
	}
	if err := write(path, false, -1, nil); err == nil {
		t.Error("a second file at the same path without replace")
	}
	if err := write(path, true, -1, nil); err != nil {
		t.Errorf("replace: %v", err)
	}
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if title, _ := s.Title(); title != "T" || s.ID() != opts.ID || len(s.BuildContext().Messages) != 2 {
		t.Errorf("the file reads as %q %s, %d messages", title, s.ID(), len(s.BuildContext().Messages))
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files beside the session", len(ents))
	}
}

// TestNewIndexMatchesOpenIndex: an Index read from any io.ReaderAt (a
// database's rows) is the one OpenIndex reads from the file: the same
// entries, ids, types, lines and skipped lines, on every sample session.
func TestNewIndexMatchesOpenIndex(t *testing.T) {
	files, err := Files("testdata/omp")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sample sessions: %v", err)
	}
	for _, f := range files {
		a, err := OpenIndex(f.Path, nil)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := NewIndex("db:"+filepath.Base(f.Path), bytes.NewReader(data), int64(len(data)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if a.Len() != b.Len() || a.Malformed() != b.Malformed() || a.Header().ID != b.Header().ID || a.Leaf() != b.Leaf() {
			t.Errorf("%s: %d entries, %d malformed; from a reader %d, %d", f.Path, a.Len(), a.Malformed(), b.Len(), b.Malformed())
		}
		for i := range min(a.Len(), b.Len()) {
			ra, _ := a.Raw(i)
			rb, _ := b.Raw(i)
			if a.ID(i) != b.ID(i) || a.Type(i) != b.Type(i) || a.Line(i) != b.Line(i) || !bytes.Equal(ra, rb) {
				t.Errorf("%s: entry %d differs", f.Path, i)
			}
		}
		a.Close()
		b.Close()
	}
}
