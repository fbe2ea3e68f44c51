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

var realQwen = realfixtures.Join("qwen")

// qwenRoot is a Qwen Code dir of the real chat and a hand-made one, from
// reading Qwen's ChatRecord (qwen.go): thoughts, function calls and
// responses, a failed call, ui_telemetry, a subagent's record, a branch
// left by a rewind, a title and a torn last line.
func qwenRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".qwen")
	if hasReal(t, "the real Qwen Code chat") {
		copyTree(t, realQwen, root)
	}
	chats := filepath.Join(root, "projects", "-work-hand-qwen", "chats")
	os.MkdirAll(chats, 0o700)
	b, err := os.ReadFile("testdata/qwen/handmade.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(chats, "5e55a0de-hand-4000-8000-000000000001.jsonl"), b, 0o600)
	return root
}

// qwenMessages counts the messages of a chat's branch as Qwen resumes it:
// from the last user, assistant or tool_result record back through
// parentUuid, each user text, assistant record with a part, and
// functionResponse.
func qwenMessages(t *testing.T, path string) int {
	t.Helper()
	byID := map[string]jsonx.Value{}
	leaf := ""
	eachRecord(path, func(r record) error {
		id, _ := r.v.Get("uuid").Text()
		if r.v.Get("isSidechain").Truthy() {
			return nil
		}
		byID[id] = r.v
		if typ, _ := r.v.Get("type").Text(); typ != "system" {
			leaf = id
		}
		return nil
	})
	n := 0
	for id := leaf; id != ""; {
		v := byID[id]
		for _, p := range v.Get("message").Get("parts").Items() {
			switch {
			case p.Get("functionResponse").Defined():
				n++
			case v.Get("type").Is("user") && p.Get("text").Defined():
				n++
			}
		}
		if v.Get("type").Is("assistant") && len(v.Get("message").Get("parts").Items()) > 0 {
			n++
		}
		id, _ = v.Get("parentUuid").Text()
	}
	return n
}

// TestQwenList: the real and the hand-made chat list from their head and
// tail, with id, cwd, start, first message and the last title; listing
// changes no byte.
func TestQwenList(t *testing.T) {
	root := qwenRoot(t)
	before := treeBytes(t, root)
	src, _ := NewSource(HarnessQwen, root)
	list, err := src.List(true)
	if err != nil {
		t.Fatal(err)
	}
	var hand *Session
	for k, s := range list {
		if s.Err != nil || s.ID == "" || s.Cwd == "" || s.Created.IsZero() || s.FirstMessage == "" {
			t.Errorf("%+v", s)
		}
		if h, err := Detect(s.Path); err != nil || h != HarnessQwen {
			t.Errorf("Detect(%s) = %q, %v", s.Path, h, err)
		}
		if strings.Contains(s.Path, "hand") {
			hand = &list[k]
		}
	}
	if hand == nil || hand.Title != "List and read the files" || hand.FirstMessage != "list the files, please" || hand.Cwd != "/work/hand-qwen" {
		t.Errorf("hand-made chat: %+v", hand)
	}
	if after := treeBytes(t, root); !maps2Equal(before, after) {
		t.Error("listing changed the Qwen dir")
	}
}

// TestQwenConvert: the hand-made chat converts to the branch Qwen resumes
// (the rewound turn and the subagent's record left out), thoughts as
// thinking, calls paired with their results, a failed call an error, a
// model change where the model changes, the title the user's.
func TestQwenConvert(t *testing.T) {
	root := qwenRoot(t)
	path := filepath.Join(root, "projects", "-work-hand-qwen", "chats", "5e55a0de-hand-4000-8000-000000000001.jsonl")
	src, _ := NewSource(HarnessQwen, root)
	s, err := src.At(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := convertAll(src.Stream(s, ForResume))
	if err != nil {
		t.Fatal(err)
	}
	if c.Title != "List and read the files" || c.TitleSource != "user" || c.Cwd != "/work/hand-qwen" || c.Skipped != 1 {
		t.Errorf("meta: title %q (%s), cwd %q, skipped %d", c.Title, c.TitleSource, c.Cwd, c.Skipped)
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
			got = append(got, "result "+text+map[bool]string{true: " (error)"}[m.Get("isError").Truthy()])
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
	want := []string{"user text", "model qwen/qwen3-coder-plus", "assistant thinking,text,toolCall", "result README.md\nmain.go",
		"assistant text", "user text", "model qwen/qwen3-max", "assistant toolCall", "result permission denied (error)"}
	if !slices.Equal(got, want) {
		t.Errorf("entries:\n got %q\nwant %q", got, want)
	}
	if n := qwenMessages(t, path); n != 7 {
		t.Errorf("qwenMessages counts %d, want 7", n)
	}
}

// FuzzQwen: any chat lists and converts or fails with an error, never a
// panic, and every entry is JSON.
func FuzzQwen(f *testing.F) {
	if data, err := os.ReadFile("testdata/qwen/handmade.jsonl"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"uuid":"a","parentUuid":"a","sessionId":"s","type":"user","message":{"parts":[{"functionResponse":7}]}}`))
	f.Add([]byte(`{"uuid":"a","parentUuid":"b","sessionId":"s","type":"assistant"}` + "\n" + `{"uuid":"b","parentUuid":"a","sessionId":"s","type":"tool_result"}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "x.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		qwenAt(path)
		checkConversion(t, StreamQwen(path, ForReading, func(*Converted) error { return nil }, validEntry(t)))
	})
}

// TestQwenUsage: every assistant record's usageMetadata is one call (the
// rewound turn's and the subagent's too: they were made), input without
// the cached tokens, thoughts as output; no cost recorded, so none is
// claimed.
func TestQwenUsage(t *testing.T) {
	root := qwenRoot(t)
	src, _ := NewSource(HarnessQwen, root)
	s, err := src.At(filepath.Join(root, "projects", "-work-hand-qwen", "chats", "5e55a0de-hand-4000-8000-000000000001.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := src.Usage(s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range u.Calls {
		got = append(got, fmt.Sprintf("%s in %g out %g cache %g total %g cost %v", c.Model.ID(), c.Tokens.Input, c.Tokens.Output, c.Tokens.CacheRead, c.Total, c.HasCost))
	}
	want := []string{
		"qwen3-coder-plus in 60 out 20 cache 40 total 120 cost false",
		"qwen3-coder-plus in 50 out 5 cache 0 total 55 cost false",
		"qwen3-coder-plus in 40 out 10 cache 100 total 150 cost false",
		"qwen3-coder-plus in 160 out 3 cache 0 total 163 cost false",
		"qwen3-max in 170 out 8 cache 0 total 178 cost false",
	}
	if !slices.Equal(got, want) || u.Skipped != 1 {
		t.Errorf("calls (skipped %d):\n got %q\nwant %q", u.Skipped, got, want)
	}
}
