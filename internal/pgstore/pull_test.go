package pgstore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/session"
)

// TestPullBytePrefix: a local file that is any byte prefix of the stored
// revision (a torn last line among them: the write finished on the machine
// that pushed) is brought up to date by a pull, byte for byte, and a push
// then finds it up to date; a prefix whose last, torn line differs from
// the stored bytes is left alone as diverged. So the advice push and pull
// print, followed, resolves the state. Every cut of the last lines of
// every stored session is tried.
func TestPullBytePrefix(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	src := t.TempDir()
	if err := os.CopyFS(session.SessionsDir(src), os.DirFS("../session/testdata/omp/sessions")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Push(ctx, src, PushOptions{Origin: "a"}); err != nil {
		t.Fatal(err)
	}
	stored := sessionFiles(t, src)
	cases := 0
	for rel, want := range stored {
		// Cuts in the last two lines: inside each, and at their starts.
		last := bytes.LastIndexByte(want[:len(want)-1], '\n') + 1
		prev := bytes.LastIndexByte(want[:max(0, last-1)], '\n') + 1
		for _, cut := range []int{prev, prev + 1, (prev + last) / 2, last - 1, last, last + 1, (last + len(want)) / 2, len(want) - 1} {
			if cut <= 256 || cut >= len(want) {
				continue // not past the title slot, or the whole file
			}
			for _, tamper := range []bool{false, true} {
				torn := want[cut-1] != '\n'
				if tamper && !torn {
					continue
				}
				cases++
				local := bytes.Clone(want[:cut])
				if tamper {
					local[cut-1] ^= 0x20 // the torn line is another write
				}
				dir := t.TempDir()
				path := filepath.Join(session.SessionsDir(dir), filepath.FromSlash(rel))
				os.MkdirAll(filepath.Dir(path), 0o700)
				if err := os.WriteFile(path, local, 0o600); err != nil {
					t.Fatal(err)
				}
				s, err := db.Find(ctx, rel)
				if err != nil {
					t.Fatal(err)
				}
				st, err := db.Pull(ctx, dir, PullOptions{Sessions: []*Session{s}})
				if err != nil {
					t.Fatal(err)
				}
				got, _ := os.ReadFile(path)
				switch {
				case tamper && !errors.Is(firstFailure(st), ErrDiverged):
					t.Errorf("%s cut at %d, its torn line changed: pull %+v, want it left alone as diverged", rel, cut, st)
				case tamper && !bytes.Equal(got, local):
					t.Errorf("%s cut at %d, its torn line changed: the pull changed the file", rel, cut)
				case !tamper && (st.Appended != 1 || len(st.Failed) > 0 || !bytes.Equal(got, want)):
					t.Errorf("%s cut at %d (torn %v): pull %+v; the file is not the stored revision", rel, cut, torn, st)
				case !tamper:
					push, err := db.Push(ctx, dir, PushOptions{Origin: "b"})
					if err != nil || push.Behind+push.Appended+push.New+push.Revised+len(push.Failed) != 0 {
						t.Errorf("%s cut at %d: the push after the pull: %+v, %v; want up to date", rel, cut, push, err)
					}
				}
			}
		}
	}
	if cases < 30 {
		t.Fatalf("only %d cases", cases)
	}
}

func firstFailure(st PullStats) error {
	if len(st.Failed) == 0 {
		return nil
	}
	return st.Failed[0].Err
}

// TestPullKeepsModTime: pulled files, new and grown, carry the stored
// modification time (the file's at its push), so a listing sorts them as
// they were written, not as they were pulled; so do rows of omp's table.
func TestPullKeepsModTime(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	src := shapes(t, 5)
	old := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	files, _ := session.Files(src)
	for i, f := range files {
		os.Chtimes(f.Path, time.Time{}, old.Add(time.Duration(i)*time.Hour))
	}
	if _, err := db.Push(ctx, src, PushOptions{}); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	// One file is there already, behind: it is grown, and stamped too.
	grown := files[len(files)-1]
	rel, _ := filepath.Rel(session.SessionsDir(src), grown.Path)
	b, _ := os.ReadFile(grown.Path)
	head := b[:bytes.IndexByte(b[300:], '\n')+301]
	p := filepath.Join(session.SessionsDir(dst), rel)
	os.MkdirAll(filepath.Dir(p), 0o700)
	os.WriteFile(p, head, 0o600)
	st, err := db.Pull(ctx, dst, PullOptions{})
	if err != nil || len(st.Failed) > 0 || st.Appended != 1 {
		t.Fatalf("pull: %+v %v", st, err)
	}
	for i, f := range files {
		rel, _ := filepath.Rel(session.SessionsDir(src), f.Path)
		fi, err := os.Stat(filepath.Join(session.SessionsDir(dst), rel))
		if err != nil {
			t.Fatal(err)
		}
		if want := old.Add(time.Duration(i) * time.Hour); !fi.ModTime().Equal(want) {
			t.Errorf("%s: pulled with mtime %v, want the stored %v", rel, fi.ModTime(), want)
		}
	}
}
