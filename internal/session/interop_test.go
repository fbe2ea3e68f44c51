package session

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/ai"
)

// The interop suite is the contract with omp: it runs the real omp 18.2.3
// (interop/omp) over files in both directions.

// TestInteropOmpToXdev opens every file of the omp-written corpus
// (testdata/omp, made by interop/omp/gen-corpus.sh) and the real pi
// sessions, and checks xdev rebuilds exactly omp's context.
func TestInteropOmpToXdev(t *testing.T) {
	requireOmp(t)
	agent := t.TempDir()
	copyTree(t, "testdata/omp", agent)
	var manifest map[string]string
	b, err := os.ReadFile(filepath.Join(agent, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(b, &manifest)
	var files []string
	for rel := range manifest {
		files = append(files, filepath.Join(agent, rel))
	}
	handmade, _ := filepath.Glob("testdata/context/*.jsonl")
	for _, f := range handmade {
		if !strings.Contains(f, "malformed") { // a null line crashes omp's loader
			abs, _ := filepath.Abs(f)
			files = append(files, abs)
		}
	}
	for _, name := range []string{"pi-v1-before-compaction.jsonl", "pi-v1-large-session.jsonl"} {
		if p, err := filepath.Abs(filepath.Join(realDir, name)); err == nil {
			if _, err := os.Stat(p); err == nil {
				files = append(files, p)
			}
		}
	}
	sums := sortedSums(t, files)
	views := ompContexts(t, agent, files...)
	blobs := NewBlobStore(filepath.Join(agent, "blobs"))
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			v, ok := views[f]
			if !ok {
				t.Fatalf("omp printed nothing for %s", f)
			}
			// (compareWithOmp leaves out the leaf of a v1 file: omp draws
			// random ids on load, xdev derives them from the position.)
			compareWithOmp(t, f, blobs, v)
			unchanged(t, f, sums[f])
		})
	}
	t.Logf("compared %d omp-written or foreign files with omp's own context", len(files))
}

// TestInteropXdevToOmp writes sessions with xdev and has omp resume them:
// omp must accept each, leave its bytes alone, rebuild the context xdev
// rebuilds, and list the sessions with xdev's titles.
func TestInteropXdevToOmp(t *testing.T) {
	requireOmp(t)
	agent := t.TempDir()
	blobs := NewBlobStore(BlobsDir(agent))
	dir := filepath.Join(SessionsDir(agent), "-proj")
	cases := map[string]func(t *testing.T, s *Store){
		"every-type": func(t *testing.T, s *Store) {
			mustE(t)(s.Append(&ModelChange{Model: "anthropic/claude-sonnet-4-5"}))
			lvl := "medium"
			mustE(t)(s.Append(&ThinkingLevelChange{ThinkingLevel: &lvl, Configured: &lvl}))
			u := mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("list <files> & \"dirs\" \u2028 ünï"), Timestamp: 1}))
			mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.BlockContent(
				ai.Block{Type: ai.BlockThinking, Thinking: "ls it", ThinkingSignature: "sig"},
				ai.ToolCall("call_1", "bash", []byte(`{"command":"ls"}`))),
				API: "anthropic-messages", Provider: "anthropic", Model: "claude-sonnet-4-5",
				Usage: &ai.Usage{Input: 10, Output: 5, TotalTokens: 15, Cost: ai.Cost{Input: 0.00003, Total: 0.00003}}, StopReason: ai.StopToolUse, Timestamp: 2}))
			isErr := false
			mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleToolResult, ToolCallID: "call_1", ToolName: "bash",
				Content: ai.BlockContent(ai.Text("a.go\nb.go\n")), IsError: &isErr, Timestamp: 3}))
			mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.BlockContent(ai.Text("Two files.")),
				Provider: "anthropic", Model: "claude-sonnet-4-5", StopReason: ai.StopEnd, Timestamp: 4}))
			mustE(t)(s.Append(&Label{TargetID: u.ID, Label: "start"}))
			mustE(t)(s.Append(&Custom{CustomType: "xdev_state", Data: []byte(`{"k":[1,2]}`)}))
			mustE(t)(s.Append(&CustomMessage{CustomType: "note", Content: ai.TextContent("remember this"), Display: true, Attribution: "agent"}))
			mustE(t)(s.AppendJSON([]byte(`{"type":"xdev_future","payload":{"n":1}}`)))
			mustE(t)(s.Append(&ModeChange{Mode: "plan"}))
			mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("and now?"), Timestamp: 5}))
			mustOK(t)(s.SetTitle("Listing files", TitleAuto))
		},
		"compaction-reset-branch": func(t *testing.T, s *Store) {
			u1 := mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("q1"), Timestamp: 1}))
			a1 := mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.BlockContent(ai.Text("a1")), Provider: "p", Model: "m", StopReason: ai.StopEnd, Timestamp: 2}))
			mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("q2"), Timestamp: 3}))
			mustE(t)(s.Append(&Compaction{Summary: "sum", FirstKeptEntryID: &u1.ID, TokensBefore: 100}))
			mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.BlockContent(ai.Text("a2")), Provider: "p", Model: "m", StopReason: ai.StopEnd, Timestamp: 4}))
			mustE(t)(s.Append(&ResetBoundary{}))
			mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("after reset"), Timestamp: 5}))
			mustE(t)(s.AppendAt(a1.ID, &BranchSummary{FromID: a1.ID, Summary: "abandoned the rest"}))
			mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("on the new branch"), Timestamp: 6}))
			mustE(t)(s.Branch(u1.ID))
			mustOK(t)(s.SetTitle("Auto first", TitleAuto))
			mustOK(t)(s.SetTitle("Then manual ✓", TitleManual))
		},
		"image-blob": func(t *testing.T, s *Store) {
			img := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\x89PNG pixels ", 200)))
			mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text("see"), ai.Image(img, "image/png"), ai.Image("aGk=", "image/png")), Timestamp: 1}))
			mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.BlockContent(ai.Text("a picture")), Provider: "p", Model: "m", StopReason: ai.StopEnd, Timestamp: 2}))
			mustOK(t)(s.SetTitle(strings.Repeat("A very long title ", 20), TitleManual))
		},
	}
	var files []string
	for name, fill := range cases {
		path := filepath.Join(dir, FileName(fixedTime, name)) // distinct, omp-style names
		s, err := Create(path, NewOptions{Cwd: "/proj", Blobs: blobs})
		if err != nil {
			t.Fatal(err)
		}
		fill(t, s)
		s.Close()
		files = append(files, path)
	}
	sums := sortedSums(t, files)
	views := ompContexts(t, agent, files...)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			compareWithOmp(t, f, blobs, views[f])
			unchanged(t, f, sums[f])
		})
	}
	// omp's listing shows exactly these sessions, with xdev's titles.
	var listed []struct{ Path, ID, Title string }
	json.Unmarshal(runOmp(t, agent, "list.ts"), &listed)
	if len(listed) != len(files) {
		t.Fatalf("omp lists %d sessions, want %d: %+v", len(listed), len(files), listed)
	}
	for _, l := range listed {
		s, err := Open(l.Path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if title, _ := s.Title(); title != l.Title || s.ID() != l.ID {
			t.Errorf("omp lists %s as %q (%s); xdev says %q (%s)", l.Path, l.Title, l.ID, title, s.ID())
		}
	}
	t.Logf("omp resumed %d xdev-written sessions", len(files))
}

// TestInteropBothWriting alternates appends and retitles between xdev and
// omp on one file; afterwards both see the same entries in the same order.
func TestInteropBothWriting(t *testing.T) {
	requireOmp(t)
	agent := t.TempDir()
	path := filepath.Join(SessionsDir(agent), "-proj", FileName(fixedTime, "both"))
	s, err := Create(path, NewOptions{Cwd: "/proj"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	var ompIDs []string
	const rounds = 4
	for r := range rounds {
		s, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("xdev asks " + itoa(r)), Timestamp: int64(r)}))
		mustE(t)(s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.BlockContent(ai.Text("xdev answers")), Provider: "p", Model: "m", StopReason: ai.StopEnd, Timestamp: int64(r)}))
		mustOK(t)(s.SetTitle("xdev title "+itoa(r), TitleManual))
		s.Close()
		ompIDs = nil
		json.Unmarshal(runOmp(t, agent, "append.ts", path, "omp asks "+itoa(r), "omp title "+itoa(r)), &ompIDs)
	}
	final, err := Open(path, &OpenOptions{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range final.Entries() {
		ids = append(ids, e.ID)
	}
	if want := rounds * (3 + 3); len(ids) != want || final.Malformed() != 0 {
		t.Errorf("xdev sees %d entries (%d malformed), want %d", len(ids), final.Malformed(), want)
	}
	if !slices.Equal(ids, ompIDs) {
		t.Errorf("entry order differs:\nxdev %v\nomp  %v", ids, ompIDs)
	}
	if title, src := final.Title(); title != "omp title 3" || src != TitleManual {
		t.Errorf("title = %q %v", title, src)
	}
	compareWithOmp(t, path, nil, ompContexts(t, agent, path)[path])
}

func mustE(t *testing.T) func(*Entry, error) *Entry {
	return func(v *Entry, err error) *Entry {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func mustOK(t *testing.T) func(bool, error) {
	return func(ok bool, err error) {
		t.Helper()
		if err != nil || !ok {
			t.Fatalf("ok=%v err=%v", ok, err)
		}
	}
}

// sortedSums sorts files in place and returns the sha256 of each, so a test
// can prove omp and xdev left them unchanged.
func sortedSums(t *testing.T, files []string) map[string][32]byte {
	slices.Sort(files)
	sums := make(map[string][32]byte, len(files))
	for _, f := range files {
		sums[f] = fileSum(t, f)
	}
	return sums
}
