package foreign

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ncruces/go-sqlite3"

	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/realfixtures"
)

var realOpencode = realfixtures.Join("opencode-sqlite")

// opencodeRoot is an opencode data dir holding a copy of the real
// database (the fixture stays untouched); without the real fixtures the
// test is skipped (failed under CI): its schema is the real one's.
func opencodeRoot(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(realfixtures.Path(t, "opencode-sqlite", opencodeDB))
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "opencode")
	os.MkdirAll(root, 0o700)
	if err := os.WriteFile(filepath.Join(root, opencodeDB), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return root
}

// opencodeRootWithStorage is opencodeRoot with the older storage/ layout
// beside the database: a hand-made session, a subagent's, and a session
// the database also has (left behind by opencode's move to SQLite).
func opencodeRootWithStorage(t testing.TB) string {
	t.Helper()
	root := opencodeRoot(t)
	copyTree(t, "testdata/opencode/storage", filepath.Join(root, "storage"))
	addOpencodeV2(t, filepath.Join(root, opencodeDB))
	return root
}

// addOpencodeV2 adds to the database at db a session that has only
// opencode 2's projected history (session_message rows), hand-made after
// opencode's v1-read mapping: a user's text, an assistant's reasoning,
// tool call (with its result) and text.
func addOpencodeV2(t testing.TB, db string) {
	t.Helper()
	c, err := sqlite3.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Exec(`INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)
		VALUES ('ses_v2only', 'global', 'v2', '/work/v2', 'Projected history', '2.0.0', 1790000000000, 1790000009000);
		INSERT INTO session_message (id, session_id, type, seq, time_created, time_updated, data) VALUES
		('msg_v2a', 'ses_v2only', 'user', 0, 1790000001000, 1790000001000, '{"time":{"created":1790000001000},"text":"count the projectedword files"}'),
		('msg_v2b', 'ses_v2only', 'assistant', 1, 1790000002000, 1790000002000, '{"time":{"created":"2026-09-21T14:13:22.000Z","completed":1790000008000},"agent":"build","model":{"providerID":"anthropic","id":"claude-sonnet-4","variant":"default"},"content":[{"type":"reasoning","id":"prt_r","text":"ls and wc"},{"type":"tool","id":"call_v2","name":"bash","state":{"status":"completed","input":{"command":"ls | wc -l"},"structured":{},"content":[{"type":"text","text":"7"}]},"time":{"created":1790000003000,"completed":1790000004000}},{"type":"text","id":"prt_t","text":"Seven files, projectedword."}],"finish":"stop","cost":0.01,"tokens":{"input":100,"output":20,"reasoning":5,"cache":{"read":0,"write":0}}}')`)
	if err != nil {
		t.Fatal(err)
	}
}

// opencodeMessages counts the messages a conversion of s must give, from
// the database itself: each user message with a text part, each assistant
// message with a reasoning, text or tool part, and each finished tool
// part's result.
func opencodeMessages(t *testing.T, s Session) int {
	t.Helper()
	n := 0
	if storage, ok := opencodeStorageOf(s.Path); ok {
		for _, m := range opencodeStorageMessages(storage, s.ID) {
			var text, content, results int
			for _, p := range opencodeStorageParts(storage, m.id) {
				typ, _ := p.Get("type").Text()
				text += b2i(typ == "text")
				content += b2i(typ == "text" || typ == "reasoning" || typ == "tool")
				results += b2i(typ == "tool" && (p.Get("state").Get("status").Is("completed") || p.Get("state").Get("status").Is("error")))
			}
			switch {
			case m.v.Get("role").Is("user"):
				n += min(1, text)
			case m.v.Get("role").Is("assistant"):
				n += min(1, content) + results
			}
		}
		return n
	}
	db, id, _ := splitOpencodePath(s.Path)
	if id == "ses_v2only" {
		return 3 // the user's, the assistant's and its tool's result (addOpencodeV2)
	}
	err := withOpencode(db, func(c *sqlite3.Conn) error {
		st, _, err := c.Prepare(`SELECT json_extract(m.data, '$.role'),
			sum(json_extract(p.data, '$.type') = 'text'),
			sum(json_extract(p.data, '$.type') IN ('text', 'reasoning', 'tool')),
			sum(json_extract(p.data, '$.type') = 'tool' AND json_extract(p.data, '$.state.status') IN ('completed', 'error'))
			FROM message m JOIN part p ON p.message_id = m.id WHERE m.session_id = ? GROUP BY m.id`)
		if err != nil {
			return err
		}
		defer st.Close()
		st.BindText(1, id)
		for st.Step() {
			switch st.ColumnText(0) {
			case "user":
				n += min(1, st.ColumnInt(1))
			case "assistant":
				n += min(1, st.ColumnInt(2)) + st.ColumnInt(3)
			}
		}
		return st.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestOpencodeStorage: the older storage/ layout lists beside the
// database (a session in both is listed once, the database's), its
// subagent session only with subagents and naming its parent; its
// sessions convert with the database's mapping, and a damaged file is
// an error naming it.
func TestOpencodeStorage(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := opencodeRootWithStorage(t)
	src, _ := NewSource(HarnessOpencode, root)
	list, _ := src.List(false)
	all, _ := src.List(true)
	if len(list) != 5 || len(all) != 6 {
		t.Fatalf("%d sessions, %d with subagents; want 5 and 6", len(list), len(all))
	}
	seen := map[string]int{}
	for _, s := range all {
		seen[s.ID]++
		if s.ID == "ses_hand0002" && (!s.Subagent || s.ParentSession != "ses_hand0001") {
			t.Errorf("the subagent's session: %+v", s)
		}
		if s.ID == "ses_hand0001" && (s.Title != "Storage layout session" || s.Cwd != "/work/storage" || s.FirstMessage != "list the storagelayout files") {
			t.Errorf("the storage session: %+v", s)
		}
		if s.ID == "ses_v2only" && s.FirstMessage != "count the projectedword files" {
			t.Errorf("the session of projected history: %+v", s)
		}
		if s.ID == "ses_031541bf9ffeMiy2LOFii47rch" && strings.HasSuffix(s.Path, ".json") {
			t.Errorf("a session in both is listed from storage/: %s", s.Path)
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s listed %d times", id, n)
		}
	}
	bad := filepath.Join(root, "storage", "session", "global", "ses_hand0001.json")
	os.WriteFile(bad, []byte(`{"id":"ses_hand0001","title":`), 0o600)
	if h, err := Detect(filepath.Join(root, "storage", "session", "global", "ses_hand0002.json")); h != HarnessOpencode || err != nil {
		t.Errorf("Detect of a storage session file: %q, %v", h, err)
	}
	s, _ := src.At(bad)
	if s.Err == nil || !strings.Contains(s.Err.Error(), bad) {
		t.Errorf("a session file cut short: %v", s.Err)
	}
}

// dirState is every name in dir with its bytes: what reading must leave
// as it was.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		out[e.Name()] = string(b)
	}
	return out
}

func names(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestOpencodeList: the real database lists its three sessions, with
// titles, cwds, times and first prompts, read in place: its directory
// holds the same names and bytes after (no -wal, no -shm).
func TestOpencodeList(t *testing.T) {
	realfixtures.Path(t, "opencode-sqlite", opencodeDB)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	before := dirState(t, realOpencode)
	src, _ := NewSource(HarnessOpencode, realOpencode)
	for range 2 { // the second from the kept copy
		list, err := src.List(true)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 3 {
			t.Fatalf("%d sessions, want 3", len(list))
		}
		for _, s := range list {
			if s.ID == "" || s.Title == "" || s.Cwd != "/work" || s.FirstMessage == "" || s.Created.IsZero() || s.Modified.Before(s.Created) {
				t.Errorf("%+v", s)
			}
			if at, err := src.At(s.Path); err != nil || at.ID != s.ID {
				t.Errorf("At(%s) = %+v, %v", s.Path, at, err)
			}
			c, err := convertAll(src.Stream(s, ForReading))
			if err != nil || len(c.Entries) == 0 {
				t.Errorf("%s: %d entries, %v", s.Path, len(c.Entries), err)
			}
		}
	}
	if after := dirState(t, realOpencode); !maps2Equal(before, after) {
		t.Errorf("reading changed opencode's directory: %v, was %v", names(after), names(before))
	}
}

// TestOpencodeWhileWriting: a writer holds a copy of the database open in
// WAL mode (as opencode does) and adds a session with a message between
// reads; every read lists what the writer committed, the WAL's pages
// included, and leaves the directory's names and bytes (database, -wal,
// -shm) as they were before it.
func TestOpencodeWhileWriting(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := opencodeRoot(t)
	db := filepath.Join(root, opencodeDB)
	w, err := sqlite3.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Exec(`PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0`); err != nil {
		t.Fatal(err)
	}
	src, _ := NewSource(HarnessOpencode, root)
	for k := range 6 {
		id := fmt.Sprintf("ses_written%02d", k)
		err := w.Exec(fmt.Sprintf(`INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)
			VALUES ('%[1]s', 'global', 's', '/work/w', 'written %[2]d', '1.18.13', %[3]d, %[3]d);
			INSERT INTO message (id, session_id, time_created, time_updated, data)
			VALUES ('msg_%[1]s', '%[1]s', %[3]d, %[3]d, '{"role":"user","time":{"created":%[3]d}}');
			INSERT INTO part (id, message_id, session_id, time_created, time_updated, data)
			VALUES ('prt_%[1]s', 'msg_%[1]s', '%[1]s', %[3]d, %[3]d, '{"type":"text","text":"written prompt %[2]d"}')`,
			id, k, 1790000000000+k))
		if err != nil {
			t.Fatal(err)
		}
		before := dirState(t, root)
		if _, ok := before[opencodeDB+"-wal"]; !ok {
			t.Fatal("the writer has no WAL: the test tests nothing")
		}
		list, err := src.List(true)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, s := range list {
			if s.ID == id {
				found = s.FirstMessage == fmt.Sprintf("written prompt %d", k)
				c, err := convertAll(src.Stream(s, ForReading))
				if err != nil || len(c.Entries) != 1 {
					t.Errorf("%s: %d entries, %v", id, len(c.Entries), err)
				}
			}
		}
		if !found || len(list) != 4+k {
			t.Errorf("write %d: %d sessions, the new one found: %v", k, len(list), found)
		}
		if after := dirState(t, root); !maps2Equal(before, after) {
			t.Fatalf("write %d: reading changed opencode's directory: %v, was %v", k, names(after), names(before))
		}
	}
}

// TestOpencodeBadDatabase: a database of a schema xdev does not read, a
// file that is not a database, and one cut short fail with an error that
// names the file, and are left as they were.
func TestOpencodeBadDatabase(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	cases := map[string]func(path string){
		"unknown schema": func(p string) {
			c, _ := sqlite3.Open(p)
			c.Exec(`CREATE TABLE session (id text, title text); CREATE TABLE session_v3 (id text)`)
			c.Close()
		},
		"not a database": func(p string) { os.WriteFile(p, []byte("not sqlite at all, for sure not\n"), 0o600) },
		"cut short": func(p string) {
			b, err := os.ReadFile(filepath.Join(realOpencode, opencodeDB))
			if err != nil {
				b = make([]byte, 8192)
			}
			os.WriteFile(p, b[:len(b)/3], 0o600)
		},
	}
	for name, make := range cases {
		root := t.TempDir()
		db := filepath.Join(root, opencodeDB)
		make(db)
		before := dirState(t, root)
		src, _ := NewSource(HarnessOpencode, root)
		_, err := src.List(true)
		if err == nil || !strings.Contains(err.Error(), db) {
			t.Errorf("%s: error %v, want one naming %s", name, err, db)
		}
		if name == "unknown schema" && (err == nil || !strings.Contains(err.Error(), "opencode 1.x")) {
			t.Errorf("%s: error %v does not say which schema is read", name, err)
		}
		if !maps2Equal(before, dirState(t, root)) {
			t.Errorf("%s: the directory changed", name)
		}
	}
}

// BenchmarkOpencodeList lists a generated database of 10,000 sessions of
// 20 messages (two parts each): what a listing costs without reading
// every message (its copy into the cache is taken once, outside the
// timing, as a second listing finds it).
func BenchmarkOpencodeList(b *testing.B) {
	b.Setenv("XDG_CACHE_HOME", b.TempDir())
	root := b.TempDir()
	db := filepath.Join(root, opencodeDB)
	if err := corpus.WriteOpencode(db, 10_000, 20); err != nil {
		b.Fatal(err)
	}
	src, _ := NewSource(HarnessOpencode, root)
	if list, err := src.List(true); err != nil || len(list) != 10_000 {
		b.Fatalf("%d sessions, %v", len(list), err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := src.List(true); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzOpencode: any message row (its data, then its parts' data, a line
// each), and any projected message's data, converts or fails with an
// error, never a panic, and every entry is JSON.
func FuzzOpencode(f *testing.F) {
	f.Add([]byte(`{"role":"assistant","providerID":"p","modelID":"m","tokens":{"input":1,"cache":{"read":2}},"cost":0.5}` + "\n" +
		`{"type":"tool","callID":"c","tool":"write","state":{"status":"completed","input":{"a":1},"output":"ok","time":{"end":5}}}` + "\n" +
		`{"type":"reasoning","text":"r"}`))
	f.Add([]byte(`{"role":"user","time":{"created":1e300}}` + "\n" + `{"type":"text","text":"t","synthetic":true}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := strings.Split(string(data), "\n")
		m, err := jsonx.Parse([]byte(lines[0]))
		if err != nil {
			return
		}
		var ps []jsonx.Value
		for _, l := range lines[1:] {
			if p, err := jsonx.Parse([]byte(l)); err == nil {
				ps = append(ps, p)
			}
		}
		ch := &chain{prefix: "opencode", purpose: ForReading, emit: validEntry(t)}
		model := ""
		checkConversion(t, opencodeMessage(ch, m, ps, 1, 1, &model))
		// And the line as opencode 2's projected message's data.
		for _, typ := range []string{"user", "assistant"} {
			if v1, parts := opencodeV1Of(typ, m); v1.Defined() {
				checkConversion(t, opencodeMessage(ch, v1, parts, 1, 1, &model))
			}
		}
	})
}
