package foreign

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ncruces/go-sqlite3"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/realfixtures"
)

var realCrush = realfixtures.Join("crush")

// crushHandID is the hand-made Crush session (testdata/crush/hand.sql).
const crushHandID = "c0ffee00-hand-4000-8000-000000000001"

// makeSQLite builds a database at db from the SQL file at sqlFile.
func makeSQLite(t testing.TB, sqlFile, db string) {
	t.Helper()
	b, err := os.ReadFile(sqlFile)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(db), 0o700)
	c, err := sqlite3.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Exec(string(b)); err != nil {
		t.Fatal(err)
	}
}

// crushRoot is a Crush global data dir whose projects.json names the
// real projects (their .crush/ as published: one database's rows only in
// its -wal) and a hand-made one (testdata/crush/hand.sql).
func crushRoot(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "crush")
	var projects []string
	if hasReal(t, "the real Crush databases") {
		ents, _ := os.ReadDir(realCrush)
		for _, e := range ents {
			dir := filepath.Join(base, "projects", e.Name())
			copyTree(t, filepath.Join(realCrush, e.Name()), dir)
			projects = append(projects, fmt.Sprintf(`{"path":%q,"data_dir":%q}`, dir, filepath.Join(dir, ".crush")))
		}
	}
	hand := filepath.Join(base, "projects", "hand-crush")
	makeSQLite(t, "testdata/crush/hand.sql", filepath.Join(hand, ".crush", crushDB))
	projects = append(projects, fmt.Sprintf(`{"path":%q,"data_dir":".crush"}`, hand))
	os.MkdirAll(root, 0o700)
	os.WriteFile(filepath.Join(root, crushProjects), []byte(`{"projects":[`+strings.Join(projects, ",")+`]}`), 0o600)
	return root
}

// crushMessages counts the messages omp's context of a Crush session's
// import holds: each user row with text, assistant row with reasoning,
// text or a tool call, and tool result; from the summary on, when the
// session has one (the summary, then what follows it).
func crushMessages(t *testing.T, s Session) int {
	t.Helper()
	_, db, id, _ := SplitContained(s.Path)
	n := 0
	err := withCrush(db, func(c *sqlite3.Conn) error {
		sum := `0`
		if hasColumn(c, "messages", "is_summary_message") {
			sum = `is_summary_message`
		}
		st, _, err := c.Prepare(`SELECT role, parts, ` + sum + ` FROM messages WHERE session_id = ? ORDER BY created_at, rowid`)
		if err != nil {
			return err
		}
		defer st.Close()
		st.BindText(1, id)
		for st.Step() {
			parts, err := jsonx.Parse([]byte(st.ColumnText(1)))
			if err != nil {
				continue
			}
			if st.ColumnInt64(2) != 0 {
				n = 1 // the summary stands for what came before
				continue
			}
			counted := false
			for _, p := range parts.Items() {
				typ, _ := p.Get("type").Text()
				switch {
				case typ == "tool_result":
					n++
				case !counted && (typ == "text" || (st.ColumnText(0) == "assistant" && (typ == "reasoning" || typ == "tool_call"))):
					n++
					counted = true
				}
			}
		}
		return st.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCrushList: the sessions of every project projects.json names list
// (the real ones' 6 and the hand-made two, a child with subagents only),
// with their titles, projects, times and first messages; a database whose
// rows are all in its -wal lists whole; the projects' bytes are unchanged
// and no -wal or -shm is made beside a database.
func TestCrushList(t *testing.T) {
	root := crushRoot(t)
	projects := filepath.Join(filepath.Dir(root), "projects")
	before := treeBytes(t, projects)
	src, _ := NewSource(HarnessCrush, root)
	main, err := src.List(false)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := src.List(true)
	want := 1
	if hasReal(t, "the real Crush databases") {
		want += 6
	}
	if len(main) != want || len(all) != want+1 {
		t.Fatalf("%d sessions (%d with subagents), want %d and %d", len(main), len(all), want, want+1)
	}
	for _, s := range all {
		if s.Err != nil || s.Title == "" || s.Created.IsZero() || s.Modified.Before(s.Created) || s.FirstMessage == "" {
			t.Errorf("%+v", s)
		}
		if got, err := src.At(s.Path); err != nil || got.ID != s.ID || got.Cwd != s.Cwd {
			t.Errorf("At(%s) = %+v, %v", s.Path, got, err)
		}
		if filepath.Base(s.Cwd) == "Exa-Networks__exabgp" && s.Title != "Create CRUSH.md for Codebase with Guidelines" {
			t.Errorf("the database of a -wal only: %+v", s)
		}
	}
	hand := all[slices.IndexFunc(all, func(s Session) bool { return s.ID == crushHandID })]
	if hand.FirstMessage != "find the flaky test" || hand.Created.Unix() != 1760000000 || filepath.Base(hand.Cwd) != "hand-crush" {
		t.Errorf("hand-made: %+v", hand)
	}
	// The current project, and one named: found without projects.json.
	ps := src.(ProjectReader).WithProjects(func() []string { return []string{filepath.Join(projects, "hand-crush")} })
	os.Remove(filepath.Join(root, crushProjects))
	if l, _ := ps.List(false); len(l) != 1 || l[0].ID != crushHandID {
		t.Errorf("a named project lists %+v", l)
	}
	if l, _ := ps.(CwdLister).ListCwd(filepath.Join(projects, "hand-crush", "sub", "dir"), true); len(l) != 2 {
		t.Errorf("from a directory of the project: %d sessions, want 2", len(l))
	}
	if after := treeBytes(t, projects); !maps2Equal(before, after) {
		t.Error("listing changed the projects' files (a -wal or -shm made?)")
	}
}

// TestCrushConvert: the hand-made session converts to what Crush's
// context is: reasoning, text and tool calls, the results by their call's
// name, a change of model, the summary a compaction; the row that is not
// JSON skipped and counted.
func TestCrushConvert(t *testing.T) {
	root := crushRoot(t)
	src, _ := NewSource(HarnessCrush, root)
	all, _ := src.List(true)
	s := all[slices.IndexFunc(all, func(s Session) bool { return s.ID == crushHandID })]
	c, err := convertAll(src.Stream(s, ForResume))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range c.Entries {
		v, _ := jsonx.Parse(e)
		m := v.Get("message")
		role, _ := m.Get("role").Text()
		switch {
		case v.Get("type").Is("model_change"):
			model, _ := v.Get("model").Text()
			got = append(got, "model "+model)
		case v.Get("type").Is("compaction"):
			sum, _ := v.Get("summary").Text()
			got = append(got, "compaction "+sum[:8])
		case role == "toolResult":
			name, _ := m.Get("toolName").Text()
			got = append(got, fmt.Sprintf("toolResult %s error %v", name, m.Get("isError").Truthy()))
		default:
			var parts []string
			for _, b := range m.Get("content").Items() {
				typ, _ := b.Get("type").Text()
				parts = append(parts, typ)
			}
			got = append(got, role+" "+strings.Join(parts, ","))
		}
	}
	want := []string{"user text", "model openai/gpt-5", "assistant thinking,text,toolCall,toolCall", "toolResult grep error false",
		"toolResult bash error true", "model anthropic/claude-sonnet-4-20250514", "assistant text", "compaction Summary:", "user text"}
	if !slices.Equal(got, want) {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
	if c.Skipped != 1 || c.Title != "Hand-made Crush session" || filepath.Base(c.Cwd) != "hand-crush" {
		t.Errorf("skipped %d, title %q, cwd %q", c.Skipped, c.Title, c.Cwd)
	}
}

// TestCrushUsage: each session is one call of its recorded tokens and
// its own cost (a parent's less its child's); the real ones' as Crush
// recorded them.
func TestCrushUsage(t *testing.T) {
	root := crushRoot(t)
	src, _ := NewSource(HarnessCrush, root)
	all, _ := src.List(true)
	want := map[string]float64{crushHandID: 0.04, "c0ffee00-hand-4000-8000-000000000002": 0.01}
	if hasReal(t, "the real Crush databases") {
		// The sessions tables' cost column (../shared/fixtures/real/FORMATS.md).
		want["4f04805a-caf7-4a47-b98f-b50e16556fa2"] = 0.404027
		want["a20c5ed5-41d4-45f7-88eb-7ba0645f1341"] = 3.201505
		want["f306c145-4c83-492c-b575-739c30bbced4"] = 0.020346
		want["8fb1c137-78ed-4e1f-82ec-748d87eac734"] = 0.2111724
		want["69ed57e7-f5cb-47a7-b1b3-056eaa520a51"] = 0.3174903
		want["a179a6fe-c685-4bce-ab2b-f6924ab913e1"] = 0.0640179
	}
	for _, s := range all {
		u, err := src.Usage(s)
		if err != nil || len(u.Calls) != 1 {
			t.Fatalf("%s: %d calls, %v", s.ID, len(u.Calls), err)
		}
		call := u.Calls[0]
		if math.Abs(call.Cost-want[s.ID]) > 1e-6 || !call.HasCost || call.Tokens.Input == 0 || call.Model.ID() == "unknown" {
			t.Errorf("%s: %+v, want cost %v", s.ID, call, want[s.ID])
		}
	}
}

// FuzzCrush: any parts of a message row convert, list and cost without
// a panic or an entry that is not JSON.
func FuzzCrush(f *testing.F) {
	f.Add(`[{"type":"tool_call","data":{"id":"x","input":"{"}},{"type":"reasoning","data":{}}]`, "assistant")
	f.Add(`[{"type":"tool_result","data":{"is_error":"yes","content":3}}]`, "tool")
	f.Add(`[{"type":"text","data":{"text":"hi"}}]`, "user")
	db := filepath.Join(f.TempDir(), "p", ".crush", crushDB)
	makeSQLite(f, "testdata/crush/hand.sql", db)
	n := 0
	f.Fuzz(func(t *testing.T, parts, role string) {
		n++
		c, err := sqlite3.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		st, _, _ := c.Prepare(`INSERT INTO messages VALUES (?, ?, ?, ?, 'm', 1, 1, NULL, 'p', 0)`)
		st.BindText(1, fmt.Sprint("fuzz", n))
		st.BindText(2, crushHandID)
		st.BindText(3, role)
		st.BindText(4, parts)
		st.Exec()
		st.Close()
		c.Close()
		src := crushSource{root: t.TempDir()}
		path := containedPath(db, crushHandID)
		checkConversion(t, StreamCrush(path, ForReading, func(*Converted) error { return nil }, validEntry(t)))
		src.At(path)
		src.Usage(Session{Path: path})
	})
}

// TestCrushDamaged: a project whose database is not one (a torn copy,
// another program's file) lists as a row with its error; the other
// projects still list, and the damaged file is left as it was.
func TestCrushDamaged(t *testing.T) {
	root := crushRoot(t)
	bad := filepath.Join(filepath.Dir(root), "projects", "bad")
	db := filepath.Join(bad, ".crush", crushDB)
	os.MkdirAll(filepath.Dir(db), 0o700)
	junk := []byte("SQLite format 3\x00 and then nothing a database holds")
	os.WriteFile(db, junk, 0o600)
	src, _ := NewSource(HarnessCrush, root)
	ps := src.(ProjectReader).WithProjects(func() []string { return []string{bad} })
	list, err := ps.List(false)
	if err != nil {
		t.Fatal(err)
	}
	var damaged, fine int
	for _, s := range list {
		if s.Err != nil {
			damaged++
			if !strings.Contains(s.Err.Error(), db) {
				t.Errorf("the error does not name the file: %v", s.Err)
			}
		} else {
			fine++
		}
	}
	if damaged != 1 || fine == 0 {
		t.Errorf("%d damaged rows, %d sessions; want 1 and the others", damaged, fine)
	}
	if b, _ := os.ReadFile(db); string(b) != string(junk) {
		t.Error("the damaged database was changed")
	}
	if _, err := os.Stat(db + "-wal"); err == nil {
		t.Error("a -wal was made beside it")
	}
}
