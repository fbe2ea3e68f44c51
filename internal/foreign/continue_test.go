package foreign

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/realfixtures"
)

var realContinue = realfixtures.Join("continue")

// continueRoot is a Continue dir of the real sessions and a hand-made
// one, from reading Continue's Session type (continue.go): context items,
// a thinking message and an item's reasoning, tool calls and results (one
// failed, one with arguments that are not JSON), usage with cache reads
// and writes, a system message; its index names a session whose file is
// gone.
func continueRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".continue")
	if hasReal(t, "the real Continue sessions") {
		copyTree(t, realContinue, root)
	}
	dir := filepath.Join(root, "sessions")
	os.MkdirAll(dir, 0o700)
	for name, to := range map[string]string{"handmade.json": "c0471a0e-hand-4000-8000-000000000001.json", "sessions.json": "sessions.json"} {
		b, err := os.ReadFile("testdata/continue/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if name == "sessions.json" {
			if real, err := os.ReadFile(filepath.Join(dir, "sessions.json")); err == nil {
				// The real index and the hand-made one's entries.
				b = append(append(real[:strings.LastIndexByte(string(real), ']')], ','), b[1:]...)
			}
		}
		os.WriteFile(filepath.Join(dir, to), b, 0o600)
	}
	return root
}

// continueMessages counts the messages a conversion of a Continue
// session gives: each user message with text or a context item, each
// assistant message with text, tool calls or thinking before it, each
// tool message.
func continueMessages(t *testing.T, path string) int {
	t.Helper()
	doc, _, err := readContinue(path)
	if err != nil {
		t.Fatal(err)
	}
	n, thinking := 0, false
	for _, item := range doc.Get("history").Items() {
		m := item.Get("message")
		thinking = thinking || item.Get("reasoning").Get("text").Truthy()
		switch role, _ := m.Get("role").Text(); role {
		case "user":
			if continueText(m.Get("content")) != "" || len(item.Get("contextItems").Items()) > 0 {
				n++
			}
		case "thinking":
			thinking = true
		case "assistant":
			if thinking || continueText(m.Get("content")) != "" || len(m.Get("toolCalls").Items()) > 0 {
				n++
				thinking = false
			}
		case "tool":
			n++
		}
	}
	if thinking {
		n++
	}
	return n
}

// TestContinueList: every session lists from the index and its head
// (title, project, creation, first message); the index's entry whose
// file is gone lists nothing; a JSON file that is no session is a row
// with its error; listing changes no byte.
func TestContinueList(t *testing.T) {
	root := continueRoot(t)
	os.WriteFile(filepath.Join(root, "sessions", "notes.json"), []byte(`["not a session"]`), 0o600)
	before := treeBytes(t, root)
	src, _ := NewSource(HarnessContinue, root)
	list, err := src.List(true)
	if err != nil {
		t.Fatal(err)
	}
	want := 2 // the hand-made session and the file that is none
	if _, ok := realfixtures.Find(); ok {
		want += 7
	}
	if len(list) != want {
		t.Errorf("%d sessions, want %d", len(list), want)
	}
	for _, s := range list {
		if strings.HasSuffix(s.Path, "notes.json") {
			if s.Err == nil {
				t.Errorf("notes.json lists as a session: %+v", s)
			}
			continue
		}
		if s.Err != nil || s.ID == "" || s.Title == "" || s.Created.IsZero() || s.FirstMessage == "" {
			t.Errorf("%+v", s)
		}
		if h, err := Detect(s.Path); err != nil || h != HarnessContinue {
			t.Errorf("Detect(%s) = %q, %v", s.Path, h, err)
		}
		if strings.Contains(s.Path, "hand") && (s.Cwd != "/work/hand-continue" || s.Created.UnixMilli() != 1790000000000 || s.FirstMessage != "why does the test fail?") {
			t.Errorf("hand-made: %+v", s)
		}
	}
	if after := treeBytes(t, root); !maps2Equal(before, after) {
		t.Error("listing changed the Continue dir")
	}
}

// TestContinueConvert: the hand-made session's history in order,
// context items as the user's text blocks, thinking on the answer after
// it, calls paired with their results (a failed one an error, arguments
// that are not JSON kept as text), the system message left out.
func TestContinueConvert(t *testing.T) {
	root := continueRoot(t)
	src, _ := NewSource(HarnessContinue, root)
	s, err := src.At(filepath.Join(root, "sessions", "c0471a0e-hand-4000-8000-000000000001.json"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := convertAll(src.Stream(s, ForResume))
	if err != nil {
		t.Fatal(err)
	}
	if c.Title != "Fix the failing test" || c.Cwd != "/work/hand-continue" || c.Started.UnixMilli() != 1790000000000 {
		t.Errorf("meta: %q %q %v", c.Title, c.Cwd, c.Started)
	}
	var got []string
	for _, e := range c.Entries {
		v, _ := jsonx.Parse(e)
		m := v.Get("message")
		switch {
		case v.Get("type").Is("model_change"):
			model, _ := v.Get("model").Text()
			got = append(got, "model "+model)
		case m.Get("role").Is("toolResult"):
			text, _ := m.Get("content").Items()[0].Get("text").Text()
			got = append(got, fmt.Sprintf("result %q error %v", text, m.Get("isError").Truthy()))
		default:
			role, _ := m.Get("role").Text()
			var parts []string
			for _, b := range m.Get("content").Items() {
				typ, _ := b.Get("type").Text()
				parts = append(parts, typ)
			}
			got = append(got, role+" "+strings.Join(parts, ","))
		}
	}
	want := []string{"user text,text", "model anthropic/Claude Sonnet 4.5", "assistant thinking,text,toolCall",
		`result "func TestX(t *testing.T) { t.Fatal(\"boom\") }" error false`, "assistant text,toolCall",
		`result "command not allowed" error true`, "assistant thinking,text"}
	if !slices.Equal(got, want) {
		t.Errorf("entries:\n got %q\nwant %q", got, want)
	}
	if n := continueMessages(t, s.Path); n != 6 {
		t.Errorf("continueMessages counts %d, want 6", n)
	}
}

// TestContinueUsage: each assistant message that records its usage is a
// call (the cache reads and writes out of the input), its model the
// prompt log's; one that records none is no call.
func TestContinueUsage(t *testing.T) {
	root := continueRoot(t)
	src, _ := NewSource(HarnessContinue, root)
	s, err := src.At(filepath.Join(root, "sessions", "c0471a0e-hand-4000-8000-000000000001.json"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := src.Usage(s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range u.Calls {
		got = append(got, fmt.Sprintf("%s in %g cr %g cw %g out %g", c.Model.ID(), c.Tokens.Input, c.Tokens.CacheRead, c.Tokens.CacheWrite, c.Tokens.Output))
	}
	want := []string{"Claude Sonnet 4.5 in 100 cr 1000 cw 100 out 80", "Claude Sonnet 4.5 in 1500 cr 0 cw 0 out 20"}
	if !slices.Equal(got, want) {
		t.Errorf("calls:\n got %q\nwant %q", got, want)
	}
}

// FuzzContinue: any document lists and converts or fails with an error,
// never a panic, and every entry is JSON.
func FuzzContinue(f *testing.F) {
	if data, err := os.ReadFile("testdata/continue/handmade.json"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"history":[{"message":{"role":"assistant","toolCalls":[{"function":{"arguments":"[1"}}]}},{"message":{"role":"tool"}}]}`))
	f.Add([]byte(`{"sessionId":"x","history":[{"reasoning":{"text":"t"}}]}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "x.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		continueAt(path, nil)
		checkConversion(t, StreamContinue(path, Time(1), ForReading, func(*Converted) error { return nil }, validEntry(t)))
		(continueSource{dir}).Usage(Session{Path: path})
	})
}
