package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/testscale"

	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/pgtest"
	"github.com/xdev/xdev/internal/search"
	"github.com/xdev/xdev/internal/searchtext"
	"github.com/xdev/xdev/internal/session"
)

// TestPushInterrupted: a push cancelled between files, or in the middle
// of a file's COPY, or failing on a file that is not a session after its
// lines went out, leaves only whole files stored: each stored session is
// its file's bytes, with no line of a rolled-back transaction left over.
// The next push stores the rest.
func TestPushInterrupted(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	dir := t.TempDir()
	if _, err := corpus.WriteDir(dir, 30, 5); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(session.SessionsDir(dir), "--big--", "2026-11-30T00-00-00-000Z_big.jsonl")
	os.MkdirAll(filepath.Dir(big), 0o700)
	if _, err := corpus.WriteFile(big, corpus.Options{Size: int64(testscale.N(20, 20)) << 20, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(session.SessionsDir(dir), "--junk--", "junk.jsonl")
	os.MkdirAll(filepath.Dir(junk), 0o700)
	os.WriteFile(junk, bytes.Repeat([]byte(`{"type":"message","id":"x"}`+"\n"), 5000), 0o600)

	// Cancel between files, then in the middle of the big one's COPY.
	for _, after := range []time.Duration{0, 30 * time.Millisecond, 150 * time.Millisecond} {
		cctx, cancel := context.WithCancel(ctx)
		progress := func(done, total int) {
			if after == 0 && done >= 5 {
				cancel()
			}
		}
		if after > 0 {
			time.AfterFunc(after, cancel)
		}
		db.Push(cctx, dir, PushOptions{Progress: progress})
		cancel()
		checkStored(t, db, dir)
	}
	st, err := db.Push(ctx, dir, PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Failed) != 1 || !errors.Is(st.Failed[0].Err, session.ErrNoHeader) || !strings.Contains(st.Failed[0].Error(), junk) {
		t.Errorf("failed: %v; want the junk file, named, with no header", st.Failed)
	}
	checkStored(t, db, dir)
	list, _ := db.List(ctx, ListOptions{Subagents: true})
	if want := len(sessionFiles(t, dir)) - 1; len(list) != want {
		t.Errorf("%d stored, want %d", len(list), want)
	}
}

// checkStored checks each stored session is its file's bytes, and that
// no line row is left of a rolled-back push.
func checkStored(t *testing.T, db *DB, dir string) {
	t.Helper()
	ctx := context.Background()
	files := sessionFiles(t, dir)
	list, err := db.List(ctx, ListOptions{Revisions: true, Subagents: true})
	if err != nil {
		t.Fatal(err)
	}
	var lines int64
	for _, s := range list {
		var buf bytes.Buffer
		if err := db.WriteSession(ctx, s, &buf); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), files[s.Path]) || s.Revision != 1 {
			t.Errorf("%s: stored %d bytes, the file has %d", s.Name(), buf.Len(), len(files[s.Path]))
		}
		lines += int64(s.Lines)
	}
	var rows int64
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM `+db.t("lines")).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != lines {
		t.Errorf("%d line rows, the sessions say %d", rows, lines)
	}
}

// TestReadOnlyRole: a role granted SELECT alone lists, opens, reads and
// searches the sessions a writer pushed, and is refused a push.
func TestReadOnlyRole(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDB(t)
	db, err := Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dir := shapes(t, 10)
	if _, err := db.Push(ctx, dir, PushOptions{}); err != nil {
		t.Fatal(err)
	}
	role := fmt.Sprintf("reader_%d", time.Now().UnixNano())
	for _, sql := range []string{
		`CREATE ROLE ` + role + ` LOGIN`,
		`GRANT USAGE ON SCHEMA xdev TO ` + role,
		`GRANT SELECT ON ALL TABLES IN SCHEMA xdev TO ` + role,
	} {
		if _, err := db.pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	ro, err := Open(ctx, strings.Replace(url, "://"+pgtest.Superuser+"@", "://"+role+"@", 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	list, err := ro.List(ctx, ListOptions{})
	if err != nil || len(list) == 0 {
		t.Fatalf("list: %d, %v", len(list), err)
	}
	// The golden shapes share one id, and some have none, so the session
	// asked for is one whose id names it alone, whatever order the list
	// comes in.
	count := map[string]int{}
	for _, l := range list {
		count[l.ID]++
	}
	id := ""
	for _, l := range list {
		if l.ID != "" && count[l.ID] == 1 {
			id = l.ID
			break
		}
	}
	s, err := ro.Find(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ro.OpenSession(ctx, s, nil); err != nil {
		t.Error(err)
	}
	if _, err := ro.Search(ctx, Query{Text: "the"}); err != nil {
		t.Error(err)
	}
	// The push is refused for the role, not for some file it happened to
	// try first.
	_, err = ro.Push(ctx, dir, PushOptions{Origin: "ro"})
	if err == nil || !strings.Contains(err.Error(), "permission denied") || !strings.Contains(err.Error(), "this role may not push") ||
		strings.Contains(err.Error(), ".jsonl") {
		t.Errorf("push as a reader: %v, want the role named as the cause", err)
	}
	// omp's table lives in schema public, where since PostgreSQL 15 only
	// the owner creates: the error says what to grant.
	tbl, err := ro.OmpTable("")
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.Create(ctx); err == nil || !strings.Contains(err.Error(), "GRANT USAGE, CREATE ON SCHEMA public TO") {
		t.Errorf("omp's table as a role that may not create it: %v", err)
	}
	// A revision that is not there is named as the missing part.
	if _, err := ro.Find(ctx, id+"@7"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "has no revision 7; its revisions are 1 to 1") {
		t.Errorf("a missing revision: %v", err)
	}
}

// TestPasswordNeverPrinted: errors of a connection that fails name the
// database but never its password.
func TestPasswordNeverPrinted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, url := range []string{
		"postgres://someone:s3cr3t-pw@127.0.0.1:1/db?connect_timeout=2",
		"postgres://someone:s3cr3t-pw@127.0.0.1:notaport/db",
		"postgres://someone:s3cr3t-pw@127.0.0.1:1/db?sslmode=bogus",
		"host=127.0.0.1 port=1 user=someone password=s3cr3t-pw connect_timeout=2",
	} {
		_, err := Open(ctx, url, nil)
		if err == nil {
			t.Fatalf("%s: connected", url)
		}
		if strings.Contains(err.Error(), "s3cr3t-pw") {
			t.Errorf("the error prints the password: %v", err)
		}
	}
	if _, err := Open(ctx, "", nil); !errors.Is(err, ErrNoURL) && os.Getenv(EnvURL) == "" {
		t.Errorf("no URL: %v", err)
	}
	if _, err := Open(ctx, "postgres://x@127.0.0.1:1/db", &Options{Schema: "a;drop"}); err == nil || !strings.Contains(err.Error(), "schema") {
		t.Errorf("a schema that is not a name: %v", err)
	}
}

// TestSearch: the sessions a search finds for words of every frequency
// are between those whose text holds the word delimited by spaces and
// those whose text holds it at all, whatever PostgreSQL's parser makes
// of code (paths, URLs, hyphens); with filters, each hit passes them.
func TestSearch(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	dir := t.TempDir()
	if _, err := corpus.WriteDir(dir, 60, 11); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Push(ctx, dir, PushOptions{}); err != nil {
		t.Fatal(err)
	}
	// The text of each stored session, by the rule the search indexes.
	texts := map[string]string{}
	roles := map[string]map[string]bool{}
	files, _ := session.Files(dir)
	root := session.SessionsDir(dir)
	for _, f := range files {
		if f.Subagent {
			continue
		}
		rel, _ := filepath.Rel(root, f.Path)
		var sb strings.Builder
		roles[rel] = map[string]bool{}
		session.ReadFrom(f.Path, session.Cursor{}, nil, func(r session.Read) error {
			if r.Entry != nil {
				d := searchtext.Of(r.Entry)
				sb.WriteString(" " + strings.ToLower(d.Text) + " ")
				if d.Role != "" {
					roles[rel][d.Role] = true
				}
			}
			return nil
		})
		texts[filepath.ToSlash(rel)] = sb.String()
	}
	for _, k := range []int{1, 3, 10, 40, 100, 400, 1000, 3000, 10000, 30000} {
		w := corpus.Vocabulary(k)
		hits, err := db.Search(ctx, Query{Text: w, Limit: 100000})
		if err != nil {
			t.Fatal(err)
		}
		found := map[string]bool{}
		for _, h := range hits {
			found[h.Session.Path] = true
			if !slices.ContainsFunc(h.Highlights, func(m [2]int) bool { return strings.EqualFold(h.Snippet[m[0]:m[1]], w) }) {
				t.Errorf("%q: snippet %q does not mark the word (%v)", w, h.Snippet, h.Highlights)
			}
		}
		for p, text := range texts {
			switch {
			case found[p] && !strings.Contains(text, w):
				t.Errorf("%q found in %s, whose text does not hold it", w, p)
			case !found[p] && strings.Contains(text, " "+w+" "):
				t.Errorf("%q not found in %s, whose text holds it as a word", w, p)
			}
		}
	}
	hits, err := db.Search(ctx, Query{Text: corpus.Vocabulary(3), Role: search.RoleUser, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.Role != search.RoleUser {
			t.Errorf("--role user gave a %s hit", h.Role)
		}
	}
	// A query that cannot run is refused, as the local index refuses it.
	if _, err := db.Search(ctx, Query{Text: `"unclosed OR -`}); !errors.Is(err, searchtext.ErrQuery) {
		t.Errorf("a malformed query: %v, want a QueryError", err)
	}
}

// TestMigrate: a schema made by an older xdev (version 1) is brought to
// this version by the first Open, once, its sessions kept; one of a newer
// version is refused, not touched.
func TestMigrate(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDB(t)
	db, err := Connect(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	old := strings.ReplaceAll(migrations[0], "{{s}}", `"xdev"`)
	for _, sql := range []string{`CREATE SCHEMA xdev`, `CREATE TABLE xdev.schema_version (version int NOT NULL)`, `INSERT INTO xdev.schema_version VALUES (1)`, old,
		// A line stored at version 1, before the terms column: found by
		// search once migrated.
		`INSERT INTO xdev.sessions (path, revision, id, origin) VALUES ('-p/old.jsonl', 1, 'old', 'o')`,
		`INSERT INTO xdev.lines (session, off, seq, entry_id, type, role, line, doc) SELECT key, 0, 1, 'aaaaaaaa', 'message', 'user', '{}', 'the Überprüfung of snake_case and 日本語' FROM xdev.sessions`,
	} {
		if _, err := db.pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		db2, err := Open(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := db2.version(ctx); err != nil || v != SchemaVersion {
			t.Errorf("version %d, %v; want %d", v, err, SchemaVersion)
		}
		if _, err := db2.Push(ctx, shapes(t, 2), PushOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"uberprufung", "snake_case", "日本", "Überpr*"} {
			hits, err := db2.Search(ctx, Query{Text: q, Session: "old"})
			if err != nil || len(hits) != 1 {
				t.Errorf("after the migration, %q finds %d hits (%v), want the line stored before it", q, len(hits), err)
			}
		}
		db2.Close()
	}
	if _, err := db.pool.Exec(ctx, `UPDATE xdev.schema_version SET version = 99`); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, url, nil); !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), "upgrade xdev") {
		t.Errorf("a newer schema: %v", err)
	}
}
