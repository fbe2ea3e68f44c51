package session

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFailedWritesChangeNothing: every write the store offers, on files of
// every shape xdev may be handed, either succeeds or leaves the file byte
// for byte as it was, and its directory with no file more or less (no
// temp file, no lockfile). The files are generated: a valid session, then
// one of the variations below (CRLF line endings, slots of other widths,
// old and newer versions, a torn tail, malformed lines, a lock held by a
// live process); the writes include ones that must fail (a missing
// parent, a batch whose k-th object is bad, an id already used).
func TestFailedWritesChangeNothing(t *testing.T) {
	variants := []struct {
		name string
		edit func(t *testing.T, path string)
	}{
		{"plain", func(*testing.T, string) {}},
		{"crlf", func(t *testing.T, p string) {
			rewrite(t, p, func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) })
		}},
		{"crlf-slot-only", func(t *testing.T, p string) {
			rewrite(t, p, func(b []byte) []byte {
				return append(append(bytes.Clone(b[:TitleSlotWidth-1]), "\r\n"...), b[TitleSlotWidth:]...)
			})
		}},
		{"short-slot", func(t *testing.T, p string) {
			rewrite(t, p, func(b []byte) []byte { return append(bytes.Clone(b[:TitleSlotWidth-11]), b[TitleSlotWidth-1:]...) })
		}},
		{"long-slot", func(t *testing.T, p string) {
			rewrite(t, p, func(b []byte) []byte {
				return append(append(bytes.Clone(b[:TitleSlotWidth-3]), strings.Repeat(" ", 40)...), b[TitleSlotWidth-3:]...)
			})
		}},
		{"no-slot", func(t *testing.T, p string) {
			rewrite(t, p, func(b []byte) []byte { return bytes.Clone(b[TitleSlotWidth:]) })
		}},
		{"v2", func(t *testing.T, p string) {
			rewrite(t, p, func(b []byte) []byte { return bytes.Replace(b, []byte(`"version":3`), []byte(`"version":2`), 1) })
		}},
		{"v99", func(t *testing.T, p string) {
			rewrite(t, p, func(b []byte) []byte { return bytes.Replace(b, []byte(`"version":3`), []byte(`"version":99`), 1) })
		}},
		{"torn-tail", func(t *testing.T, p string) { appendRaw(t, p, `{"type":"message","id":"torn`) }},
		{"malformed", func(t *testing.T, p string) { appendRaw(t, p, "garbage\n{\"type\":\"x\"}\n") }},
		{"locked", func(t *testing.T, p string) {
			// A live process (this one, as another program would) holds omp's lock.
			if err := os.WriteFile(lockPath(p), fmt.Appendf(nil, "%d:%d\n", os.Getpid(), time.Now().UnixMilli()), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	ops := []struct {
		name string
		do   func(s *Store, r *rand.Rand) error
	}{
		{"append", func(s *Store, _ *rand.Rand) error { _, err := s.AppendMessage(user("hi")); return err }},
		{"append-at-missing", func(s *Store, _ *rand.Rand) error {
			_, err := s.AppendAt("nothere1", &Label{TargetID: "x"})
			return err
		}},
		{"branch-missing", func(s *Store, _ *rand.Rand) error { _, err := s.Branch("nothere1"); return err }},
		{"branch", func(s *Store, _ *rand.Rand) error {
			es := s.Entries()
			if len(es) == 0 {
				return nil
			}
			_, err := s.Branch(es[0].ID)
			return err
		}},
		{"retitle", func(s *Store, _ *rand.Rand) error { _, err := s.SetTitle("A new title", TitleManual); return err }},
		{"retitle-auto", func(s *Store, _ *rand.Rand) error { _, err := s.SetTitle("Auto", TitleAuto); return err }},
		{"json-batch", func(s *Store, r *rand.Rand) error {
			good := `{"type":"message","message":{"role":"user","content":"x","timestamp":1}}`
			bad := []string{`{"type":"message","message":{"content":"no role"}}`, `not json`, `{"type":"session"}`,
				`{"type":"label","parentId":"nothere1","targetId":"a"}`, `{"type":"label","id":"dup00001"}`, `{"type":"label","timestamp":"yesterday"}`}
			objs := make([][]byte, 1+r.IntN(4))
			for i := range objs {
				objs[i] = []byte(good)
			}
			if r.IntN(4) > 0 {
				objs[r.IntN(len(objs))] = []byte(bad[r.IntN(len(bad))])
				if r.IntN(3) == 0 {
					objs = append(objs, []byte(`{"type":"label","id":"dup00001"}`), []byte(`{"type":"label","id":"dup00001"}`))
				}
			}
			_, err := s.AppendJSONLines(objs)
			return err
		}},
	}
	r := rand.New(rand.NewPCG(3, 4))
	failures, runs := 0, 0
	for _, v := range variants {
		for _, op := range ops {
			for k := range 3 {
				t.Run(fmt.Sprintf("%s/%s/%d", v.name, op.name, k), func(t *testing.T) {
					s, path := newSession(t)
					mustE(t)(s.AppendMessage(user("one")))
					mustE(t)(s.AppendMessage(user("two")))
					mustOK(t)(s.SetTitle("Old title", TitleManual))
					s.Close()
					v.edit(t, path)
					dir := filepath.Dir(path)
					before, names := fileSum(t, path), dirNames(t, dir)
					st, err := Open(path, &OpenOptions{Lock: LockOptions{Timeout: 50 * time.Millisecond}})
					if err != nil {
						return // a file Open refuses is never written
					}
					defer st.Close()
					runs++
					if err := op.do(st, r); err != nil {
						failures++
						st.Close()
						unchanged(t, path, before)
						if got := dirNames(t, dir); !slices.Equal(got, names) {
							t.Errorf("after a failed %s the directory holds %v, before %v", op.name, got, names)
						}
					}
				})
			}
		}
	}
	if failures < 50 {
		t.Errorf("only %d writes failed: the cases do not test failure", failures)
	}
	t.Logf("%d of %d writes failed, each leaving the file and its directory as they were", failures, runs)
}

func rewrite(t *testing.T, path string, edit func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, edit(b), 0o600); err != nil {
		t.Fatal(err)
	}
}

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// dirNames lists dir, leaving out a lockfile this test planted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}
