package foreign

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/omptest"
	"github.com/xdev/xdev/internal/realfixtures"
)

// realClaude is the Claude Code project of real sessions nobody here wrote
// (their README says where they come from).
var realClaude = realfixtures.Join("claude", "sample-project")

// claudeRoot copies the real Claude sessions into a new Claude data dir
// (projects/sample-project/), so that both converters read the same files
// with the same times, and the fixtures stay untouched.
func claudeRoot(t *testing.T) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(realClaude, "*.jsonl"))
	if len(files) == 0 {
		// The fixtures live beside the repository, not in it: without them
		// the hand-made sessions are still compared with omp.
		realfixtures.Absent(t, "real Claude sessions at "+realClaude)
	}
	home := t.TempDir()
	root := filepath.Join(home, ".claude")
	dir := filepath.Join(root, "projects", "sample-project")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// And a hand-made session for what they lack: images, errors, titles,
	// meta and sidechain lines, branches, a repeated uuid, a torn line.
	// And Claude Code 2.1's shapes, hand-made after the records the real
	// 2.1 transcripts issue 23 names show: a file-history-snapshot first,
	// queue-operation, attachment, progress and away_summary records, a
	// compaction boundary with a null parent, and a subagent's own file.
	files = append(files, "testdata/claude/handmade.jsonl", "testdata/claude/v21-compacted.jsonl", "testdata/claude/agent-v21sub.jsonl")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Claude's prompt history names one session's project and times, and
	// its config registers a project path (which omp decodes names by).
	history := `{"display":"  first   typed prompt ","pastedContents":{},"timestamp":1751450000000,"project":"/from/history","sessionId":"1af7fc5e-8455-4414-9ccd-011d40f70b2a"}
{"display":"later","timestamp":1893456000000,"sessionId":"1af7fc5e-8455-4414-9ccd-011d40f70b2a"}
{"display":"no id","timestamp":1751450000000}
not json
`
	if err := os.WriteFile(filepath.Join(root, "history.jsonl"), []byte(history), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(root, "projects", "-work-registered-app")
	os.MkdirAll(other, 0o700)
	data, _ := os.ReadFile("testdata/claude/handmade.jsonl")
	os.WriteFile(filepath.Join(other, "0badc0de-0000-4000-8000-000000000001.jsonl"), data, 0o600)
	os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"projects":{"/work/registered-app":{},"relative":{}}}`), 0o600)
	return root
}

// TestClaudeListAsOmp: xdev lists the Claude Code sessions omp 18.2.3's
// ClaudeSessionStore.list lists, in its order, with the same id, cwd and
// times.
func TestClaudeListAsOmp(t *testing.T) {
	root := claudeRoot(t)
	omp, err := jsonx.Parse(omptest.Run(t, t.TempDir(), "foreign-import.ts", "claude", root))
	if err != nil {
		t.Fatal(err)
	}
	mine, err := ListClaude(root, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(mine) != len(omp.Items()) {
		t.Fatalf("xdev lists %d sessions, omp %d", len(mine), len(omp.Items()))
	}
	for i, s := range omp.Items() {
		got := mine[i]
		for _, c := range []struct{ what, xdev, omp string }{
			{"path", got.Path, s.Get("path").String()},
			{"id", got.ID, s.Get("id").String()},
			{"cwd", got.Cwd, s.Get("listedCwd").String()},
			{"created", strconv.FormatInt(got.Created.UnixMilli(), 10), string(s.Get("created").JSON())},
			{"modified", strconv.FormatInt(got.Modified.UnixMilli(), 10), string(s.Get("modified").JSON())},
		} {
			if c.xdev != c.omp {
				t.Errorf("session %d: %s %q, omp %q", i, c.what, c.xdev, c.omp)
			}
		}
		if fm := s.Get("firstMessage"); fm.Kind() == jsonx.String && fm.String() != got.FirstMessage {
			t.Errorf("%s: first message %q, omp %q", got.ID, got.FirstMessage, fm.String())
		}
	}
	// Without subagents, agent-*.jsonl is left out.
	plain, _ := ListClaude(root, false)
	for _, s := range plain {
		if s.Subagent || strings.HasPrefix(filepath.Base(s.Path), "agent-") {
			t.Errorf("%s listed without --subagents", s.Path)
		}
	}
	subs := 0
	for _, s := range mine {
		if s.Subagent {
			subs++
		}
	}
	if len(mine)-len(plain) != subs {
		t.Errorf("%d listed with subagents (%d of them subagents), %d without", len(mine), subs, len(plain))
	}
}

// TestClaudeAsOmp: every real Claude Code session converts, entry for
// entry and byte for byte, into what omp 18.2.3's own importer
// (ClaudeSessionStore.load, run by interop/omp/scripts/foreign-import.ts)
// makes of it, with the same cwd and title.
func TestClaudeAsOmp(t *testing.T) {
	root := claudeRoot(t)
	omp, err := jsonx.Parse(omptest.Run(t, t.TempDir(), "foreign-import.ts", "claude", root))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, s := range omp.Items() {
		path, _ := s.Get("path").Text()
		t.Run(filepath.Base(path), func(t *testing.T) {
			if e, ok := s.Get("error").Text(); ok {
				t.Skipf("omp refuses it: %s", e)
			}
			got, err := ConvertClaude(path, "/fallback")
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(filepath.Base(path), "agent-") {
				// A subagent's own transcript: omp's importer drops its
				// every (sidechain) record; xdev converts it whole.
				if len(s.Get("entries").Items()) != 0 || len(got.Entries) == 0 {
					t.Errorf("a subagent transcript: %d entries, omp %d; want the conversation, and omp none", len(got.Entries), len(s.Get("entries").Items()))
				}
				return
			}
			if cwd, _ := s.Get("cwd").Text(); got.Cwd != cwd {
				t.Errorf("cwd %q, omp %q", got.Cwd, cwd)
			}
			if title, _ := s.Get("title").Text(); got.Title != title {
				t.Errorf("title %q, omp %q", got.Title, title)
			}
			checked += compareWithOmp(t, got, s.Get("entries").Items())
		})
	}
	if checked == 0 {
		t.Fatal("no entries compared")
	}
	t.Logf("%d entries of %d sessions identical to omp's", checked, len(omp.Items()))
}

// TestClaudeUntouched: converting reads the source and changes nothing.
func TestClaudeUntouched(t *testing.T) {
	root := claudeRoot(t)
	files, _ := filepath.Glob(filepath.Join(root, "projects", "*", "*.jsonl"))
	for _, f := range files {
		before, _ := os.ReadFile(f)
		fi, _ := os.Stat(f)
		if _, err := ConvertClaude(f, "/p"); err != nil && !strings.Contains(err.Error(), "no readable records") {
			t.Fatal(err)
		}
		after, _ := os.ReadFile(f)
		fi2, _ := os.Stat(f)
		if string(before) != string(after) || !fi.ModTime().Equal(fi2.ModTime()) {
			t.Errorf("%s changed", f)
		}
	}
}

// compareWithOmp compares a conversion with omp's entries for the same
// session, byte for byte, and returns how many it compared. omp names the
// session with a trailing title_change entry of a fresh id and the
// current time; Converted holds the title apart, for the writer to name
// it as omp does, so that entry is checked apart: its source, trigger and
// place.
func compareWithOmp(t *testing.T, got *Converted, want []jsonx.Value) int {
	t.Helper()
	if n := len(want); n > 0 && want[n-1].Get("type").Is("title_change") {
		tc := want[n-1]
		want = want[:n-1]
		if src, _ := tc.Get("source").Text(); src != got.TitleSource {
			t.Errorf("title source %q, omp %q", got.TitleSource, src)
		}
		if trig, _ := tc.Get("trigger").Text(); trig != got.TitleTrigger {
			t.Errorf("title trigger %q, omp %q", got.TitleTrigger, trig)
		}
		if len(want) > 0 && !tc.Get("parentId").Is(want[len(want)-1].Get("id").String()) {
			t.Errorf("omp's title_change hangs from %s, not the last entry", tc.Get("parentId").JSON())
		}
	}
	if len(got.Entries) != len(want) {
		t.Errorf("%d entries, omp %d", len(got.Entries), len(want))
	}
	for i := range min(len(got.Entries), len(want)) {
		if w := string(want[i].JSON()); string(got.Entries[i]) != w {
			t.Fatalf("entry %d:\n xdev %.700s\n  omp %.700s", i, got.Entries[i], w)
		}
	}
	return len(want)
}

// TestClaudeReadingCompaction: for reading, Claude Code 2.1's compaction
// boundary (parentUuid null, logicalParentUuid the record before) hangs
// from what it follows and becomes a compaction entry holding the
// summary, so the conversation reads whole, boundary marked, and its
// context is still the summary and what follows; every entry names its
// source line. For resuming it stays omp's new root (TestClaudeAsOmp).
func TestClaudeReadingCompaction(t *testing.T) {
	src := "testdata/claude/v21-compacted.jsonl"
	read, err := convertAll(func(begin func(*Converted) error, emit func(string, []byte) error) error {
		return StreamClaude(src, "/fallback", ForReading, begin, emit)
	})
	if err != nil {
		t.Fatal(err)
	}
	resume, err := ConvertClaude(src, "/fallback")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(mustRead(t, src))), "\n")
	byID := map[string]jsonx.Value{}
	var last string
	for _, e := range read.Entries {
		v, err := jsonx.Parse(e)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := v.Get("id").Text()
		byID[id], last = v, id
		n, ok := v.Get(SourceLine).Float()
		if !ok || n < 1 || int(n) > len(lines) {
			t.Fatalf("%s: source line %v", id, v.Get(SourceLine).JSON())
		}
		// The entry's source line is the record it came from; a
		// compaction's, the summary folded into it (whose text it holds).
		rec, _ := jsonx.Parse([]byte(lines[int(n)-1]))
		uuid, _ := rec.Get("uuid").Text()
		switch {
		case v.Get("type").Is("compaction"):
			if !rec.Get("isCompactSummary").Truthy() {
				t.Errorf("%s names line %d, the record %s, not the summary", id, int(n), uuid)
			}
		case !strings.HasPrefix(id, "claude-"+uuid+"-"):
			t.Errorf("%s names line %d, the record %s", id, int(n), uuid)
		}
	}
	var path []string // the leaf's branch, root first
	for id := last; id != ""; {
		v := byID[id]
		typ, _ := v.Get("type").Text()
		text := ""
		switch typ {
		case "message":
			text = string(v.Get("message").Get("content").JSON())
		case "compaction":
			text, _ = v.Get("summary").Text()
		}
		path = append([]string{typ + ":" + text}, path...)
		id, _ = v.Get("parentId").Text()
	}
	joined := strings.Join(path, "\n")
	for _, want := range []string{"first question about the loader", "first answer about the loader",
		"compaction:This session is being continued", "second question after compaction", "second answer after compaction"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the branch read lacks %q:\n%s", want, joined)
		}
	}
	if strings.Count(joined, "This session is being continued") != 1 {
		t.Errorf("the summary is on the branch other than once, as the compaction's:\n%s", joined)
	}
	// For resuming, omp's importer's shape: the summary a user message at
	// a new root, no compaction entry.
	if r := string(bytes.Join(resume.Entries, nil)); strings.Contains(r, `"type":"compaction"`) || strings.Contains(r, SourceLine) {
		t.Errorf("the conversion for resuming has a compaction or source lines")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
