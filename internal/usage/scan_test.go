package usage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/realfixtures"
	"github.com/xdev/xdev/internal/session"
)

// readEveryEntry is ReadSession as it was before it scanned: the file
// indexed, then every entry decoded whole and asked whether it is a call
// or an import. The one-pass read must agree with it on every file.
func readEveryEntry(t *testing.T, path string) (Session, error) {
	t.Helper()
	x, err := session.OpenIndex(path, nil)
	if err != nil {
		return Session{}, err
	}
	defer x.Close()
	h := x.Header()
	title, _ := x.Title()
	s := Session{Path: path, ID: h.ID, Parent: h.ParentSession, Project: h.Cwd, Title: title, Skipped: x.Malformed()}
	var responses []string
	for i := range x.Len() {
		raw, err := x.AppendRaw(nil, i)
		if err != nil {
			t.Fatal(err)
		}
		v, err := jsonx.Parse(raw)
		if err != nil {
			s.Skipped++
			continue
		}
		if c, ok := callOf(v); ok {
			s.Calls = append(s.Calls, c)
			id, _ := v.Get("message").Get("responseId").Text()
			responses = append(responses, id)
			continue
		}
		if v.Get("type").Is(session.TypeCustom) && v.Get("customType").Is(ForeignImport) {
			harness, _ := v.Get("data").Get("source").Text()
			id, _ := v.Get("data").Get("sourceId").Text()
			if harness != "" && id != "" {
				s.ImportOf = &Origin{Harness: harness, ID: id}
				for k := range s.Calls {
					s.Calls[k].Imported = true
				}
			}
		}
	}
	for k, c := range s.Calls {
		if responses[k] != "" {
			s.Calls[k].Request = ResponseKey(c.Model.Provider(), responses[k])
		}
	}
	return s, nil
}

// spoil changes a session file's lines at random in the ways that could
// part a reader that decides by a line's envelope from one that decodes
// it: the type and the role spelled with escapes, a role given twice
// (JSON.parse keeps the last), junk after an entry, a torn or junk line,
// a message's usage moved into a user's message, a last line without its
// newline.
func spoil(rng *rand.Rand, data []byte) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	for k := 2; k < len(lines); k++ {
		l := lines[k]
		switch rng.IntN(24) {
		case 0:
			l = bytes.Replace(l, []byte(`"type":"message"`), []byte(`"type":"mess\u0061ge"`), 1)
		case 1:
			l = bytes.Replace(l, []byte(`"role":"assistant"`), []byte(`"role":"\u0061ssistant"`), 1)
		case 2:
			l = bytes.Replace(l, []byte(`"role":"assistant"`), []byte(`"role":"assistant","role":"user"`), 1)
		case 3:
			l = bytes.Replace(l, []byte(`"role":"user"`), []byte(`"role":"user","role":"assistant","usage":{"input":5,"output":1},"model":"m","provider":"p","api":"a"`), 1)
		case 4:
			l = bytes.Replace(l, []byte("}\n"), []byte("} junk\n"), 1)
		case 5:
			l = l[:rng.IntN(len(l)+1)]
			if len(l) > 0 {
				l = append(l, '\n')
			}
		case 6:
			l = []byte("not json \"usage\"\n")
		case 7:
			l = bytes.Replace(l, []byte(`"type":"message"`), []byte(`"type":"model_usage"`), 1)
		}
		lines[k] = l
	}
	out := bytes.Join(lines, nil)
	if rng.IntN(3) == 0 {
		out = bytes.TrimSuffix(out, []byte("\n"))
	}
	return out
}

// TestReadSessionScansAsIndex: ReadSession, one pass that decodes only
// what may be a call or an import, reads what decoding every entry reads,
// on the hand-made sessions of every entry type and shape, the real pi
// sessions, generated sessions, and each of those spoiled at random.
func TestReadSessionScansAsIndex(t *testing.T) {
	var files []string
	for _, glob := range []string{"../session/testdata/context/*.jsonl", "testdata/*.jsonl"} {
		m, _ := filepath.Glob(glob)
		files = append(files, m...)
	}
	if dir, ok := realfixtures.Find(); ok {
		m, _ := filepath.Glob(filepath.Join(dir, "pi-*.jsonl"))
		files = append(files, m...)
	} else {
		realfixtures.Absent(t, "pi sessions")
	}
	tmp := t.TempDir()
	for seed := range uint64(4) {
		path := filepath.Join(tmp, fmt.Sprintf("corpus-%d.jsonl", seed))
		if _, err := corpus.WriteFile(path, corpus.Options{Size: 200 << 10, Seed: seed, SmallOutputs: true}); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(name, path string) {
		t.Helper()
		got, gerr := ReadSession(path)
		want, werr := readEveryEntry(t, path)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%s: ReadSession error %v, decoding every entry %v", name, gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: ReadSession\n%+v\ndecoding every entry\n%+v", name, got, want)
		}
	}
	for _, path := range files {
		check(path, path)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for round := range 25 {
			spoiled := filepath.Join(tmp, "spoiled.jsonl")
			if err := os.WriteFile(spoiled, spoil(rng, data), 0o600); err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("%s, spoiled (round %d)", path, round), spoiled)
		}
	}
}
