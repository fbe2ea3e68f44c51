package catalog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/pgtest"
	"github.com/xdev/xdev/internal/session"
)

// TestEveryPlaceNamesAlike: every place where sessions live names them
// by one rule (internal/sessionname). The same sessions, in a data dir,
// in another harness's directory (pi's, read in place), in xdev's tables
// and in omp's table of a PostgreSQL store, are named every way a person
// names one (the full id, in either case; an id prefix in either case;
// the file name with and without .jsonl; the id part of the name; an
// ambiguous prefix; an unknown name), and each place gives the same
// outcome: the same session, ambiguous, or not found. (A stored
// session's upper-case prefix was not found, and a local one was.)
func TestEveryPlaceNamesAlike(t *testing.T) {
	ids := []string{
		"0a1b2c3d-0000-4000-8000-000000000001",
		"0a1b2c3d-0000-4000-8000-000000000002",
		"0a1bffff-0000-4000-8000-000000000003",
		"9f8e7d6c-0000-4000-8000-000000000004",
	}
	src := t.TempDir()
	var paths []string
	for k, id := range ids {
		path := filepath.Join(src, "sessions", "-work-p", fmt.Sprintf("2026-01-0%dT00-00-00-000Z_%s.jsonl", k+1, id))
		s, err := session.Create(path, session.NewOptions{Cwd: "/work/p", ID: id})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendJSON([]byte(`{"type":"message","message":{"role":"user","content":"hello","timestamp":1}}`)); err != nil {
			t.Fatal(err)
		}
		s.Close()
		paths = append(paths, path)
	}
	base := filepath.Base(paths[3])
	names := []string{
		ids[3], strings.ToUpper(ids[3]), ids[3][:8], strings.ToUpper(ids[3][:8]), "9F8E",
		base, strings.TrimSuffix(base, ".jsonl"), "2026-01-04", ids[2][:6], strings.ToUpper(ids[2][:6]),
		"0a1b", "0A1B2C3D", ids[0], "2026-01-0", "nosuch", "ffff",
	}
	type outcome string
	of := func(id string, err error) outcome {
		var amb *AmbiguousError
		switch {
		case err == nil:
			return outcome("found " + id)
		case errors.As(err, &amb):
			// One error type, one text, whatever the place.
			return outcome(strings.Split(amb.Error(), ":")[0])
		case errors.Is(err, ErrNotFound):
			return "not found"
		}
		return outcome("error: " + err.Error())
	}

	places := map[string]func(name string) outcome{}
	local, err := New(Config{DataDir: src, DataDirHarness: Xdev, Explicit: true})
	if err != nil {
		t.Fatal(err)
	}
	places["data dir"] = func(name string) outcome { r, err := local.Resolve(name); return of(r.ID, err) }

	piRoot := filepath.Join(t.TempDir(), "pi")
	if err := os.CopyFS(piRoot, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	pi, err := New(Config{DataDir: t.TempDir(), DataDirHarness: Xdev, Roots: map[Harness]string{Pi: piRoot}})
	if err != nil {
		t.Fatal(err)
	}
	places["pi's dir"] = func(name string) outcome { r, err := pi.Resolve(name); return of(r.ID, err) }

	switch _, err := pgtest.Shared(); {
	case errors.Is(err, pgtest.ErrNoServer):
		t.Logf("%v: the local places only", err)
	case err != nil:
		t.Fatal(err)
	default:
		for _, omp := range []bool{false, true} {
			ctx := t.Context()
			cfg := DatabaseConfig{URL: pgtest.NewDB(t), OmpTable: omp}
			w, err := OpenDatabaseForSync(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if omp {
				if err := w.tbl.Create(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := w.Push(ctx, src, SyncOptions{Origin: "test", OmpRoot: "/team/sessions"}); err != nil {
				t.Fatal(err)
			}
			w.Close()
			d, err := OpenDatabase(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Close() })
			name := map[bool]string{false: "xdev's tables", true: "omp's table"}[omp]
			places[name] = func(arg string) outcome {
				s, err := d.Find(ctx, arg)
				if err != nil {
					return of("", err)
				}
				if s.s != nil {
					return of(s.s.ID, nil)
				}
				return of(s.row.ID, nil)
			}
		}
	}

	for _, name := range names {
		want := places["data dir"](name)
		for place, find := range places {
			if got := find(name); got != want {
				t.Errorf("%q in %s: %s; in the data dir: %s", name, place, got, want)
			}
		}
	}
	// The rule's own outcomes, for the cases that matter.
	for name, want := range map[string]outcome{
		strings.ToUpper(ids[3][:8]): outcome("found " + ids[3]), "0a1b": `"0a1b" matches 3 sessions; give more of the id`, ids[0]: outcome("found " + ids[0]),
		"nosuch": "not found", "2026-01-04": outcome("found " + ids[3]), "0A1B": `"0A1B" matches 3 sessions; give more of the id`,
	} {
		if got := places["data dir"](name); got != want {
			t.Errorf("%q: %s, want %s", name, got, want)
		}
	}
}
