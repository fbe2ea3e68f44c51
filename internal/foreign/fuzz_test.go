package foreign

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/jsonx"
)

// FuzzClaude: any file converts or fails with an error, never a panic,
// and every entry converted is JSON that reads back.
func FuzzClaude(f *testing.F) {
	if data, err := os.ReadFile("testdata/claude/handmade.jsonl"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"type":"user","uuid":"a","message":{"content":[{"type":"tool_result","tool_use_id":"x","content":[{"type":"image","source":{}}]}]}}`))
	f.Add([]byte(`{"type":"assistant","uuid":"a","parentUuid":"a","timestamp":1e300,"message":{"content":[{"type":"tool_use","id":"i","name":"n","input":[]}]}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "s.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		// Each line converted alone (a search hit's snippet) is JSON too.
		checkLineEntries(t, claudeSource{}, data)
		// The first pass that reads the links only converts as the one
		// that decodes every record.
		var got, want strings.Builder
		collect := func(b *strings.Builder) (func(*Converted) error, func(string, []byte) error) {
			return func(c *Converted) error { fmt.Fprintf(b, "%+v\n", *c); return nil },
				func(id string, e []byte) error { fmt.Fprintf(b, "%s %s\n", id, e); return nil }
		}
		gb, ge := collect(&got)
		wb, we := collect(&want)
		gerr := streamClaude(path, "/p", ForReading, eachClaudeLinks, gb, ge)
		werr := streamClaude(path, "/p", ForReading, eachRecord, wb, we)
		if got.String() != want.String() || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("links only:\n%s%v\nevery record:\n%s%v", got.String(), gerr, want.String(), werr)
		}
		c, err := ConvertClaude(path, "/p")
		if err != nil {
			return
		}
		for i, e := range c.Entries {
			if !jsonx.Valid(e) {
				t.Fatalf("entry %d is not JSON: %s", i, e)
			}
		}
	})
}

// FuzzCodex: any rollout lists and converts or fails with an error, never
// a panic, and every entry converted is JSON that reads back.
func FuzzCodex(f *testing.F) {
	for _, name := range []string{"handmade.jsonl", "fork.jsonl", "archived.jsonl"} {
		if data, err := os.ReadFile("testdata/codex/" + name); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"type":"event_msg","timestamp":1e300,"payload":{"type":"thread_name_updated","thread_name":"x"}}`))
	f.Add([]byte(`{"type":"session_meta","payload":{"cwd":"/","timestamp":"x"}}` + "\n" +
		`{"type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":1e308}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "rollout-x.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		checkLineEntries(t, codexSource{}, data)
		s, err := CodexSessionAt(dir, path)
		if err != nil {
			t.Fatal(err)
		}
		c, err := ConvertCodex(path, s.CodexInfo)
		if err != nil {
			return
		}
		for i, e := range c.Entries {
			if !jsonx.Valid(e) {
				t.Fatalf("entry %d is not JSON: %s", i, e)
			}
		}
	})
}

// checkLineEntries converts each line of data alone: never a panic, and
// every entry is JSON.
func checkLineEntries(t *testing.T, lc lineConverter, data []byte) {
	t.Helper()
	for line := range bytes.Lines(data) {
		for i, e := range lc.lineEntries(bytes.TrimSuffix(line, []byte("\n"))) {
			if !jsonx.Valid(e) {
				t.Fatalf("entry %d of the line alone is not JSON: %s", i, e)
			}
		}
	}
}
