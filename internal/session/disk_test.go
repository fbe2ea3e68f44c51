package session

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/xdev/xdev/internal/ai"
)

// failDisk makes the store's writes fail with errno after writing half of
// what they were given (a disk that fills up mid-write), until restored.
func failDisk(t *testing.T, errno syscall.Errno) {
	t.Helper()
	w, wa, wf := diskWrite, diskWriteAt, diskFill
	diskWrite = func(f *os.File, b []byte) (int, error) {
		n, _ := f.Write(b[:len(b)/2])
		return n, errno
	}
	diskWriteAt = func(f *os.File, b []byte, off int64) (int, error) {
		n, _ := f.WriteAt(b[:len(b)/2], off)
		return n, errno
	}
	diskFill = func(w io.Writer, b []byte) (int, error) {
		n, _ := w.Write(b[:len(b)/2])
		return n, errno
	}
	t.Cleanup(func() { diskWrite, diskWriteAt, diskFill = w, wa, wf })
}

func restoreDisk() {
	diskWrite = func(f *os.File, b []byte) (int, error) { return f.Write(b) }
	diskWriteAt = func(f *os.File, b []byte, off int64) (int, error) { return f.WriteAt(b, off) }
	diskFill = func(w io.Writer, b []byte) (int, error) { return w.Write(b) }
}

func user(text string) ai.Message {
	return ai.Message{Role: ai.RoleUser, Content: ai.TextContent(text), Timestamp: 1}
}

// TestAppendDiskFull: an append that fails part-way returns the error and
// leaves no torn line; the store goes on working once the disk does.
func TestAppendDiskFull(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
		t.Run(errno.Error(), func(t *testing.T) {
			s, path := newSession(t)
			mustE(t)(s.AppendMessage(user("before")))
			sum := fileSum(t, path)
			failDisk(t, errno)
			if _, err := s.AppendMessage(user(strings.Repeat("long ", 1000))); !errors.Is(err, errno) {
				t.Fatalf("append on a failing disk: %v", err)
			}
			unchanged(t, path, sum)
			restoreDisk()
			mustE(t)(s.AppendMessage(user("after")))
			r, err := Open(path, nil)
			if err != nil || r.Malformed() != 0 || len(r.BuildContext().Messages) != 2 {
				t.Errorf("after recovery: %v, %d malformed, %d messages", err, r.Malformed(), len(r.BuildContext().Messages))
			}
		})
	}
}

// TestAppendTruncateFails: if even the truncate back fails, the partial
// line stays, and the next append starts on a new line: one malformed
// line, no entry lost.
func TestAppendTruncateFails(t *testing.T) {
	s, path := newSession(t)
	mustE(t)(s.AppendMessage(user("before")))
	failDisk(t, syscall.EIO)
	tr := diskTruncate
	diskTruncate = func(*os.File, int64) error { return syscall.EIO }
	defer func() { diskTruncate = tr }()
	_, err := s.AppendMessage(user("lost"))
	if err == nil || !strings.Contains(err.Error(), "truncating the partial line") {
		t.Fatalf("err = %v", err)
	}
	restoreDisk()
	diskTruncate = tr
	mustE(t)(s.AppendMessage(user("after")))
	r, _ := Open(path, nil)
	if r.Malformed() != 1 || len(r.BuildContext().Messages) != 2 {
		t.Errorf("%d malformed, %d messages", r.Malformed(), len(r.BuildContext().Messages))
	}
}

// TestRewritesDiskFull: retitles and copies that fail leave the original
// as it was and no temp file behind.
func TestRewritesDiskFull(t *testing.T) {
	dir := t.TempDir()
	noSlot := writeFile(t, dir, "noslot.jsonl", testHeader+testUser("00000001", "", "hi"))
	s, withSlot := newSession(t)
	mustE(t)(s.AppendMessage(user("hi")))
	s.Close()
	for name, op := range map[string]func() error{
		"retitle in place": func() error {
			s, _ := Open(withSlot, nil)
			defer s.Close()
			_, err := s.SetTitle("new", TitleManual)
			return err
		},
		"retitle by rewrite": func() error {
			s, _ := Open(noSlot, nil)
			defer s.Close()
			_, err := s.SetTitle("new", TitleManual)
			return err
		},
		"fork": func() error {
			_, err := ForkSession(withSlot, filepath.Join(dir, "fork.jsonl"), "")
			return err
		},
		"repair": func() error {
			_, err := Repair(writeFile(t, dir, "torn.jsonl", testHeader+testUser("00000001", "", "hi")+"{"), "")
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			sums := map[string][32]byte{noSlot: fileSum(t, noSlot)}
			slotBefore, _ := firstLine(withSlot)
			failDisk(t, syscall.ENOSPC)
			if err := op(); !errors.Is(err, syscall.ENOSPC) {
				t.Errorf("err = %v, want ENOSPC", err)
			}
			restoreDisk()
			unchanged(t, noSlot, sums[noSlot])
			if slot, _ := firstLine(withSlot); string(slot) != string(slotBefore) {
				t.Errorf("slot changed by a failed write:\n%s\n%s", slotBefore, slot)
			}
			for _, p := range []string{filepath.Join(dir, "fork.jsonl"), filepath.Join(dir, "torn.jsonl.repaired")} {
				if fileExists(p) {
					t.Errorf("%s exists after a failed write", p)
				}
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), ".tmp") {
					t.Errorf("temp file left: %s", e.Name())
				}
			}
		})
	}
}

// TestSlotWriteFails: when the in-place slot write fails half-way, the old
// slot is put back; the file still opens with its old title.
func TestSlotWriteFails(t *testing.T) {
	s, path := newSession(t)
	mustOK(t)(s.SetTitle("old title", TitleManual))
	before, _ := firstLine(path)
	sum, leaf := fileSum(t, path), s.LeafID()
	wa := diskWriteAt
	calls := 0
	diskWriteAt = func(f *os.File, b []byte, off int64) (int, error) {
		calls++
		if calls == 1 {
			n, _ := f.WriteAt(b[:len(b)/2], off)
			return n, syscall.EIO
		}
		return f.WriteAt(b, off)
	}
	defer func() { diskWriteAt = wa }()
	if _, err := s.SetTitle("new title", TitleManual); !errors.Is(err, syscall.EIO) {
		t.Fatalf("err = %v", err)
	}
	if after, _ := firstLine(path); string(after) != string(before) {
		t.Errorf("slot not restored:\n%s\n%s", before, after)
	}
	// Nor is the title_change entry left behind: the file is as it was.
	unchanged(t, path, sum)
	if s.LeafID() != leaf {
		t.Errorf("the store's leaf moved to %s", s.LeafID())
	}
	r, err := Open(path, nil)
	if title, _ := r.Title(); err != nil || title != "old title" || r.Malformed() != 0 {
		t.Errorf("reopen: %v, title %q, %d malformed", err, title, r.Malformed())
	}
}
