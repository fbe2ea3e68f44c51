package foreign

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ncruces/go-sqlite3"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/realfixtures"
)

var realGoose = realfixtures.Join("goose")

// gooseRoot is a Goose data dir of the real database (one session, no
// messages) beside projects.json, or, without the real fixtures, of the
// hand-made one; and a JSONL session of the older layout.
func gooseRoot(t *testing.T, hand bool) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "goose")
	if !hand && hasReal(t, "the real Goose database") {
		copyTree(t, realGoose, root)
	} else {
		makeSQLite(t, "testdata/goose/hand.sql", filepath.Join(root, "sessions", gooseDB))
	}
	copyTree(t, "testdata/goose/sessions", filepath.Join(root, "sessions"))
	return root
}

// gooseMessages counts the messages a conversion of a Goose session must
// give: each message the agent saw with text or thinking (an
// assistant's) or a tool request, and each tool response.
func gooseMessages(t *testing.T, s Session) int {
	t.Helper()
	n := 0
	count := func(role string, content jsonx.Value) {
		counted := false
		for _, c := range content.Items() {
			typ, _ := c.Get("type").Text()
			switch {
			case typ == "toolResponse":
				n++
			case !counted && (typ == "text" || (role == "assistant" && (typ == "thinking" || typ == "toolRequest"))):
				n++
				counted = true
			}
		}
	}
	if strings.HasSuffix(s.Path, ".jsonl") {
		eachRecord(s.Path, func(r record) error {
			role, _ := r.v.Get("role").Text()
			count(role, r.v.Get("content"))
			return nil
		})
		return n
	}
	_, db, id, _ := SplitContained(s.Path)
	withGoose(db, func(c *sqlite3.Conn) error {
		st, _, _ := c.Prepare(`SELECT role, content_json, coalesce(metadata_json, '') FROM messages WHERE session_id = ?`)
		defer st.Close()
		st.BindText(1, id)
		for st.Step() {
			content, err := jsonx.Parse([]byte(st.ColumnText(1)))
			if md, _ := jsonx.Parse([]byte(st.ColumnText(2))); err != nil || (md.Get("agentVisible").Kind() == jsonx.Bool && !md.Get("agentVisible").Truthy()) {
				continue
			}
			count(st.ColumnText(0), content)
		}
		return nil
	})
	return n
}

// TestGooseList: the real database's one session lists with its name,
// working directory and times, the JSONL session beside it too (its torn
// last line no matter); nothing in the directory changes.
func TestGooseList(t *testing.T) {
	root := gooseRoot(t, false)
	before := treeBytes(t, root)
	src, _ := NewSource(HarnessGoose, root)
	list, err := src.List(true)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range list {
		if s.Err != nil || s.Created.IsZero() {
			t.Errorf("%+v", s)
		}
		if at, err := src.At(s.Path); err != nil || at.ID != s.ID {
			t.Errorf("At(%s) = %+v, %v", s.Path, at, err)
		}
		got = append(got, fmt.Sprintf("%s %s %s %q", s.ID, s.Title, s.Cwd, s.FirstMessage))
	}
	want := []string{`20251203_7 Rename the config loader /work/hand-goose "rename loadConfig to readConfig"`,
		`20250101_3 An older JSONL session /work/old-goose "hello goose"`}
	if hasReal(t, "the real Goose database") {
		want[0] = `20251202_1 CLI Session /Users/jpresley/workspace/tmp/vsl ""`
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
	if after := treeBytes(t, root); !maps2Equal(before, after) {
		t.Error("listing changed Goose's directory")
	}
}

// TestGooseConvert: the hand-made database's session converts as Goose's
// source says its messages read; the JSONL one too.
func TestGooseConvert(t *testing.T) {
	root := gooseRoot(t, true)
	src, _ := NewSource(HarnessGoose, root)
	list, _ := src.List(true)
	for _, tc := range []struct {
		id   string
		want []string
	}{
		{"20251203_7", []string{"user text", "assistant thinking,text,toolCall", "toolResult false cfg.go:3", "assistant toolCall",
			"toolResult true no such tool", "assistant toolCall", "toolResult false edited", "assistant text"}},
		{"20250101_3", []string{"user text", "assistant text"}},
	} {
		s := list[slices.IndexFunc(list, func(s Session) bool { return s.ID == tc.id })]
		c, err := convertAll(src.Stream(s, ForResume))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range c.Entries {
			v, _ := jsonx.Parse(e)
			m := v.Get("message")
			role, _ := m.Get("role").Text()
			if role == "toolResult" {
				out, _ := m.Get("content").Items()[0].Get("text").Text()
				got = append(got, fmt.Sprintf("toolResult %v %s", m.Get("isError").Truthy(), out))
				continue
			}
			var parts []string
			for _, b := range m.Get("content").Items() {
				typ, _ := b.Get("type").Text()
				parts = append(parts, typ)
			}
			got = append(got, role+" "+strings.Join(parts, ","))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.id, got, tc.want)
		}
		if n := gooseMessages(t, s); n != len(got) {
			t.Errorf("%s: gooseMessages counts %d, want %d", tc.id, n, len(got))
		}
	}
	u, err := src.Usage(list[slices.IndexFunc(list, func(s Session) bool { return s.ID == "20251203_7" })])
	if err != nil || len(u.Calls) != 1 || u.Calls[0].Tokens.Input != 1800 || u.Calls[0].Tokens.Output != 300 || u.Calls[0].HasCost {
		t.Errorf("usage %+v, %v: want one unpriced call of the accumulated 1800 in, 300 out", u.Calls, err)
	}
}

// FuzzGoose: any content of a message converts without a panic or an
// entry that is not JSON.
func FuzzGoose(f *testing.F) {
	f.Add(`[{"type":"toolRequest","toolCall":{"value":3}},{"type":"toolResponse","toolResult":{"value":{"content":"x"}}}]`, "assistant")
	f.Add(`[{"type":"text"},{"type":"thinking","thinking":7}]`, "user")
	db := filepath.Join(f.TempDir(), "sessions", gooseDB)
	makeSQLite(f, "testdata/goose/hand.sql", db)
	path := containedPath(db, "20251203_7")
	f.Fuzz(func(t *testing.T, content, role string) {
		c, err := sqlite3.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		st, _, _ := c.Prepare(`INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES ('20251203_7', ?, ?, 1)`)
		st.BindText(1, role)
		st.BindText(2, content)
		st.Exec()
		st.Close()
		c.Close()
		checkConversion(t, StreamGoose(path, ForReading, func(*Converted) error { return nil }, validEntry(t)))
		jsonl := filepath.Join(t.TempDir(), "x.jsonl")
		os.WriteFile(jsonl, []byte(`{"working_dir":"/w"}`+"\n"+`{"role":"`+role+`","content":`+content+"}\n"), 0o600)
		checkConversion(t, StreamGoose(jsonl, ForReading, func(*Converted) error { return nil }, validEntry(t)))
	})
}
