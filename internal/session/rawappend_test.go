package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAppendRaw: whole lines go in byte for byte under the lockfile; a
// file of another size than the caller knew, lines without their last
// newline, or a failing reader leave the file as it was.
func TestAppendRaw(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	s, err := Create(path, NewOptions{Cwd: "/w", Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	s.AppendMessage(user("hello"))
	s.Close()
	orig, _ := os.ReadFile(path)
	lines := `{"type":"custom","customType":"a","id":"aaaaaaaa","parentId":null,"timestamp":"2026-11-30T00:00:00.000Z"}` + "\n" +
		`{"type":"custom","customType":"b","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"2026-11-30T00:00:00.000Z"}` + "\n"
	for _, tt := range []struct {
		name string
		size int64
		r    func() *strings.Reader
		want error
	}{
		{"moved", int64(len(orig)) - 1, func() *strings.Reader { return strings.NewReader(lines) }, ErrMoved},
		{"no last newline", int64(len(orig)), func() *strings.Reader { return strings.NewReader(strings.TrimSuffix(lines, "\n")) }, nil},
	} {
		_, err := AppendRaw(path, tt.size, tt.r(), LockOptions{})
		if err == nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want an error (%v)", tt.name, err, tt.want)
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, orig) {
			t.Errorf("%s: the file changed", tt.name)
		}
	}
	n, err := AppendRaw(path, int64(len(orig)), strings.NewReader(lines), LockOptions{})
	if err != nil || n != int64(len(lines)) {
		t.Fatalf("append: %d, %v", n, err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(orig)+lines {
		t.Error("the lines are not appended byte for byte")
	}
	if _, err := os.Stat(lockPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Error("the lockfile is left behind")
	}
	st, err := Open(path, nil)
	if err != nil || st.LeafID() != "bbbbbbbb" {
		t.Errorf("reopened: leaf %q, %v", st.LeafID(), err)
	}

	// ReplaceSlot: only over the slot the caller read.
	old := orig[:TitleSlotWidth]
	slot, _ := MarshalTitleSlot("from elsewhere", TitleManual, "2026-12-01T00:00:00.000Z")
	if err := ReplaceSlot(path, slot, slot, LockOptions{}); !errors.Is(err, ErrMoved) {
		t.Errorf("over another slot: %v, want ErrMoved", err)
	}
	if err := ReplaceSlot(path, old, slot, LockOptions{}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !bytes.Equal(b[:TitleSlotWidth], slot) || !bytes.Equal(b[TitleSlotWidth:], append(orig[TitleSlotWidth:], lines...)) {
		t.Error("the slot is not replaced in place")
	}
	if title, _ := mustOpen(t, path).Title(); title != "from elsewhere" {
		t.Errorf("title %q", title)
	}
}

func mustOpen(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
