package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/realfixtures"
	"github.com/xdev/xdev/internal/searchtext"
	"github.com/xdev/xdev/internal/session"
)

// TestBranchAndContext: a hit says whether it is on the active branch and
// whether a resumed session still sends it.
func TestBranchAndContext(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		`{"type":"session","version":3,"id":"s1","timestamp":"2026-11-01T00:00:00.000Z","cwd":"/p"}`,
		`{"type":"message","id":"a","parentId":null,"timestamp":"2026-11-01T00:00:01.000Z","message":{"role":"user","content":"oldest words"}}`,
		`{"type":"message","id":"b","parentId":"a","timestamp":"2026-11-01T00:00:02.000Z","message":{"role":"user","content":"kept words"}}`,
		`{"type":"message","id":"x","parentId":"b","timestamp":"2026-11-01T00:00:03.000Z","message":{"role":"user","content":"abandoned words"}}`,
		`{"type":"message","id":"c","parentId":"b","timestamp":"2026-11-01T00:00:04.000Z","message":{"role":"user","content":"branch words"}}`,
		`{"type":"compaction","id":"d","parentId":"c","timestamp":"2026-11-01T00:00:05.000Z","summary":"summary words","firstKeptEntryId":"b","tokensBefore":5}`,
		`{"type":"message","id":"e","parentId":"d","timestamp":"2026-11-01T00:00:06.000Z","message":{"role":"user","content":"newest words"}}`,
	}
	path := filepath.Join(session.SessionsDir(dir), "--p--", "s.jsonl")
	os.MkdirAll(filepath.Dir(path), 0o700)
	write := func(n int) {
		if err := os.WriteFile(path, []byte(strings.Join(lines[:n], "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"a": "compacted", "b": "context", "x": "abandoned", "c": "context", "d": "context", "e": "context"}
	check := func(db *DB, upTo int) {
		t.Helper()
		hits, err := db.Search(context.Background(), Query{Text: "words", Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != upTo-1 {
			t.Fatalf("%d hits, want %d", len(hits), upTo-1)
		}
		for _, h := range hits {
			state := "context"
			if !h.OnActiveBranch {
				state = "abandoned"
			} else if !h.InContext {
				state = "compacted"
			}
			w := want[h.EntryID]
			if upTo < 6 && w == "compacted" { // before the compaction is written
				w = "context"
			}
			if upTo == 4 && h.EntryID == "x" { // x is the leaf until c
				w = "context"
			}
			if state != w {
				t.Errorf("after %d lines: entry %s is %s, want %s", upTo, h.EntryID, state, w)
			}
		}
	}
	// Appended one line at a time, and indexed at once: the same flags.
	inc := openTemp(t, dir)
	for n := 2; n <= len(lines); n++ {
		write(n)
		refresh(t, inc, RefreshOptions{})
		check(inc, n)
	}
	fresh := openTemp(t, dir)
	refresh(t, fresh, RefreshOptions{})
	check(fresh, len(lines))
}

// TestBadInput: malformed lines are skipped and counted; a huge entry is
// indexed up to searchtext.MaxDocBytes; a huge line is skipped without being held.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	huge := strings.Repeat("filler ", searchtext.MaxDocBytes/7) + " lateword"
	lines := []string{
		`{"type":"session","version":3,"id":"s1","timestamp":"2026-11-01T00:00:00.000Z","cwd":"/p"}`,
		`not json at all`,
		`{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"earlyword ` + huge + `"}}`,
		`{"type":"message","id":"b","parentId":"a","message":{"role":"user","content":"bad \x01 control"}}`,
		`null`,
		`{"type":"message","id":"c","parentId":"a","message":{"role":"user","content":"survivor"}}`,
	}
	path := filepath.Join(session.SessionsDir(dir), "--p--", "s.jsonl")
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	db := openTemp(t, dir)
	st := refresh(t, db, RefreshOptions{})
	if st.Malformed != 3 {
		t.Errorf("%d lines counted as malformed, want 3", st.Malformed)
	}
	for q, n := range map[string]int{"earlyword": 1, "lateword": 0, "survivor": 1, "control": 0} {
		if got := found(t, db, Query{Text: q}); len(got) != n {
			t.Errorf("%q: found in %d sessions, want %d", q, len(got), n)
		}
	}
}

// TestQueryError: a query the index cannot run is a QueryError, the
// CLI's exit 2.
func TestQueryError(t *testing.T) {
	db := openTemp(t, t.TempDir())
	for _, q := range []string{`"open`, "-only", "OR", "a OR OR b"} {
		if _, err := db.Search(context.Background(), Query{Text: q}); !errors.Is(err, ErrQuery) {
			t.Errorf("%q: %v, want a QueryError", q, err)
		}
	}
}

// TestCacheDirUnwritable: an index that cannot be written says so.
func TestCacheDirUnwritable(t *testing.T) {
	// Root writes anywhere; a directory under a file cannot be made by anyone.
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	_, err := Open(filepath.Join(file, "sub", "index.db"), t.TempDir(), nil)
	if !errors.Is(err, ErrCacheDir) {
		t.Fatalf("got %v, want ErrCacheDir", err)
	}
	if !strings.Contains(err.Error(), file) {
		t.Errorf("%v does not name the path", err)
	}
}

// TestRebuild: an index of another schema version, or a corrupt one, is
// rebuilt with a notice; it is a cache. A corrupt one is set aside for a
// look (DamagedPath); an outdated one, or one --reindex drops, is
// removed: no copy of it is left to fill the cache dir.
func TestRebuild(t *testing.T) {
	dir := writeDir(t, 5, 3)
	path := filepath.Join(t.TempDir(), "index.db")
	db, err := Open(path, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	refresh(t, db, RefreshOptions{})
	db.conn.Exec(`PRAGMA user_version=99`)
	db.Close()
	db, err = Open(path, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(db.Notice, "schema version 99") || !strings.Contains(db.Notice, "removed") {
		t.Errorf("notice %q", db.Notice)
	}
	if _, err := os.Stat(DamagedPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an outdated index was set aside: %v", err)
	}
	if st := refresh(t, db, RefreshOptions{}); st.Indexed != 5 {
		t.Errorf("rebuilt index read %d files, want 5", st.Indexed)
	}
	refresh(t, db, RefreshOptions{Reindex: true})
	if _, err := os.Stat(DamagedPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--reindex set the index aside: %v", err)
	}
	db.Close()
	// Garbage where the index was.
	os.Remove(path + "-wal")
	os.WriteFile(path, []byte(strings.Repeat("not a database ", 500)), 0o600)
	db, err = Open(path, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !strings.Contains(db.Notice, filepath.Base(DamagedPath(path))) {
		t.Errorf("notice for a corrupt index: %q", db.Notice)
	}
	if _, err := os.Stat(DamagedPath(path)); err != nil {
		t.Errorf("the corrupt index was not set aside: %v", err)
	}
	if got := found(t, db, Query{Text: corpus.Vocabulary(0)}); len(got) != 0 {
		t.Errorf("a rebuilt index held hits before its refresh: %v", got)
	}
	refresh(t, db, RefreshOptions{})
	if got := found(t, db, Query{Text: corpus.Vocabulary(0)}); len(got) == 0 {
		t.Error("nothing found after the rebuild")
	}
}

// TestDataDirUntouched: indexing and searching leave the data dir's bytes,
// modes, times and listing as they were, and write nothing into it.
func TestDataDirUntouched(t *testing.T) {
	dir := writeDir(t, 30, 5)
	before := snapshot(t, dir)
	db := openTemp(t, dir)
	refresh(t, db, RefreshOptions{})
	found(t, db, Query{Text: corpus.Vocabulary(1)})
	refresh(t, db, RefreshOptions{Reindex: true})
	if after := snapshot(t, dir); after != before {
		t.Errorf("the data dir changed:\nbefore:\n%.2000s\nafter:\n%.2000s", before, after)
	}
}

// TestRealSessions: sessions nobody here wrote, the bundled omp samples
// and the real pi sessions, are found by words they contain.
func TestRealSessions(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(session.SessionsDir(dir), "--real--")
	os.MkdirAll(proj, 0o700)
	reals, _ := filepath.Glob(filepath.Join(realfixtures.Dir(t), "*.jsonl"))
	if len(reals) == 0 {
		realfixtures.Absent(t, "real pi sessions")
	}
	for _, p := range reals {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(proj, filepath.Base(p)), data, 0o600)
	}
	samples, _ := filepath.Abs("../session/testdata/omp")
	for _, d := range []string{dir, samples} {
		t.Run(filepath.Base(d), func(t *testing.T) {
			db := openTemp(t, d)
			refresh(t, db, RefreshOptions{})
			ct := readCorpus(t, d, true)
			checked := 0
			for path, docs := range ct {
				// A rare word of each file: the scan and the index agree.
				for _, dc := range docs {
					toks := searchtext.Tokenize(dc.Text)
					if len(toks) < 4 {
						continue
					}
					w := toks[len(toks)/2]
					want := ct.bruteForce([][]string{{w}}, false)
					got := found(t, db, Query{Text: w, Subagents: true})
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("%s: %q found in %v, the scan says %v", path, w, got, want)
					}
					checked++
					break
				}
			}
			if checked == 0 {
				t.Fatal("no words checked")
			}
		})
	}
}

// TestNotASession: a file that is no session is reported by the refresh
// that first meets it, not by every one, and indexed once it becomes one.
func TestNotASession(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(session.SessionsDir(dir), "--p--", "notes.jsonl")
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte("just some notes\n"), 0o600)
	db := openTemp(t, dir)
	for i, want := range []int{1, 0} {
		st, err := db.Refresh(context.Background(), RefreshOptions{})
		if err != nil || len(st.Errors) != want {
			t.Fatalf("refresh %d: %v errors (%v), want %d", i, st.Errors, err, want)
		}
	}
	os.WriteFile(path, []byte(`{"type":"session","version":3,"id":"s","timestamp":"2026-11-01T00:00:00.000Z","cwd":"/p"}`+"\n"+
		`{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"now a session"}}`+"\n"), 0o600)
	refresh(t, db, RefreshOptions{})
	if got := found(t, db, Query{Text: "now session"}); len(got) != 1 {
		t.Errorf("found %v", got)
	}
}

// TestHugeLine: a line over searchtext.MaxLineBytes is never held whole; its entry is
// indexed from its first megabyte, found by what is said there, placed
// in the tree, and its snippet cut from the same megabyte.
func TestHugeLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(session.SessionsDir(dir), "--p--", "s.jsonl")
	os.MkdirAll(filepath.Dir(path), 0o700)
	filler := strings.Repeat("filler ", (searchtext.MaxLineBytes+searchtext.MaxLineBytes/2)/7)
	lines := []string{
		`{"type":"session","version":3,"id":"s1","timestamp":"2026-11-01T00:00:00.000Z","cwd":"/p"}`,
		`{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"first"}}`,
		`{"type":"message","id":"b","parentId":"a","timestamp":"2026-11-01T00:00:01.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"hugeoutput starts ` + filler + ` lateword"}]}}`,
		`{"type":"message","id":"c","parentId":"b","message":{"role":"user","content":"after the huge one"}}`,
	}
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	db := openTemp(t, dir)
	st := refresh(t, db, RefreshOptions{})
	if st.Malformed != 1 {
		t.Errorf("malformed %d, want the huge line counted", st.Malformed)
	}
	hits, err := db.Search(context.Background(), Query{Text: "hugeoutput"})
	if err != nil || len(hits) != 1 {
		t.Fatalf("hugeoutput: %v %v", hits, err)
	}
	h := hits[0]
	if h.EntryID != "b" || h.Role != RoleTool || !h.OnActiveBranch || !strings.Contains(h.Snippet, "hugeoutput") {
		t.Errorf("hit %+v", h)
	}
	for q, n := range map[string]int{"lateword": 0, "after huge": 1} {
		if got := found(t, db, Query{Text: q}); len(got) != n {
			t.Errorf("%q: %d sessions, want %d", q, len(got), n)
		}
	}
}

// TestIndexFilesPrivate: every file of an index, SQLite's beside it too
// (its write-ahead log and shared memory), is 0600 whatever the umask,
// after a refresh, a search and a reopen: transcripts' words are in them.
func TestIndexFilesPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := writeDir(t, 5, 1)
	for range 2 {
		db := openTemp(t, dir)
		refresh(t, db, RefreshOptions{})
		found(t, db, Query{Text: "the"})
		entries, err := os.ReadDir(filepath.Dir(db.Path()))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().IsRegular() && fi.Mode().Perm() != 0o600 {
				t.Errorf("%s is %v", e.Name(), fi.Mode().Perm())
			}
		}
		db.Close()
	}
}
