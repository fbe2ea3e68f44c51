package foreign

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/omptest"
	"github.com/xdev/xdev/internal/realfixtures"
	"github.com/xdev/xdev/internal/session"
)

var (
	realCopilot = realfixtures.Join("copilot")
	realGemini  = realfixtures.Join("gemini")
)

// copyTree copies the regular files under src to dst.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		q := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(q), 0o700); err != nil {
			return err
		}
		return os.WriteFile(q, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// copilotRoot is a Copilot dir of the real sessions (copied: the
// fixtures stay untouched) and a hand-made one whose last line is torn.
func copilotRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".copilot")
	if hasReal(t, "real Copilot CLI sessions") {
		copyTree(t, realCopilot, root)
	}
	copyTree(t, "testdata/copilot", filepath.Join(root, "session-state", "hand-copilot-torn"))
	os.Rename(filepath.Join(root, "session-state", "hand-copilot-torn", "torn.jsonl"),
		filepath.Join(root, "session-state", "hand-copilot-torn", copilotEvents))
	return root
}

// geminiRoot is a Gemini dir of the real chats (JSON documents) and a
// hand-made JSONL chat with upserts, a rewind, a $set and a subagent's
// chat, from reading Gemini CLI's recording format (docs/import.md).
func geminiRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".gemini")
	if hasReal(t, "real Gemini CLI chats") {
		copyTree(t, realGemini, root)
	}
	chats := filepath.Join(root, "tmp", "5f0c-handmade", "chats")
	b, _ := os.ReadFile("testdata/gemini/handmade.jsonl")
	os.MkdirAll(filepath.Join(chats, "hand-gemini-1"), 0o700)
	os.WriteFile(filepath.Join(chats, "session-2026-10-02T10-00-handgem1.jsonl"), b, 0o600)
	b, _ = os.ReadFile("testdata/gemini/subagent.jsonl")
	os.WriteFile(filepath.Join(chats, "hand-gemini-1", "hand-gemini-sub.jsonl"), b, 0o600)
	return root
}

// hasReal reports whether the real fixtures are there; when they are
// not, it says so (failing under CI) and the test goes on with its
// hand-made cases.
func hasReal(t *testing.T, what string) bool {
	t.Helper()
	if _, ok := realfixtures.Find(); ok {
		return true
	}
	realfixtures.Absent(t, what)
	return false
}

// newHarnessRoots are the roots of the harnesses without an omp importer
// (opencode's only with the real fixtures: its schema is the real
// database's).
func newHarnessRoots(t *testing.T) map[string]string {
	roots := map[string]string{HarnessCopilot: copilotRoot(t), HarnessGemini: geminiRoot(t), HarnessQwen: qwenRoot(t),
		HarnessContinue: continueRoot(t), HarnessKimi: kimiRoot(t),
		HarnessCline: clineRoot(t), HarnessCrush: crushRoot(t), HarnessGoose: gooseRoot(t, true)}
	roots[HarnessAider], _ = aiderProjects(t)
	if hasReal(t, "the real opencode database") {
		roots[HarnessOpencode] = opencodeRootWithStorage(t)
	}
	return roots
}

// sourceMessages counts the messages a conversion of s must give: for
// Copilot every user message, assistant message with something in it and
// tool result; for Gemini every user and gemini message (after replay)
// and every tool call's result.
func sourceMessages(t *testing.T, s Session) int {
	t.Helper()
	n := 0
	switch s.Harness {
	case HarnessCopilot:
		eachRecord(s.Path, func(r record) error {
			d := r.v.Get("data")
			switch typ, _ := r.v.Get("type").Text(); typ {
			case "user.message", "tool.execution_complete":
				n++
			case "assistant.message":
				if t, _ := d.Get("content").Text(); t != "" || len(d.Get("toolRequests").Items()) > 0 || d.Get("reasoningText").Truthy() {
					n++
				}
			}
			return nil
		})
	case HarnessOpencode:
		n = opencodeMessages(t, s)
	case HarnessQwen:
		n = qwenMessages(t, s.Path)
	case HarnessContinue:
		n = continueMessages(t, s.Path)
	case HarnessKimi:
		n = kimiMessages(t, s.Path)
	case HarnessCline:
		n = clineMessages(t, s.Path)
	case HarnessCrush:
		n = crushMessages(t, s)
	case HarnessGoose:
		n = gooseMessages(t, s)
	case HarnessAider:
		n = aiderMessages(t, s)
	case HarnessGemini:
		_, msgs, _, err := readGemini(s.Path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			switch {
			case m.v.Get("type").Is("user"):
				n++
			case m.v.Get("type").Is("gemini"):
				n += 1 + len(m.v.Get("toolCalls").Items())
			}
		}
	}
	return n
}

// TestCopilotGeminiList: every real session lists from its head, with its
// id, first message, time and (Copilot) cwd and title; the hand-made
// ones too, a Gemini subagent's chat only with subagents and with its
// parent; listing the real folders in place changes no byte of them.
func TestCopilotGeminiList(t *testing.T) {
	type listCase struct {
		harness, root string
		want          int
	}
	// The hand-made sessions, and the real ones beside them.
	cases := []listCase{{HarnessCopilot, copilotRoot(t), 1}, {HarnessGemini, geminiRoot(t), 1}}
	var before map[string]string
	if hasReal(t, "real Copilot CLI and Gemini CLI sessions") {
		before = treeBytes(t, filepath.Dir(realCopilot))
		cases = []listCase{
			{HarnessCopilot, cases[0].root, 7},
			{HarnessGemini, cases[1].root, 6},
			{HarnessCopilot, realCopilot, 6}, // in place
			{HarnessGemini, realGemini, 5},
		}
	}
	for _, c := range cases {
		src, _ := NewSource(c.harness, c.root)
		list, err := src.List(false)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != c.want {
			t.Errorf("%s at %s: %d sessions, want %d", c.harness, c.root, len(list), c.want)
		}
		for _, s := range list {
			if s.Err != nil || s.ID == "" || s.FirstMessage == "" || s.Created.IsZero() || s.Subagent {
				t.Errorf("%s: %+v", s.Path, s)
			}
			if c.harness == HarnessCopilot && s.Cwd == "" {
				t.Errorf("%s: no cwd", s.Path)
			}
			if at, err := src.At(s.Path); err != nil || at.ID != s.ID {
				t.Errorf("At(%s) = %+v, %v", s.Path, at, err)
			}
			if h, err := Detect(s.Path); err != nil || h != c.harness {
				t.Errorf("Detect(%s) = %q, %v", s.Path, h, err)
			}
		}
		if c.harness == HarnessGemini && strings.HasSuffix(c.root, ".gemini") {
			all, _ := src.List(true)
			var sub *Session
			for i := range all {
				if all[i].Subagent {
					sub = &all[i]
				}
			}
			if len(all) != c.want+1 || sub == nil || sub.ParentSession != "hand-gemini-1" || sub.ID != "hand-gemini-sub" {
				t.Errorf("with subagents: %d sessions, subagent %+v", len(all), sub)
			}
		}
	}
	if before == nil {
		return
	}
	if after := treeBytes(t, filepath.Dir(realCopilot)); !maps2Equal(before, after) {
		t.Error("listing changed the real fixtures")
	}
}

// TestCopilotGeminiConvert: every session converts into a branch of one
// message entry for each message of the source (tool calls paired with
// their results by id), the torn line counted, encrypted reasoning
// counted; the Gemini log's rewind, upsert and $set are replayed.
func TestCopilotGeminiConvert(t *testing.T) {
	for harness, root := range newHarnessRoots(t) {
		src := testSource(t, harness, root)
		list, _ := src.List(true)
		for _, s := range list {
			c, err := convertAll(src.Stream(s, ForResume))
			if err != nil {
				t.Fatalf("%s: %v", s.Path, err)
			}
			msgs, calls, results := 0, map[string]bool{}, map[string]bool{}
			for _, e := range c.Entries {
				v, err := jsonx.Parse(e)
				if err != nil {
					t.Fatalf("%s: entry not JSON: %s", s.Path, e)
				}
				if v.Get("type").Is("compaction") {
					msgs = 1 // omp's context: the summary, then what follows
					continue
				}
				if !v.Get("type").Is("message") {
					continue
				}
				msgs++
				m := v.Get("message")
				for _, b := range m.Get("content").Items() {
					if b.Get("type").Is("toolCall") {
						id, _ := b.Get("id").Text()
						calls[id] = true
					}
				}
				if m.Get("role").Is("toolResult") {
					id, _ := m.Get("toolCallId").Text()
					results[id] = true
				}
			}
			if want := sourceMessages(t, s); msgs != want {
				t.Errorf("%s: %d messages, the source has %d", s.Path, msgs, want)
			}
			for id := range results {
				if !calls[id] {
					t.Errorf("%s: a result of %s, which no message calls", s.Path, id)
				}
			}
			switch filepath.Base(filepath.Dir(s.Path)) + "/" + filepath.Base(s.Path) {
			case "hand-copilot-torn/events.jsonl":
				if c.Skipped != 1 || c.EncryptedReasoning != 1 || c.Cwd != "/work/torn" {
					t.Errorf("torn: skipped %d, encrypted %d, cwd %q", c.Skipped, c.EncryptedReasoning, c.Cwd)
				}
			case "chats/session-2026-10-02T10-00-handgem1.jsonl":
				var texts []string
				for _, e := range c.Entries {
					v, _ := jsonx.Parse(e)
					texts = append(texts, string(v.Get("message").Get("content").JSON()))
				}
				all := strings.Join(texts, "\n")
				if strings.Contains(all, "rewound") || !strings.Contains(all, "after the rewind") ||
					!strings.Contains(all, "Reading it.") || c.Title != "Parser questions" || c.Skipped != 1 || c.Cwd != "/work/handmade" {
					t.Errorf("handmade gemini: title %q, skipped %d, cwd %q, entries:\n%s", c.Title, c.Skipped, c.Cwd, all)
				}
			}
		}
	}
}

// TestCopilotGeminiImportResumes: every session imported (a Gemini chat
// that names no directory into the one --cwd gives) is one real omp
// resumes, with every message the source holds, and xdev reads the same
// messages from it. No omp importer exists for these harnesses: omp's
// resume of the import is the check.
func TestCopilotGeminiImportResumes(t *testing.T) {
	dataDir := t.TempDir()
	var files []string
	want, from := map[string]int{}, map[string]string{}
	for harness, root := range newHarnessRoots(t) {
		src := testSource(t, harness, root)
		list, _ := src.List(true)
		for _, s := range list {
			path, _, err := ImportStream(dataDir, s.Provenance(), withFallbackCwd(src.Stream(s, ForResume)))
			if err != nil {
				t.Fatalf("%s: %v", s.Path, err)
			}
			files = append(files, path)
			want[path] = sourceMessages(t, s)
			from[path] = s.Path
		}
	}
	views, err := jsonx.Parse(omptest.Run(t, t.TempDir(), "context.ts", files...))
	if err != nil {
		t.Fatal(err)
	}
	if len(views.Items()) != len(files) {
		t.Fatalf("omp read %d of %d imports", len(views.Items()), len(files))
	}
	for _, v := range views.Items() {
		f, _ := v.Get("file").Text()
		if e := v.Get("error"); e.Defined() {
			t.Fatalf("omp cannot resume the import %s: %s", f, e.JSON())
		}
		omp := v.Get("messages").Items()
		if len(omp) != want[f] {
			t.Errorf("%s (of %s): omp resumes %d messages, the source holds %d", filepath.Base(f), from[f], len(omp), want[f])
		}
		s, err := session.Open(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx := s.BuildContext()
		s.Close()
		var roles, ompRoles []string
		for _, m := range ctx.Messages {
			roles = append(roles, string(m.Role))
		}
		for _, m := range omp {
			r, _ := m.Get("role").Text()
			ompRoles = append(ompRoles, r)
		}
		if !slices.Equal(roles, ompRoles) {
			t.Errorf("%s: xdev reads %v, omp %v", filepath.Base(f), roles, ompRoles)
		}
	}
}

// TestCopilotGeminiFixturesRead: every session exports as Markdown and
// HTML and is found by search, through a mirror, by a word of its own
// (checkFixturesRead, as for Claude Code and Codex).
func TestCopilotGeminiFixturesRead(t *testing.T) {
	checkFixturesRead(t, newHarnessRoots(t))
}

// TestCopilotGeminiBadInput: a Gemini document cut in half, a log that is
// not a Copilot one, and an empty file fail with an error naming the
// file; nothing is written beside them.
func TestCopilotGeminiBadInput(t *testing.T) {
	dir := t.TempDir()
	// A real chat when there is one, else one of its shape.
	doc := []byte(`{"sessionId":"0b23371a-hand","projectHash":"2d33ff91","startTime":"2025-10-21T20:04:00.000Z",` +
		`"lastUpdated":"2025-10-21T20:09:00.000Z","messages":[{"id":"m1","timestamp":"2025-10-21T20:04:01.000Z",` +
		`"type":"user","content":"Build a pomodoro timer in one HTML file, with a start and a reset button"},` +
		`{"id":"m2","timestamp":"2025-10-21T20:04:09.000Z","type":"gemini","content":"I will write the file now."}]}` + "\n")
	if hasReal(t, "real Gemini CLI chats") {
		var err error
		doc, err = os.ReadFile(filepath.Join(realGemini, "tmp/2d33ff9193c39ffa4b8352af23f3b106d1ceaff756665e12408cb64657965d22/chats/session-2025-10-21T20-04-0b23371a.json"))
		if err != nil {
			t.Fatal(err)
		}
	}
	cut := filepath.Join(dir, "session-cut.json")
	os.WriteFile(cut, doc[:len(doc)/2], 0o600)
	notCopilot := filepath.Join(dir, "events.jsonl")
	os.WriteFile(notCopilot, []byte(`{"hello":"world"}`+"\n"), 0o600)
	empty := filepath.Join(dir, "session-empty.jsonl")
	os.WriteFile(empty, nil, 0o600)
	before := treeBytes(t, dir)
	for _, c := range []struct {
		err  error
		name string
	}{
		{StreamGemini(cut, ForReading, func(*Converted) error { return nil }, func(string, []byte) error { return nil }), cut},
		{StreamGemini(empty, ForReading, func(*Converted) error { return nil }, func(string, []byte) error { return nil }), empty},
		{copilotAt(notCopilot).Err, notCopilot},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.name) {
			t.Errorf("%s: error %v, want one naming the file", c.name, c.err)
		}
	}
	if s := geminiAt(cut, false); s.Err != nil || s.ID == "" {
		t.Errorf("a cut chat still lists from its head: %+v", s)
	}
	if !maps2Equal(before, treeBytes(t, dir)) {
		t.Error("reading changed the files")
	}
}

// FuzzGemini: any chat, as a document or a log, converts or fails with an
// error, never a panic, and every entry is JSON.
func FuzzGemini(f *testing.F) {
	for _, name := range []string{"handmade.jsonl", "subagent.jsonl"} {
		if data, err := os.ReadFile("testdata/gemini/" + name); err == nil {
			f.Add(data, true)
		}
	}
	f.Add([]byte(`{"sessionId":"s","projectHash":"h","messages":[{"id":"a","type":"gemini","toolCalls":[{"result":[{}]}]}]}`), false)
	f.Add([]byte(`{"sessionId":"s"}`+"\n"+`{"$rewindTo":"zz"}`+"\n"+`{"$set":{"messages":7}}`), true)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, log bool) {
		path := filepath.Join(dir, "session-x.json")
		if log {
			path += "l"
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		geminiAt(path, false)
		checkConversion(t, StreamGemini(path, ForReading, func(*Converted) error { return nil }, validEntry(t)))
	})
}

// FuzzCopilot: any event log lists and converts or fails with an error,
// never a panic, and every entry is JSON.
func FuzzCopilot(f *testing.F) {
	if data, err := os.ReadFile("testdata/copilot/torn.jsonl"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"type":"session.start","id":"x","data":{}}` + "\n" + `{"type":"tool.execution_complete","id":"y","data":{"toolCallId":"c","success":1}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, copilotEvents)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		copilotAt(path)
		checkConversion(t, StreamCopilot(path, "", ForReading, func(*Converted) error { return nil }, validEntry(t)))
	})
}

func validEntry(t *testing.T) func(string, []byte) error {
	return func(id string, e []byte) error {
		if !jsonx.Valid(e) {
			t.Fatalf("entry %s is not JSON: %s", id, e)
		}
		return nil
	}
}

func checkConversion(t *testing.T, err error) {
	if err != nil && err.Error() == "" {
		t.Fatal("an error that says nothing")
	}
}

// treeBytes is every regular file under dir with its bytes.
func treeBytes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			if d.Type().IsRegular() {
				b, _ := os.ReadFile(p)
				out[p] = string(b)
			} else {
				out[p] = d.Type().String()
			}
		}
		return nil
	})
	return out
}

func maps2Equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestGeminiProject: a chat is of the project whose path hashes to its
// directory's name, as Gemini CLI files them, a subagent's too.
func TestGeminiProject(t *testing.T) {
	cwd := "/work/some project"
	sum := sha256.Sum256([]byte(cwd))
	dir := filepath.Join("/home/u/.gemini/tmp", hex.EncodeToString(sum[:]), "chats")
	cases := []struct {
		s    Session
		want bool
	}{
		{Session{Harness: HarnessGemini, Path: filepath.Join(dir, "session-x.json")}, true},
		{Session{Harness: HarnessGemini, Path: filepath.Join(dir, "parent", "sub.jsonl"), Subagent: true}, true},
		{Session{Harness: HarnessGemini, Path: "/home/u/.gemini/tmp/0000/chats/session-x.json"}, false},
		{Session{Harness: HarnessCopilot, Path: filepath.Join(dir, "session-x.json")}, false},
	}
	for _, c := range cases {
		if got := GeminiProject(c.s, cwd); got != c.want {
			t.Errorf("GeminiProject(%s) = %v, want %v", c.s.Path, got, c.want)
		}
	}
}

// testSource is the source of harness's sessions under root; a harness
// that keeps them in the projects (ProjectReader) reads every directory
// of root as one.
func testSource(t *testing.T, harness, root string) Source {
	t.Helper()
	src, err := NewSource(harness, root)
	if err != nil {
		t.Fatal(err)
	}
	if pr, ok := src.(ProjectReader); ok && harness == HarnessAider {
		ents, _ := os.ReadDir(root)
		var dirs []string
		for _, e := range ents {
			dirs = append(dirs, filepath.Join(root, e.Name()))
		}
		src = pr.WithProjects(func() []string { return dirs })
	}
	return src
}
