package session

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/testscale"

	"github.com/xdev/xdev/internal/ai"
)

// uncompacted writes a session of n turns and no compaction: user text,
// an assistant turn with thinking and a tool call, its result; now and
// then an aborted turn or a tool call never answered.
func uncompacted(t *testing.T, n int) string {
	t.Helper()
	s, path := newSession(t)
	text := strings.Repeat("some words of a long conversation ", 40)
	for i := range n {
		s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent(fmt.Sprintf("turn %d: %s", i, text)), Timestamp: int64(i)})
		call := fmt.Sprintf("call_%d", i)
		stop := ai.StopToolUse
		if i%37 == 5 {
			stop = ai.StopAborted
		}
		s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.BlockContent(
			ai.Block{Type: ai.BlockThinking, Thinking: "thinking about " + text, ThinkingSignature: "sig"},
			ai.Block{Type: ai.BlockText, Text: text},
			ai.Block{Type: ai.BlockToolCall, ID: call, Name: "bash", Arguments: []byte(`{"command":"ls -la"}`)},
		), Provider: "anthropic", Model: "m", StopReason: stop, Timestamp: int64(i),
			Usage: &ai.Usage{Input: int64(i), Output: 10, TotalTokens: int64(i) + 10}})
		if i%29 != 3 {
			s.AppendMessage(ai.Message{Role: ai.RoleToolResult, ToolCallID: call, ToolName: "bash",
				Content: ai.TextContent("output " + text), Timestamp: int64(i)})
		}
	}
	s.Close()
	return path
}

// TestContextStreamEqualsBuild: a context read a message at a time from
// the file (ReadContext past its window bound) is BuildContext's, message
// for message, with the same leaf, models, thinking level, missing blobs
// and token estimate: on every golden, omp's samples, 1,500 files of the
// differential tester's generator (every entry kind, malformed lines,
// v1/v2, blobs, compactions, resets, notebooks) and uncompacted corpus
// sessions.
func TestContextStreamEqualsBuild(t *testing.T) {
	var files []string
	golden, _ := filepath.Glob("testdata/context/*.jsonl")
	samples, _ := filepath.Glob("testdata/omp/sessions/*/*.jsonl")
	files = append(append(files, golden...), samples...)
	agent := t.TempDir()
	g := newSessionGen(41, filepath.Join(agent, "blobs"))
	gen := filepath.Join(agent, "sessions", "gen")
	os.MkdirAll(gen, 0o700)
	generated := testscale.N(400, 1500)
	for i := range generated {
		c := g.file(fmt.Sprintf("f%05d", i))
		p := filepath.Join(gen, c.name+".jsonl")
		if err := os.WriteFile(p, c.bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	if err := g.writeBlobs(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		files = append(files, uncompacted(t, 400*(i+1)))
	}
	files = append(files, v1Compacted(t, gen)...)
	compared := 0
	for _, f := range files {
		s, err := Open(f, nil)
		if err != nil {
			continue // not a session: ReadContext refuses it alike (below)
		}
		want := s.BuildContext()
		s.Close()
		// A windowed load resolves the blobs of its window only; the
		// whole path's are what a full load (and a stream) resolve.
		full, _ := Open(f, &OpenOptions{Full: true})
		want.MissingBlobs = full.BuildContext().MissingBlobs
		full.Close()
		r, err := ReadContext(f, &OpenOptions{MaxWindowBytes: 1})
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if len(want.Messages) > 0 && !r.Streamed() {
			t.Errorf("%s: not streamed past its bound", f)
		}
		got := []ai.Message{}
		if err := r.Each(func(m *ai.Message) error { got = append(got, *m); return nil }); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		tokens, err := r.Tokens()
		if err != nil {
			t.Fatal(err)
		}
		wj, _ := json.Marshal(want.Messages)
		gj, _ := json.Marshal(got)
		switch {
		case string(wj) != string(gj):
			t.Errorf("%s: the streamed messages differ:\n got %.600s\nwant %.600s", f, gj, wj)
		case r.LeafID != want.LeafID || r.ThinkingLevel != want.ThinkingLevel || fmt.Sprint(r.Models) != fmt.Sprint(want.Models):
			t.Errorf("%s: leaf %q thinking %q models %v, want %q %q %v", f, r.LeafID, r.ThinkingLevel, r.Models, want.LeafID, want.ThinkingLevel, want.Models)
		case r.MissingBlobs != want.MissingBlobs:
			t.Errorf("%s: %d missing blobs, want %d", f, r.MissingBlobs, want.MissingBlobs)
		case tokens != want.Tokens:
			t.Errorf("%s: %d tokens, want %d", f, tokens, want.Tokens)
		}
		r.Close()
		compared++
	}
	t.Logf("%d files compared", compared)
	if compared < generated*2/3 {
		t.Errorf("only %d files compared", compared)
	}
}

// v1Compacted writes v1 files (no ids: omp gives each its position) whose
// compaction names the kept entry by its index, the first, middle or last
// entry, or none.
func v1Compacted(t *testing.T, dir string) []string {
	var files []string
	for _, kept := range []int{-1, 1, 3, 5, 7} {
		var b strings.Builder
		b.WriteString(`{"type":"session","id":"v1-` + fmt.Sprint(kept) + `","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}` + "\n")
		for i := range 6 {
			role := "user"
			if i%2 == 1 {
				role = "assistant"
			}
			fmt.Fprintf(&b, `{"type":"message","timestamp":"2025-01-01T00:00:0%d.000Z","message":{"role":%q,"content":[{"type":"text","text":"m%d"}],"timestamp":%d}}`+"\n", i, role, i, i)
		}
		keptMember := ""
		if kept >= 0 {
			keptMember = fmt.Sprintf(`,"firstKeptEntryIndex":%d`, kept)
		}
		fmt.Fprintf(&b, `{"type":"compaction","timestamp":"2025-01-01T00:01:00.000Z","summary":"sum","tokensBefore":9%s}`+"\n", keptMember)
		b.WriteString(`{"type":"message","timestamp":"2025-01-01T00:02:00.000Z","message":{"role":"user","content":"after","timestamp":9}}` + "\n")
		p := filepath.Join(dir, fmt.Sprintf("v1-%d.jsonl", kept))
		if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	return files
}
