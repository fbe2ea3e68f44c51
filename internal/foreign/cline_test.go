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

var realCline = realfixtures.Join("cline")

// clineHand is the hand-made task under a root.
const clineHand = "tasks/1790000000000"

// clineRoot is a Cline storage of the real tasks (one with its
// conversation, two of their chat alone) and a hand-made one, from
// reading Cline's task files (cline.go): thinking, a tool's result as
// Cline writes it (text) and as a tool_result block (an error), two
// models, a user message of a string, chat times and api requests (one
// cancelled).
func clineRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "saoudrizwan.claude-dev")
	if hasReal(t, "the real Cline tasks") {
		copyTree(t, realCline, root)
	}
	copyTree(t, "testdata/cline", root)
	return root
}

// clineMessages counts the messages a conversion of a Cline task gives:
// from its conversation, each assistant message with a block, each call
// answered (by a tool_result block, or the next user message's text in
// turn), each user message with text left; from its chat alone, each
// task, feedback, text, completion and tool or command request.
func clineMessages(t *testing.T, path string) int {
	t.Helper()
	v, _, err := readClineArray(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if filepath.Base(path) == clineUI {
		for _, m := range v.Items() {
			say, _ := m.Get("say").Text()
			text, _ := m.Get("text").Text()
			if !m.Get("partial").Truthy() && text != "" && slices.Contains([]string{"text", "user_feedback", "completion_result", "tool", "command"}, say) {
				n++
			}
		}
		return n
	}
	calls := 0
	for _, m := range v.Items() {
		blocks := m.Get("content").Items()
		if s, ok := m.Get("content").Text(); ok {
			if s != "" {
				n++
			}
			calls = 0
			continue
		}
		if m.Get("role").Is("assistant") {
			calls = 0
			if len(blocks) > 0 {
				n++
			}
			for _, b := range blocks {
				if b.Get("type").Is("tool_use") {
					calls++
				}
			}
			continue
		}
		text := false
		for _, b := range blocks {
			switch {
			case b.Get("type").Is("tool_result"):
				n++
			case calls > 0 && b.Get("text").Defined():
				n++
				calls--
			case b.Get("text").Truthy():
				text = true
			}
		}
		if text {
			n++
		}
		calls = 0
	}
	return n
}

// TestClineList: every task lists from its name (its start), its chat's
// head (the task, the working directory) and its files' times; a task of
// its chat alone lists by it; listing changes no byte.
func TestClineList(t *testing.T) {
	root := clineRoot(t)
	before := treeBytes(t, root)
	src, _ := NewSource(HarnessCline, root)
	list, err := src.List(true)
	if err != nil {
		t.Fatal(err)
	}
	want := 1
	if _, ok := realfixtures.Find(); ok {
		want = 4
	}
	if len(list) != want {
		t.Errorf("%d tasks, want %d", len(list), want)
	}
	for _, s := range list {
		if s.Err != nil || s.ID == "" || s.Cwd == "" || s.Created.IsZero() || s.FirstMessage == "" {
			t.Errorf("%+v", s)
		}
		if h, err := Detect(s.Path); err != nil || h != HarnessCline {
			t.Errorf("Detect(%s) = %q, %v", s.Path, h, err)
		}
		if s.ID == "1790000000000" && (s.Cwd != "/work/hand-cline" || s.FirstMessage != "fix the build" || s.Created.UnixMilli() != 1790000000000) {
			t.Errorf("hand-made: %+v", s)
		}
	}
	if after := treeBytes(t, root); !maps2Equal(before, after) {
		t.Error("listing changed the Cline storage")
	}
}

// TestClineConvert: the hand-made task's conversation: a call's result
// as Cline writes it (the next user message's first text) and as a
// tool_result block (an error), the rest of that message the user's, a
// model change where the model changes, a string content; and its chat
// alone, as a task of ui_messages.json only is read.
func TestClineConvert(t *testing.T) {
	root := clineRoot(t)
	src, _ := NewSource(HarnessCline, root)
	for _, tc := range []struct {
		file string
		want []string
	}{
		{clineAPI, []string{"user text,text", "model anthropic/claude-sonnet-4-5-20250929", "assistant thinking,text,toolCall",
			"toolResult read_file error false", "user text", "assistant toolCall", "toolResult execute_command error true",
			"model openai/gpt-5", "assistant text", "user text"}},
		{clineUI, []string{"user text", "assistant thinking,text", "assistant text", "assistant text", "user text"}},
	} {
		path := filepath.Join(root, clineHand, tc.file)
		s, err := src.At(path)
		if err != nil {
			t.Fatal(err)
		}
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
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.file, got, tc.want)
		}
		messages := 0
		for _, g := range got {
			if !strings.HasPrefix(g, "model ") {
				messages++
			}
		}
		if n := clineMessages(t, path); n != messages {
			t.Errorf("%s: clineMessages counts %d, want %d", tc.file, n, messages)
		}
	}
}

// TestClineUsage: each answered api request of the chat is a call with
// Cline's own cost, its model the chat's last; a cancelled one is none.
func TestClineUsage(t *testing.T) {
	root := clineRoot(t)
	src, _ := NewSource(HarnessCline, root)
	s, err := src.At(filepath.Join(root, clineHand, clineAPI))
	if err != nil {
		t.Fatal(err)
	}
	u, err := src.Usage(s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range u.Calls {
		got = append(got, fmt.Sprintf("%s in %g out %g cr %g cw %g $%g %v", c.Model.ID(), c.Tokens.Input, c.Tokens.Output, c.Tokens.CacheRead, c.Tokens.CacheWrite, c.Cost, c.HasCost))
	}
	want := []string{"claude-sonnet-4-5-20250929 in 10 out 50 cr 0 cw 900 $0.01 true", "claude-sonnet-4-5-20250929 in 5 out 20 cr 900 cw 0 $0.002 true"}
	if !slices.Equal(got, want) {
		t.Errorf("calls:\n got %q\nwant %q", got, want)
	}
}

// FuzzCline: any task file lists and converts or fails with an error,
// never a panic, and every entry is JSON.
func FuzzCline(f *testing.F) {
	for _, name := range []string{clineAPI, clineUI} {
		if data, err := os.ReadFile(filepath.Join("testdata/cline", clineHand, name)); err == nil {
			f.Add(data, name == clineUI)
		}
	}
	f.Add([]byte(`[{"role":"assistant","content":[{"type":"tool_use"}]},{"role":"user","content":[{"type":"text"}]}]`), false)
	f.Add([]byte(`[{"say":"api_req_started","text":"{\"cost\":-1}"},{"say":"reasoning","text":"x"}]`), true)
	dir := filepath.Join(f.TempDir(), "tasks", "1")
	os.MkdirAll(dir, 0o700)
	f.Fuzz(func(t *testing.T, data []byte, ui bool) {
		name := clineAPI
		if ui {
			name = clineUI
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		clineAt(path)
		checkConversion(t, StreamCline(path, ForReading, func(*Converted) error { return nil }, validEntry(t)))
		(clineSource{dir}).Usage(Session{Path: path})
	})
}
