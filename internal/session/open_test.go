package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/ai"
)

// TestRealV1Sessions loads the two real pi sessions (format v1: no ids,
// compactions by index) and checks what they rebuild to. omp rebuilds the
// same messages (checked by the interop suite).
func TestRealV1Sessions(t *testing.T) {
	tests := []struct {
		file                       string
		entries                    int // in the file
		retained                   int // kept by the windowed Open
		messages                   int // in the context
		compactions                int
		firstRole, model, thinking string
	}{
		{"pi-v1-before-compaction.jsonl", 1002, 0, 439, 2, "compactionSummary", "anthropic/claude-opus-4-5", "off"},
		{"pi-v1-large-session.jsonl", 1018, 1018, 892, 0, "user", "anthropic/claude-sonnet-4-5", "off"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := realFixture(t, tt.file)
			sum := fileSum(t, path)
			s, err := Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if s.Version() != 1 {
				t.Errorf("version = %d, want 1", s.Version())
			}
			st := s.WindowStats()
			if st.Seen != tt.entries {
				t.Errorf("seen %d entries, want %d", st.Seen, tt.entries)
			}
			if s.Malformed() != 0 {
				t.Errorf("malformed = %d: %v", s.Malformed(), s.BadLines())
			}
			ctx := s.BuildContext()
			if len(ctx.Messages) != tt.messages {
				t.Errorf("context has %d messages, want %d", len(ctx.Messages), tt.messages)
			}
			if got := ctx.Messages[0].Role; string(got) != tt.firstRole {
				t.Errorf("first message is %s, want %s", got, tt.firstRole)
			}
			if ctx.Model() != tt.model || ctx.ThinkingLevel != tt.thinking {
				t.Errorf("model %q thinking %q, want %q %q", ctx.Model(), ctx.ThinkingLevel, tt.model, tt.thinking)
			}
			compactions := 0
			for _, e := range s.Entries() {
				if e.Type == TypeCompaction {
					compactions++
				}
			}
			full, err := Open(path, &OpenOptions{Full: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range full.Entries() {
				if e.Type == TypeCompaction {
					compactions++
				}
			}
			if compactions < tt.compactions {
				t.Errorf("saw %d compactions, want %d", compactions, tt.compactions)
			}
			assertSameContext(t, s.BuildContext(), full.BuildContext())
			if tt.compactions > 0 && !st.Engaged {
				t.Errorf("windowing did not engage on a compacted file: %+v", st)
			}
			// Appending to a v1 file would mix formats: refused, file untouched.
			if _, err := s.Append(&Label{TargetID: ctx.LeafID, Label: "x"}); !errors.Is(err, ErrOldVersion) {
				t.Errorf("append to v1 file: err = %v, want ErrOldVersion", err)
			}
			unchanged(t, path, sum)
		})
	}
}

func assertSameContext(t *testing.T, got, want Context) {
	t.Helper()
	if got.LeafID != want.LeafID || got.Model() != want.Model() || got.ThinkingLevel != want.ThinkingLevel || len(got.Messages) != len(want.Messages) {
		t.Fatalf("windowed context differs: leaf %s/%s model %s/%s thinking %s/%s messages %d/%d",
			got.LeafID, want.LeafID, got.Model(), want.Model(), got.ThinkingLevel, want.ThinkingLevel, len(got.Messages), len(want.Messages))
	}
	for i := range got.Messages {
		a, _ := got.Messages[i].MarshalJSON()
		b, _ := want.Messages[i].MarshalJSON()
		if string(a) != string(b) {
			t.Fatalf("message %d differs:\n%s\n%s", i, a, b)
		}
	}
}

const testHeader = `{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}` + "\n"

func testUser(id, parent, text string) string {
	p := "null"
	if parent != "" {
		p = `"` + parent + `"`
	}
	return `{"type":"message","id":"` + id + `","parentId":` + p + `,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"` + text + `","timestamp":1}}` + "\n"
}

// TestBadInput: every kind of damage loads (skipping and counting what it
// must) or fails with an error naming the file and line; never a panic,
// never a changed file.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name      string
		content   string
		err       string // substring of the error, "" for success
		messages  int
		malformed int
		torn      bool
	}{
		{"null line", testHeader + "null\n" + testUser("00000001", "", "hi"), "", 1, 1, false},
		{"no trailing newline", testHeader + testUser("00000001", "", "a") + strings.TrimSuffix(testUser("00000002", "00000001", "b"), "\n"), "", 2, 0, true},
		{"torn last line", testHeader + testUser("00000001", "", "a") + `{"type":"message","id":"0000`, "", 1, 1, true},
		{"invalid utf-8", testHeader + testUser("00000001", "", "bad \xff\xfe bytes"), "", 1, 0, false},
		{"NUL bytes", testHeader + "\x00\x00\x00\n" + testUser("00000001", "", "ok"), "", 1, 1, false},
		{"array and number lines are entries, as omp reads them", testHeader + "[1,2]\n7\n" + testUser("00000001", "", "ok"), "", 1, 0, false},
		{"deep nesting", testHeader + strings.Repeat("[", 100000) + "\n" + testUser("00000001", "", "ok"), "", 1, 1, false},
		{"crlf", strings.ReplaceAll(testHeader+testUser("00000001", "", "ok"), "\n", "\r\n"), "", 1, 0, false},
		{"version 99 loads as is", strings.Replace(testHeader, `"version":3`, `"version":99`, 1) + testUser("00000001", "", "ok"), "", 1, 0, false},
		{"empty file", "", "no session header", 0, 0, false},
		{"slot only", string(mustSlot(t)), "no session header", 0, 0, false},
		// omp's JSONL reader skips what is not JSON before the header too.
		{"garbage first line", "hello\n" + testHeader, "", 0, 1, false},
		{"garbage only", "hello\n", "line 1: no session header (not valid JSON", 0, 0, false},
		{"entry first", testUser("00000001", "", "x") + testHeader, "line 1: no session header", 0, 0, false},
		// A slot omp refuses is still a slot: the session loads without its
		// title source (verify reports it).
		{"rejected slot source", `{"type":"title","v":1,"title":"x","source":null,"updatedAt":"t","pad":""}` + "\n" + testHeader, "", 0, 0, false},
		{"header without id", `{"type":"session","version":3}` + "\n", "line 1: no session header", 0, 0, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, dir, "case"+string(rune('a'+i))+".jsonl", tt.content)
			sum := fileSum(t, path)
			defer unchanged(t, path, sum)
			s, err := Open(path, nil)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), path) {
					t.Fatalf("err = %v, want one naming %s and saying %q", err, path, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := len(s.BuildContext().Messages); got != tt.messages {
				t.Errorf("messages = %d, want %d", got, tt.messages)
			}
			if s.Malformed() != tt.malformed {
				t.Errorf("malformed = %d, want %d: %v", s.Malformed(), tt.malformed, s.BadLines())
			}
			if s.TornTail() != tt.torn {
				t.Errorf("torn tail = %v, want %v", s.TornTail(), tt.torn)
			}
		})
	}
}

func mustSlot(t *testing.T) []byte {
	slot, err := MarshalTitleSlot("", TitleNone, "2026-01-01T00:00:00.000Z")
	if err != nil {
		t.Fatal(err)
	}
	return slot
}

// TestHugeLine: a single 100 MB line is skipped and counted, without being
// held in memory whole; the entries around it load.
func TestHugeLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100 MB")
	}
	path := filepath.Join(t.TempDir(), "huge.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(testHeader + testUser("00000001", "", "before"))
	f.WriteString(`{"type":"message","id":"00000002","parentId":"00000001","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"`)
	chunk := strings.Repeat("x", 1<<20)
	for range 100 {
		f.WriteString(chunk)
	}
	f.WriteString(`","timestamp":1}}` + "\n" + testUser("00000003", "00000001", "after"))
	f.Close()
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Malformed() != 1 || !strings.Contains(s.BadLines()[0].Reason, "longer than") || s.BadLines()[0].Line != 3 {
		t.Errorf("malformed = %d %v", s.Malformed(), s.BadLines())
	}
	if got := s.BuildContext().Messages; len(got) != 2 || got[1].Text() != "after" {
		t.Errorf("context = %v", got)
	}
	// With a larger limit the line loads.
	s, err = Open(path, &OpenOptions{MaxLineBytes: 128 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if s.Malformed() != 0 {
		t.Errorf("malformed = %d with a 128 MiB limit", s.Malformed())
	}
}

// TestUnknownEntriesPreserved: a type from a newer harness is a node of the
// tree, walked through, and its bytes are kept exactly.
func TestUnknownEntriesPreserved(t *testing.T) {
	odd := `{"type":"xdev_checkpoint","id":"00000002","parentId":"00000001","timestamp":"2026-01-01T00:00:01.000Z","n":12345678901234567890,"s":"\u003c\u2028"}`
	path := writeFile(t, t.TempDir(), "u.jsonl", testHeader+testUser("00000001", "", "a")+odd+"\n"+testUser("00000003", "00000002", "b"))
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := s.Entry("00000002")
	if !ok || e.Body != nil || string(e.Raw()) != odd {
		t.Fatalf("unknown entry = %+v", e)
	}
	if n := len(s.BuildContext().Messages); n != 2 {
		t.Errorf("context walked through unknown entry: %d messages, want 2", n)
	}
}

// TestV2HookMessage: format v2's hookMessage role loads as custom.
func TestV2HookMessage(t *testing.T) {
	h := strings.Replace(testHeader, `"version":3`, `"version":2`, 1)
	line := `{"type":"message","id":"00000001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"hookMessage","customType":"x","content":"hi","display":true,"timestamp":1}}` + "\n"
	path := writeFile(t, t.TempDir(), "v2.jsonl", h+line)
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs := s.BuildContext().Messages
	if len(msgs) != 1 || msgs[0].Role != ai.RoleCustom || !strings.Contains(string(msgs[0].Raw()), `"role":"custom"`) {
		t.Errorf("messages = %+v", msgs)
	}
}
