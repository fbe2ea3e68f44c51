package foreign

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/realfixtures"
)

var realKimi = realfixtures.Join("kimi")

// kimiHand is the hand-made Kimi session's directory under a root.
const kimiHand = "sessions/a0af8d5f998eba3722885fa3d22e5a3d/4b1a0000-hand-4000-8000-000000000001"

// kimiRoot is a Kimi share dir of the real sessions and a hand-made one,
// from reading Kimi CLI's context and wire formats (kimi.go): thinking,
// tool calls (one of arguments that are not JSON, one whose result is an
// error), two turns timed by wire.jsonl, a subagent's context and its
// calls wrapped in SubagentEvent, a torn last line; kimi.json names both
// work dirs.
func kimiRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".kimi")
	var works []any
	if hasReal(t, "the real Kimi CLI sessions") {
		copyTree(t, realKimi, root)
		var doc struct {
			WorkDirs []any `json:"work_dirs"`
		}
		b, _ := os.ReadFile(filepath.Join(realKimi, "kimi.json"))
		json.Unmarshal(b, &doc)
		works = doc.WorkDirs
	}
	copyTree(t, "testdata/kimi", root)
	works = append(works, map[string]any{"path": "/work/hand-kimi", "kaos": "local"})
	b, _ := json.Marshal(map[string]any{"work_dirs": works})
	os.WriteFile(filepath.Join(root, "kimi.json"), b, 0o600)
	return root
}

// kimiMessages counts the messages a conversion of a Kimi context gives:
// each user message with text, assistant message with a think or text
// part or a tool call, tool message.
func kimiMessages(t *testing.T, path string) int {
	t.Helper()
	n := 0
	eachRecord(path, func(r record) error {
		switch role, _ := r.v.Get("role").Text(); role {
		case "user":
			if kimiText(r.v.Get("content"), "text") != "" {
				n++
			}
		case "assistant":
			if kimiText(r.v.Get("content"), "think")+kimiText(r.v.Get("content"), "text") != "" || len(r.v.Get("tool_calls").Items()) > 0 {
				n++
			}
		case "tool":
			n++
		}
		return nil
	})
	return n
}

// TestKimiList: every session and (with subagents) every subagent's
// context lists with its id, work dir (kimi.json's md5), first message
// and start (wire.jsonl's first turn); listing changes no byte.
func TestKimiList(t *testing.T) {
	root := kimiRoot(t)
	before := treeBytes(t, root)
	src, _ := NewSource(HarnessKimi, root)
	main, _ := src.List(false)
	all, err := src.List(true)
	if err != nil {
		t.Fatal(err)
	}
	wantMain, wantAll := 1, 2
	if _, ok := realfixtures.Find(); ok {
		wantMain, wantAll = 6, 16
	}
	if len(main) != wantMain || len(all) != wantAll {
		t.Errorf("%d sessions, %d with subagents; want %d, %d", len(main), len(all), wantMain, wantAll)
	}
	for _, s := range all {
		if s.Err != nil || s.ID == "" || s.Cwd == "" || s.Created.IsZero() || s.FirstMessage == "" || s.Subagent != (s.ParentSession != "") {
			t.Errorf("%+v", s)
		}
		if h, err := Detect(s.Path); err != nil || h != HarnessKimi {
			t.Errorf("Detect(%s) = %q, %v", s.Path, h, err)
		}
		if strings.Contains(s.Path, "hand") && !s.Subagent && (s.Cwd != "/work/hand-kimi" || s.Created.UnixMilli() != 1790000000500 || s.FirstMessage != "list the files") {
			t.Errorf("hand-made: %+v", s)
		}
	}
	if after := treeBytes(t, root); !maps2Equal(before, after) {
		t.Error("listing changed the Kimi dir")
	}
}

// TestKimiConvert: the hand-made context in order, thinking and text and
// calls on an assistant message, results paired by id (an ERROR one an
// error, arguments that are not JSON kept as text), each user message
// at its turn's time, bookkeeping lines left out, the torn line counted.
func TestKimiConvert(t *testing.T) {
	root := kimiRoot(t)
	src, _ := NewSource(HarnessKimi, root)
	s, err := src.At(filepath.Join(root, kimiHand, kimiContext))
	if err != nil {
		t.Fatal(err)
	}
	c, err := convertAll(src.Stream(s, ForResume))
	if err != nil {
		t.Fatal(err)
	}
	if c.Cwd != "/work/hand-kimi" || c.Skipped != 1 || c.Started.UnixMilli() != 1790000000500 {
		t.Errorf("meta: cwd %q skipped %d started %v", c.Cwd, c.Skipped, c.Started)
	}
	var got []string
	for _, e := range c.Entries {
		v, _ := jsonx.Parse(e)
		m := v.Get("message")
		ts, _ := m.Get("timestamp").Float()
		role, _ := m.Get("role").Text()
		var parts []string
		for _, b := range m.Get("content").Items() {
			typ, _ := b.Get("type").Text()
			parts = append(parts, typ)
		}
		line := fmt.Sprintf("%s %s %d", role, strings.Join(parts, ","), int64(ts))
		if role == "toolResult" {
			line += fmt.Sprintf(" error %v", m.Get("isError").Truthy())
		}
		got = append(got, line)
	}
	want := []string{"user text 1790000000500", "assistant thinking,text,toolCall 1790000000500", "toolResult text 1790000000500 error false",
		"assistant text,toolCall 1790000000500", "toolResult text 1790000000500 error true", "assistant text 1790000000500",
		"user text 1790000100000", "assistant text 1790000100000"}
	if !slices.Equal(got, want) {
		t.Errorf("entries:\n got %q\nwant %q", got, want)
	}
	if n := kimiMessages(t, s.Path); n != len(want) {
		t.Errorf("kimiMessages counts %d, want %d", n, len(want))
	}
}

// TestKimiUsage: each StatusUpdate of wire.jsonl is a call, a subagent's
// (in SubagentEvent) in its parent session's; the subagent's own context
// has none, so nothing counts twice.
func TestKimiUsage(t *testing.T) {
	root := kimiRoot(t)
	src, _ := NewSource(HarnessKimi, root)
	var got []string
	for _, name := range []string{kimiContext, "context_sub_1.jsonl"} {
		s, err := src.At(filepath.Join(root, kimiHand, name))
		if err != nil {
			t.Fatal(err)
		}
		u, err := src.Usage(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range u.Calls {
			got = append(got, fmt.Sprintf("%s in %g out %g cr %g cw %g", name, c.Tokens.Input, c.Tokens.Output, c.Tokens.CacheRead, c.Tokens.CacheWrite))
		}
	}
	want := []string{"context.jsonl in 400 out 30 cr 500 cw 0", "context.jsonl in 50 out 5 cr 0 cw 10", "context.jsonl in 20 out 4 cr 900 cw 0"}
	if !slices.Equal(got, want) {
		t.Errorf("calls:\n got %q\nwant %q", got, want)
	}
}

// FuzzKimi: any context lists and converts or fails with an error, never
// a panic, and every entry is JSON.
func FuzzKimi(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata/kimi", kimiHand, kimiContext)); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"role":"assistant","tool_calls":[{"function":{"arguments":7}}],"content":"x"}` + "\n" + `{"role":"tool","content":[{"type":"text"}]}`))
	dir := filepath.Join(f.TempDir(), "s")
	os.MkdirAll(dir, 0o700)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, kimiContext)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, kimiWire), data, 0o600)
		kimiAt(path, nil)
		checkConversion(t, StreamKimi(path, "/w", ForReading, func(*Converted) error { return nil }, validEntry(t)))
		(kimiSource{dir}).Usage(Session{Path: path})
	})
}
