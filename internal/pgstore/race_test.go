package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/session"
)

// TestRacingWriters races every writer a team has: an agent appending
// to sessions on machine A while two syncs of A's data dir push at once,
// machine B (with a copy of the same sessions, never changed) pushes,
// machine C pulls, and a program appends through the store to sessions
// of its own. At the end every session is stored once, as one revision,
// byte for byte A's file; C's pull is A's files; the lines of each
// stored session tile it exactly, without a duplicate or a gap.
func TestRacingWriters(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	if _, err := corpus.WriteDir(a, 12, 3); err != nil {
		t.Fatal(err)
	}
	copyDir(t, session.SessionsDir(a), session.SessionsDir(b))
	files, err := session.Files(a)
	if err != nil {
		t.Fatal(err)
	}

	var writing atomic.Bool
	writing.Store(true)
	var wg sync.WaitGroup
	fail := make(chan error, 16)
	loop := func(name string, fn func() error) {
		wg.Go(func() {
			for i := 0; writing.Load() || i == 0; i++ {
				if err := fn(); err != nil {
					fail <- fmt.Errorf("%s: %w", name, err)
					return
				}
			}
		})
	}
	push := func(dir, origin string) func() error {
		return func() error {
			st, err := db.Push(ctx, dir, PushOptions{Origin: origin})
			if err == nil && len(st.Failed) > 0 {
				err = st.Failed[0]
			}
			if err == nil && st.Revised > 0 {
				err = fmt.Errorf("%d files stored as new revisions, though only appended to: %+v", st.Revised, st)
			}
			return err
		}
	}
	loop("push a", push(a, "a"))
	loop("push a again", push(a, "a"))
	loop("push b", push(b, "b"))
	loop("pull c", func() error {
		st, err := db.Pull(ctx, c, PullOptions{})
		if err == nil && len(st.Failed) > 0 {
			err = st.Failed[0]
		}
		return err
	})
	// The store's own appends race too, on sessions no file backs.
	own := make([]*Session, 0, 3)
	for i := range 3 {
		s := storeSession(t, db, fmt.Sprintf("--own--/s%d.jsonl", i))
		own = append(own, s)
	}
	var ownLines atomic.Int64
	for w := range 2 {
		wg.Go(func() {
			for i := 0; writing.Load(); i++ {
				// Each appender works on its own copy of the session's
				// position: a conflict means the other got there first.
				s, err := db.Find(ctx, own[i%len(own)].Path)
				if err != nil {
					fail <- err
					return
				}
				line := fmt.Appendf(nil, `{"type":"custom","customType":"w%d","data":{"i":%d}}`, w, i)
				switch err := db.Append(ctx, s, line); {
				case err == nil:
					ownLines.Add(1)
				case !isConflict(err):
					fail <- err
					return
				}
			}
		})
	}
	for i := range 30 {
		f := files[i%len(files)]
		s, err := session.Open(f.Path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendMessage(userMsg(fmt.Sprintf("appended %d", i))); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	writing.Store(false)
	wg.Wait()
	close(fail)
	for err := range fail {
		t.Error(err)
	}
	if err := push(a, "a")(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pull(ctx, c, PullOptions{}); err != nil {
		t.Fatal(err)
	}
	want := sessionFiles(t, a)
	got := sessionFiles(t, c)
	for i := range own {
		delete(got, own[i].Path)
	}
	sameFiles(t, want, got)
	all, err := db.List(ctx, ListOptions{Revisions: true, Subagents: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(want)+len(own) {
		t.Errorf("%d stored revisions, want %d", len(all), len(want)+len(own))
	}
	var total int64
	for _, s := range all {
		var buf bytes.Buffer
		if err := db.WriteSession(ctx, s, &buf); err != nil {
			t.Fatal(err)
		}
		if int64(buf.Len()) != s.Size || bytes.Count(buf.Bytes(), []byte("\n")) != s.Lines {
			t.Errorf("%s: %d bytes in %d lines stored, says %d in %d", s.Name(), buf.Len(), bytes.Count(buf.Bytes(), []byte("\n")), s.Size, s.Lines)
		}
		if w, ok := want[s.Path]; ok && !bytes.Equal(w, buf.Bytes()) {
			t.Errorf("%s: stored bytes differ from the file's", s.Name())
		}
		if s.Path[:7] == "--own--" {
			total += int64(s.Lines) - 2
		}
	}
	if total != ownLines.Load() {
		t.Errorf("%d lines appended through the store, %d stored", ownLines.Load(), total)
	}
}

// storeSession stores a new session of a slot and a header alone, at
// path, through a push of a data dir of its own.
func storeSession(t testing.TB, db *DB, rel string) *Session {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(session.SessionsDir(dir), filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := session.Create(p, session.NewOptions{Cwd: "/own"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := db.Push(context.Background(), dir, PushOptions{Origin: "own " + rel}); err != nil {
		t.Fatal(err)
	}
	found, err := db.Find(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func isConflict(err error) bool { return errors.Is(err, ErrConflict) }

// copyDir copies a directory tree of regular files.
func copyDir(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if fi.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}
