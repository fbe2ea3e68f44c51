package pgstore

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/pgtest"
	"github.com/xdev/xdev/internal/realfixtures"
	"github.com/xdev/xdev/internal/session"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openDB opens a fresh database on the test server.
func openDB(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), pgtest.NewDB(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// shapes copies sessions of every shape the repository has into a data
// dir: the context goldens' sessions (branches, compactions, resets,
// malformed and torn lines, v1 and v2 files), omp's own samples, the real
// pi fixtures when they are beside the repository, and a small corpus.
func shapes(t testing.TB, n int) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := corpus.WriteDir(dir, n, 7); err != nil {
		t.Fatal(err)
	}
	sessions := session.SessionsDir(dir)
	copyInto := func(project string, files []string) {
		d := filepath.Join(sessions, project)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, filepath.Base(f)), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	golden, _ := filepath.Glob("../session/testdata/context/*.jsonl")
	copyInto("--golden--", golden)
	omp, _ := filepath.Glob("../session/testdata/omp/sessions/*/*.jsonl")
	copyInto("--omp--", omp)
	blobs, _ := filepath.Glob("../session/testdata/omp/blobs/*")
	os.MkdirAll(session.BlobsDir(dir), 0o700)
	for _, b := range blobs {
		data, _ := os.ReadFile(b)
		os.WriteFile(filepath.Join(session.BlobsDir(dir), filepath.Base(b)), data, 0o600)
	}
	real, _ := filepath.Glob(realfixtures.Join("pi-*.jsonl"))
	copyInto("--pi--", real)
	if len(golden) < 20 || len(omp) == 0 {
		t.Fatalf("sample sessions missing: %d goldens, %d omp samples", len(golden), len(omp))
	}
	return dir
}

// sessionFiles maps each session file under dataDir's sessions
// directory, by its path there, to its bytes up to its last complete
// line: what a push stores.
func sessionFiles(t testing.TB, dataDir string) map[string][]byte {
	t.Helper()
	root := session.SessionsDir(dataDir)
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = b[:bytes.LastIndexByte(b, '\n')+1]
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameFiles fails t unless two data dirs hold the same session files,
// byte for byte (up to their last complete lines).
func sameFiles(t testing.TB, want, got map[string][]byte) {
	t.Helper()
	for p, b := range want {
		g, ok := got[p]
		switch {
		case !ok:
			t.Errorf("%s: missing", p)
		case !bytes.Equal(b, g):
			t.Errorf("%s: %d bytes, want %d, differing", p, len(g), len(b))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: not expected", p)
		}
	}
}

// sameContext fails t unless two stores build the same context.
func sameContext(t testing.TB, name string, want, got *session.Store) {
	t.Helper()
	wc, gc := want.BuildContext(), got.BuildContext()
	if wc.LeafID != gc.LeafID || wc.ThinkingLevel != gc.ThinkingLevel || wc.Model() != gc.Model() || !reflect.DeepEqual(wc.Messages, gc.Messages) {
		t.Errorf("%s: the context read from the database differs from the file's", name)
	}
	wt, ws := want.Title()
	gt, gs := got.Title()
	if wt != gt || ws != gs {
		t.Errorf("%s: title %q (%s), want %q (%s)", name, gt, gs, wt, ws)
	}
}
