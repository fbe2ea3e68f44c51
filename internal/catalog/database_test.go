package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/pgtest"
	"github.com/xdev/xdev/internal/session"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// writeDataDir makes a data dir of n sessions in project /work/p, each a
// few messages, the k-th saying "walrus k", and returns their paths.
func writeDataDir(t *testing.T, dir string, n int) []string {
	t.Helper()
	var paths []string
	for k := range n {
		path := filepath.Join(dir, "sessions", "-work-p", fmt.Sprintf("2026-01-0%dT00-00-00-000Z_s%d.jsonl", k+1, k))
		s, err := session.Create(path, session.NewOptions{Cwd: "/work/p", Title: fmt.Sprintf("session %d", k), TitleSource: session.TitleManual})
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range []string{
			`{"type":"message","message":{"role":"user","content":"tell me of the walrus %d","timestamp":1}}`,
			`{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"a walrus %d is a sea mammal"}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}`,
		} {
			if _, err := s.AppendJSON([]byte(fmt.Sprintf(line, k))); err != nil {
				t.Fatalf("line %d: %v", i, err)
			}
		}
		s.Close()
		paths = append(paths, path)
	}
	return paths
}

// contextJSON is the context a resume of s sends, as JSON.
func contextJSON(t *testing.T, s *session.Store) string {
	t.Helper()
	b, err := json.Marshal(s.BuildContext().Messages)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDatabase: a team's PostgreSQL store is a place like a data dir, on
// a real server, for both of its kinds (xdev's tables and omp's table): a
// pushed data dir lists as its files do, every session is found by id,
// id prefix and file name, opens with the context its file gives, reads
// every entry, and pulls back byte for byte into an empty data dir; a
// search on the server finds what the files say (xdev's tables; omp's
// table has no index, and says so).
func TestDatabase(t *testing.T) {
	for _, omp := range []bool{false, true} {
		t.Run(map[bool]string{false: "xdev", true: "omp-table"}[omp], func(t *testing.T) {
			ctx := t.Context()
			src := t.TempDir()
			paths := writeDataDir(t, src, 3)
			cfg := DatabaseConfig{URL: pgtest.NewDB(t), OmpTable: omp}
			// A read makes nothing: not xdev's schema, not omp's table.
			if d, err := OpenDatabase(ctx, cfg); err == nil {
				if _, err := d.List(ctx, ListOptions{}); err == nil {
					t.Error("a read of an empty database listed sessions")
				}
				d.Close()
			}
			w, err := OpenDatabaseForSync(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if omp {
				if err := w.tbl.Create(ctx); err != nil {
					t.Fatal(err)
				}
			}
			// omp's table keys rows by path: under a root both sides share.
			sync := SyncOptions{Origin: "test", OmpRoot: "/team/sessions"}
			st, err := w.Push(ctx, src, sync)
			if err != nil || st.Files != 3 || len(st.Failed) != 0 {
				t.Fatalf("push: %+v, %v", st, err)
			}

			d, err := OpenDatabase(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			local, err := ListDataDir(Xdev, src, ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			stored, err := d.List(ctx, ListOptions{Cwd: "/work/p"})
			if err != nil {
				t.Fatal(err)
			}
			if len(stored) != len(local) {
				t.Fatalf("%d stored rows, %d local", len(stored), len(local))
			}
			byID := map[string]Row{}
			for _, r := range local {
				byID[r.ID] = r
			}
			for _, r := range stored {
				l := byID[r.ID]
				if r.Title != l.Title || r.Cwd != l.Cwd || r.Status != l.Status || r.FirstMessage != l.FirstMessage || r.Size != l.Size {
					t.Errorf("stored row %+v\nlocal row %+v", r, l)
				}
			}
			if rows, _ := d.List(ctx, ListOptions{Cwd: "/elsewhere"}); len(rows) != 0 {
				t.Errorf("%d rows for another project", len(rows))
			}

			for _, path := range paths {
				f, err := session.Open(path, nil)
				if err != nil {
					t.Fatal(err)
				}
				want := contextJSON(t, f)
				id := f.ID()
				f.Close()
				raw, _ := os.ReadFile(path)
				for _, name := range []string{id, id[:len(id)-4], filepath.Base(path), strings.TrimSuffix(filepath.Base(path), ".jsonl")} {
					s, err := d.Find(ctx, name)
					if err != nil {
						t.Errorf("Find(%s): %v", name, err)
						continue
					}
					st, err := s.OpenStore(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if got := contextJSON(t, st); got != want {
						t.Errorf("%s: context from the database\n%s\nfrom the file\n%s", name, got, want)
					}
					st.Close()
					var b bytes.Buffer
					if err := s.WriteTo(ctx, &b); err != nil || b.String() != string(raw) {
						t.Errorf("%s: WriteTo gives %d bytes (%v), the file has %d", name, b.Len(), err, len(raw))
					}
					r, err := s.Readable(ctx)
					if err != nil {
						t.Fatal(err)
					}
					x, err := r.OpenIndex()
					if err != nil {
						t.Fatal(err)
					}
					if x.Len() != 2 || r.Harness != DB || r.Shown != s.Shown {
						t.Errorf("%s: readable %+v with %d entries", name, r, x.Len())
					}
					x.Close()
				}
			}
			if _, err := d.Find(ctx, "no-such-session"); !errors.Is(err, ErrNotFound) {
				t.Errorf("Find of nothing: %v", err)
			}

			hits, err := d.Search(ctx, Query{Text: "walrus 1", Limit: 10}, "", 0)
			if omp {
				if !errors.Is(err, ErrNoIndex) {
					t.Errorf("search of omp's table: %v", err)
				}
			} else if err != nil || len(hits) == 0 {
				t.Errorf("search: %d hits, %v", len(hits), err)
			} else {
				for _, h := range hits {
					if h.Harness != string(Xdev) || !strings.Contains(h.Snippet, "walrus") {
						t.Errorf("hit %+v", h)
					}
				}
			}

			dst := t.TempDir()
			pull, err := w.Pull(ctx, dst, SyncOptions{OmpRoot: sync.OmpRoot})
			if err != nil || pull.Written != 3 || len(pull.Failed) != 0 {
				t.Fatalf("pull: %+v, %v", pull, err)
			}
			for _, path := range paths {
				rel, _ := filepath.Rel(src, path)
				a, _ := os.ReadFile(path)
				b, err := os.ReadFile(filepath.Join(dst, rel))
				if err != nil || !bytes.Equal(a, b) {
					t.Errorf("%s pulled: %v, %d bytes of %d", rel, err, len(b), len(a))
				}
			}
		})
	}
}
