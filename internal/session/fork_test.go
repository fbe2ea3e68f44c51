package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/xdev/xdev/internal/ai"
)

// forkSources are sessions of every shape to fork: omp's corpus, the real
// pi v1 files, and one xdev wrote.
func forkSources(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	copyTree(t, "testdata/omp", dir)
	srcs, _ := filepath.Glob(filepath.Join(dir, "sessions", "-proj", "*.jsonl"))
	for _, name := range []string{"pi-v1-before-compaction.jsonl", "pi-v1-large-session.jsonl"} {
		if p := filepath.Join(realDir, name); fileExists(p) {
			b, _ := os.ReadFile(p)
			srcs = append(srcs, writeFile(t, filepath.Join(dir, "sessions", "-proj"), name, string(b)))
		}
	}
	s, path := newSession(t)
	s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("hi"), Timestamp: 1})
	s.SetTitle("Mine", TitleManual)
	// A torn tail: the copy must still end in a newline.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"message","id":"torn"`)
	f.Close()
	return append(srcs, path)
}

func contextJSON(t *testing.T, s *Store) string {
	t.Helper()
	ctx := s.BuildContext()
	b, err := json.Marshal(ctx.Messages)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "|" + ctx.Model() + "|" + ctx.ThinkingLevel
}

func TestForkSession(t *testing.T) {
	for _, src := range forkSources(t) {
		t.Run(filepath.Base(src), func(t *testing.T) {
			sum := fileSum(t, src)
			orig, err := Open(src, &OpenOptions{Full: true})
			if err != nil {
				t.Fatal(err)
			}
			fork, err := ForkSession(src, "", "")
			if err != nil {
				t.Fatal(err)
			}
			unchanged(t, src, sum)
			h := fork.Header()
			if u, err := uuid.Parse(h.ID); err != nil || u.Version() != 7 {
				t.Errorf("fork id %q is not a UUIDv7", h.ID)
			}
			if h.ParentSession != orig.ID() || h.Version != 3 || h.Cwd != orig.Header().Cwd {
				t.Errorf("fork header = %s", h.Raw())
			}
			if filepath.Dir(fork.Path()) != filepath.Dir(src) || !strings.HasSuffix(fork.Path(), "_"+h.ID+".jsonl") {
				t.Errorf("fork path = %s", fork.Path())
			}
			gt, gs := fork.Title()
			wt, ws := orig.Title()
			if gt != wt || gs != ws {
				t.Errorf("title %q/%v, want %q/%v", gt, gs, wt, ws)
			}
			if slot, ok := fork.Slot(); !ok || !slot.OmpAccepts {
				t.Errorf("fork slot = %+v, %v", slot, ok)
			}
			if fork.LeafID() != orig.LeafID() && orig.Version() == 3 {
				t.Errorf("leaf %s, want %s", fork.LeafID(), orig.LeafID())
			}
			if got, want := contextJSON(t, fork), contextJSON(t, orig); got != want {
				t.Errorf("fork context differs from the source's")
			}
			if orig.Version() == 3 {
				// The entries are the source's bytes.
				sb, _ := os.ReadFile(src)
				fb, _ := os.ReadFile(fork.Path())
				_, sEntries := splitPreamble(t, sb)
				_, fEntries := splitPreamble(t, fb)
				if !bytes.HasPrefix(fEntries, sEntries) || len(fEntries)-len(sEntries) > 1 || fb[len(fb)-1] != '\n' {
					t.Errorf("entries not copied byte for byte")
				}
			}
			// The fork takes appends, whatever the source's version.
			if _, err := fork.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("more"), Timestamp: 9}); err != nil {
				t.Errorf("append to fork: %v", err)
			}
			fork.Close()
			if fi, _ := os.Stat(fork.Path()); fi.Mode().Perm() != 0o600 {
				t.Errorf("fork mode %v", fi.Mode().Perm())
			}
		})
	}
}

// splitPreamble returns the slot+header bytes and the entry bytes.
func splitPreamble(t *testing.T, b []byte) (pre, entries []byte) {
	t.Helper()
	p, err := readPreamble(bytes.NewReader(b), "mem", 0)
	if err != nil {
		t.Fatal(err)
	}
	return b[:p.entriesOff], b[p.entriesOff:]
}

func TestForkSessionLabelAndDst(t *testing.T) {
	s, src := newSession(t)
	s.SetTitle("Original", TitleAuto)
	s.Close()
	dst := filepath.Join(filepath.Dir(src), "child.jsonl")
	fork, err := ForkSession(src, dst, "  try\tthe other way ")
	if err != nil {
		t.Fatal(err)
	}
	if title, src := fork.Title(); title != "try the other way" || src != TitleManual {
		t.Errorf("title = %q %v", title, src)
	}
	if h := fork.Header(); h.Title != "try the other way" || h.TitleSource != "user" {
		t.Errorf("header = %s", h.Raw())
	}
	sum := fileSum(t, dst)
	if _, err := ForkSession(src, dst, ""); !errors.Is(err, os.ErrExist) {
		t.Errorf("fork onto an existing file: %v", err)
	}
	unchanged(t, dst, sum)
	if _, err := ForkSession(filepath.Join(t.TempDir(), "missing.jsonl"), "", ""); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("fork of a missing file: %v", err)
	}
	bad := writeFile(t, t.TempDir(), "bad.jsonl", "not json\n")
	if _, err := ForkSession(bad, "", ""); !errors.Is(err, ErrNoHeader) {
		t.Errorf("fork of a non-session: %v", err)
	}
}

func TestForkKeepsCacheKeyAndUnknownHeaderMembers(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, dir, "s.jsonl",
		`{"type":"session","version":3,"id":"src-id","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p","additionalDirectories":["/q"]}`+"\n"+
			`{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"x","timestamp":1}}`+"\n")
	fork, err := ForkSession(src, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	json.Unmarshal(fork.Header().Raw(), &h)
	if h["providerPromptCacheKey"] != "src-id" || !reflect.DeepEqual(h["additionalDirectories"], []any{"/q"}) || h["parentSession"] != "src-id" {
		t.Errorf("fork header = %v", h)
	}
}

// labelled builds a session with labels on and off the path to the entry
// to branch at: a1 → u2 → a2 (branch here), and u2' on another branch.
func labelled(t *testing.T) (s *Store, path, at string, want map[string]string) {
	s, path = newSession(t)
	u1 := mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("q1"), Timestamp: 1}))
	mustE(t)(s.Append(&Label{TargetID: u1.ID, Label: "first"})) // on the path
	a1 := mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.BlockContent(ai.Text("a1")), Provider: "p", Model: "m", StopReason: ai.StopEnd, Timestamp: 2}))
	u2 := mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("q2"), Timestamp: 3}))
	mustE(t)(s.Append(&Label{TargetID: a1.ID, Label: "old"})) // on the path, overridden later
	a2 := mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.BlockContent(ai.Text("a2")), Provider: "p", Model: "m", StopReason: ai.StopEnd, Timestamp: 4}))
	// Another branch from a1, with labels that apply to the path's entries.
	mustE(t)(s.AppendAt(a1.ID, &Message{Message: ai.Message{Role: ai.RoleUser, Content: ai.TextContent("q2'"), Timestamp: 5}}))
	mustE(t)(s.Append(&Label{TargetID: a1.ID, Label: "answer"}))
	mustE(t)(s.Append(&Label{TargetID: u2.ID, Label: "question"}))
	mustE(t)(s.Append(&Label{TargetID: u1.ID, Label: ""})) // cleared
	return s, path, a2.ID, map[string]string{a1.ID: "answer", u2.ID: "question"}
}

func TestForkBranch(t *testing.T) {
	s, src, at, wantLabels := labelled(t)
	s.Close()
	sum := fileSum(t, src)
	b, err := ForkBranch(src, "", at)
	if err != nil {
		t.Fatal(err)
	}
	unchanged(t, src, sum)
	abs, _ := filepath.Abs(src)
	if h := b.Header(); h.ParentSession != abs || h.ID == s.ID() {
		t.Errorf("header = %s", h.Raw())
	}
	// An unbroken chain from the leaf to the root.
	all, _ := Open(b.Path(), &OpenOptions{Full: true})
	entries := all.Entries()
	n := len(all.pathTo(all.LeafID()))
	if n != len(entries) {
		t.Errorf("leaf path has %d of %d entries: the chain is broken", n, len(entries))
	}
	if got := labelsInEffect(entries); !reflect.DeepEqual(got, wantLabels) {
		t.Errorf("labels = %v, want %v", got, wantLabels)
	}
	orig, _ := Open(src, &OpenOptions{Full: true})
	want := orig.BuildContextAt(at)
	got := all.BuildContext()
	wb, _ := json.Marshal(want.Messages)
	gb, _ := json.Marshal(got.Messages)
	if string(wb) != string(gb) {
		t.Errorf("context differs:\n%s\n%s", gb, wb)
	}
	// The path's lines are the source's bytes.
	sb, _ := os.ReadFile(src)
	kept := len(orig.pathTo(at))
	if carried := len(entries) - kept; carried != 3 { // answer, question, and clearing "first"
		t.Errorf("%d label entries carried, want 3", carried)
	}
	for _, e := range entries[:kept] {
		if !bytes.Contains(sb, append(append([]byte{'\n'}, e.Raw()...), '\n')) {
			t.Errorf("entry %s was re-encoded", e.ID)
		}
	}
	if _, err := ForkBranch(src, "", "nope"); err == nil || !strings.Contains(err.Error(), `no entry "nope"`) {
		t.Errorf("branch at a missing entry: %v", err)
	}
}

func TestSubagent(t *testing.T) {
	parent, ppath := newSession(t)
	init := &SessionInit{SystemPrompt: "You are Scout.", Task: "Find the config", Tools: []string{"read"}, Agent: "scout"}
	sub, err := CreateSubagent(ppath, "Scout", init, NewOptions{TitleSource: TitleSubagent, Title: "x"})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSuffix(ppath, ".jsonl") + "/Scout.jsonl"
	if sub.Path() != want {
		t.Errorf("path = %s, want %s", sub.Path(), want)
	}
	abs, _ := filepath.Abs(ppath)
	if h := sub.Header(); h.ParentSession != abs || h.Cwd != parent.Header().Cwd {
		t.Errorf("header = %s", h.Raw())
	}
	lines := readLines(t, sub.Path())
	if len(lines) != 3 || !strings.HasPrefix(lines[2], `{"type":"session_init",`) || strings.Contains(lines[0], "subagent") || strings.Contains(lines[0], `"source"`) {
		t.Errorf("subagent file = %q", lines)
	}
	infos, _ := List(filepath.Dir(filepath.Dir(filepath.Dir(ppath))), nil)
	if len(infos) != 1 || infos[0].Path != ppath {
		t.Errorf("List shows %+v", infos)
	}
	if _, err := CreateSubagent(ppath, "Scout", init, NewOptions{}); !errors.Is(err, os.ErrExist) {
		t.Errorf("second Scout: %v", err)
	}
	for _, bad := range []string{"", ".", "..", "../x", "a/b", "a\\b", "a\x00b"} {
		if _, err := CreateSubagent(ppath, bad, init, NewOptions{}); err == nil {
			t.Errorf("agent id %q accepted", bad)
		}
	}
}

// TestMigrationPassesThroughArrays: an array line of a v1 file is an
// entry in omp's memory that the context passes through; a fork or a
// repair (both migrate to v3) keeps the context it gives, wherever the
// arrays are: first, last, several in a row.
func TestMigrationPassesThroughArrays(t *testing.T) {
	const header = `{"type":"session","id":"0190f000-0000-7000-8000-000000000001","timestamp":"2026-03-02T19:50:00.000Z","cwd":"/p"}`
	msg := func(n int) string {
		return fmt.Sprintf(`{"type":"message","timestamp":"2026-03-02T19:50:%02d.000Z","message":{"role":"user","content":"m%d","timestamp":%d}}`, n%60, n, 1772481000000+n)
	}
	for n := range 64 {
		// Bit i of n puts an array before message i (bit 5: one after the last).
		lines := []string{header}
		for i := range 5 {
			if n&(1<<i) != 0 {
				lines = append(lines, `[null]`)
				if i%2 == 1 {
					lines = append(lines, `[]`)
				}
			}
			lines = append(lines, msg(i))
		}
		if n&32 != 0 {
			lines = append(lines, `[1]`)
		}
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			dir := t.TempDir()
			src := writeFile(t, dir, "v1.jsonl", strings.Join(lines, "\n")+"\n")
			orig, err := Open(src, &OpenOptions{Full: true})
			if err != nil {
				t.Fatal(err)
			}
			defer orig.Close()
			want := contextJSON(t, orig)
			if !strings.Contains(want, `"m0"`) {
				t.Fatalf("the source's context lacks its first message: %s", want)
			}
			fork, err := ForkSession(src, filepath.Join(dir, "fork.jsonl"), "")
			if err != nil {
				t.Fatal(err)
			}
			if got := contextJSON(t, fork); got != want {
				t.Errorf("fork context\n got %s\nwant %s", got, want)
			}
			fork.Close()
			out := filepath.Join(dir, "repaired.jsonl")
			if _, err := Repair(src, out); err != nil {
				t.Fatal(err)
			}
			rep, err := Open(out, &OpenOptions{Full: true})
			if err != nil {
				t.Fatal(err)
			}
			defer rep.Close()
			if got := contextJSON(t, rep); got != want {
				t.Errorf("repaired context\n got %s\nwant %s", got, want)
			}
		})
	}
}
