package pgstore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/sessionname"
)

// TestPushPull: every session pushed comes back byte-identical from a
// pull into an empty data dir, opens from the database with the file's
// context, and a second push reads nothing.
func TestPushPull(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	src := shapes(t, 40)
	st, err := db.Push(ctx, src, PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range st.Failed {
		// A file that is not a session at all is refused, naming it.
		if !strings.Contains(f.Err.Error(), "no session header") {
			t.Errorf("push failed: %s: %v", f.Path, f.Err)
		}
	}
	want := sessionFiles(t, src)
	for _, f := range st.Failed {
		rel, _ := filepath.Rel(session.SessionsDir(src), f.Path)
		delete(want, filepath.ToSlash(rel))
	}
	if st.New != len(want) || st.Files != len(want)+len(st.Failed) {
		t.Errorf("push: %+v; want %d new", st, len(want))
	}

	dst := t.TempDir()
	pst, err := db.Pull(ctx, dst, PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pst.Written != len(want) || len(pst.Failed) > 0 {
		t.Errorf("pull: %+v", pst)
	}
	sameFiles(t, want, sessionFiles(t, dst))
	// The image blobs came along (by the store's own name, its sha256).
	blobs, _ := filepath.Glob(filepath.Join(session.BlobsDir(src), "*"))
	n := 0
	for _, b := range blobs {
		if !blobName().MatchString(filepath.Base(b)) {
			continue
		}
		n++
		want, _ := os.ReadFile(b)
		got, err := os.ReadFile(filepath.Join(session.BlobsDir(dst), filepath.Base(b)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("blob %s: %v", filepath.Base(b), err)
		}
	}
	if n == 0 || st.Blobs != n || pst.Blobs != n {
		t.Errorf("%d blobs: pushed %d, pulled %d", n, st.Blobs, pst.Blobs)
	}
	// Pulled files are private.
	filepath.Walk(session.SessionsDir(dst), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v", p, fi.Mode().Perm())
		}
		return err
	})

	list, err := db.List(ctx, ListOptions{Subagents: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(want) {
		t.Errorf("listed %d sessions, want %d", len(list), len(want))
	}
	idCount := map[string]int{}
	for _, s := range list {
		idCount[s.ID]++
	}
	for _, s := range list {
		path := filepath.Join(session.SessionsDir(src), filepath.FromSlash(s.Path))
		fromFile, ferr := session.Open(path, nil)
		fromDB, derr := db.OpenSession(ctx, s, nil)
		if ferr != nil || derr != nil {
			if (ferr == nil) != (derr == nil) {
				t.Errorf("%s: file: %v; database: %v", s.Path, ferr, derr)
			}
			continue
		}
		sameContext(t, s.Path, fromFile, fromDB)
		if fromFile.ID() != s.ID {
			t.Errorf("%s: id %q, want %q", s.Path, s.ID, fromFile.ID())
		}
		if s.ID != "" {
			// Sample sessions share ids: an id several share names none of
			// them (ambiguous, as in a data dir); the others name theirs.
			found, err := db.Find(ctx, s.ID)
			switch shared := idCount[s.ID] > 1; {
			case shared && !errors.As(err, new(*sessionname.AmbiguousError)):
				t.Errorf("Find(%s), an id %d sessions share: %v", s.ID, idCount[s.ID], err)
			case !shared && (err != nil || found.ID != s.ID):
				t.Errorf("Find(%s): %v", s.ID, err)
			}
		}
		if found, err := db.Find(ctx, s.Path); err != nil || found.Key != s.Key {
			t.Errorf("Find(%s): %v", s.Path, err)
		}
	}

	again, err := db.Push(ctx, src, PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Unchanged != len(want) || again.Lines != 0 {
		t.Errorf("second push: %+v; want every stored file unchanged", again)
	}
	// The pulled copy is the same sessions: pushing it from another
	// machine stores nothing new.
	other, err := db.Push(ctx, dst, PushOptions{Origin: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if other.Same != len(want) || other.Lines != 0 {
		t.Errorf("push of the pulled copy: %+v; want every file the same", other)
	}
}
