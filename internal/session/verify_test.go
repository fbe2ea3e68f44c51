package session

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func kinds(ps []Problem) []ProblemKind {
	var k []ProblemKind
	for _, p := range ps {
		k = append(k, p.Kind)
	}
	return k
}

func TestVerify(t *testing.T) {
	dir := t.TempDir()
	slot := func(src string) string {
		b, _ := MarshalTitleSlot("T", TitleAuto, "2026-01-01T00:00:00.000Z")
		out := strings.Replace(string(b), `"source":"auto"`, src, 1)
		// Keep the width: take the difference out of the pad, or add it.
		if d := len(out) - len(b); d > 0 {
			out = strings.Replace(out, strings.Repeat(" ", d)+`"}`, `"}`, 1)
		} else if d < 0 {
			out = strings.Replace(out, `"}`, strings.Repeat(" ", -d)+`"}`, 1)
		}
		return out
	}
	user := func(id, parent string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"type":"message","id":"` + id + `","parentId":` + p + `,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1}}` + "\n"
	}
	cases := []struct {
		name, content string
		want          []ProblemKind
	}{
		{"clean", slot(`"source":"auto"`) + testHeader + user("a1", "") + user("a2", "a1"), nil},
		{"not-a-session", "hello\n", []ProblemKind{ProblemNoHeader}},
		{"slot-manual", slot(`"source":"manual"`) + testHeader + user("a1", ""), []ProblemKind{ProblemSlotRejected}},
		{"slot-null", slot(`"source":null`) + testHeader + user("a1", ""), []ProblemKind{ProblemSlotRejected}},
		{"slot-narrow", `{"type":"title","v":1,"title":"x","source":"auto","updatedAt":"2026-01-01T00:00:00.000Z","pad":""}` + "\n" + testHeader + user("a1", ""), []ProblemKind{ProblemSlotWidth}},
		{"v1", `{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}` + "\n" + `{"type":"message","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1}}` + "\n", []ProblemKind{ProblemOldVersion}},
		{"torn", testHeader + user("a1", "") + `{"type":"message","id":"a2"`, []ProblemKind{ProblemMalformed, ProblemTornTail}},
		{"garbage", testHeader + user("a1", "") + "not json\n" + user("a2", "a1"), []ProblemKind{ProblemMalformed}},
		{"dangling", testHeader + user("a1", "") + user("a2", "gone"), []ProblemKind{ProblemDanglingParent}},
		{"duplicate", testHeader + user("a1", "") + user("a1", ""), []ProblemKind{ProblemDuplicateID}},
		{"text-blob", testHeader + strings.Replace(user("a1", ""), `"content":"hi"`, `"content":"see blob:sha256:`+strings.Repeat("ab", 32)+`"`, 1), []ProblemKind{ProblemTextBlobRef}},
		{"missing-blob", testHeader + strings.Replace(user("a1", ""), `"content":"hi"`, `"content":[{"type":"image","data":"blob:sha256:`+strings.Repeat("ab", 32)+`","mimeType":"image/png"}]`, 1), []ProblemKind{ProblemMissingBlob}},
		{"slot-subagent", slot(`"source":"subagent"`) + testHeader + user("a1", ""), []ProblemKind{ProblemSlotRejected}},
		{"slot-v2", strings.Replace(slot(`"source":"auto"`), `"v":1`, `"v":2`, 1) + testHeader + user("a1", ""), []ProblemKind{ProblemSlotRejected}},
		{"slot-no-pad", `{"type":"title","v":1,"title":"x","source":"auto","updatedAt":"2026-01-01T00:00:00.000Z"}` + "\n" + testHeader + user("a1", ""), []ProblemKind{ProblemSlotRejected, ProblemSlotWidth}},
		{"missing-blob-in-details", testHeader + strings.Replace(user("a1", ""), `"content":"hi"`, `"content":"hi","details":{"images":[{"type":"image","data":"blob:sha256:`+strings.Repeat("cd", 32)+`","mimeType":"image/png"}]}`, 1), []ProblemKind{ProblemMissingBlob}},
		{"corrupt-blob", testHeader + strings.Replace(user("a1", ""), `"content":"hi"`, `"content":[{"type":"image","data":"blob:sha256:`+strings.Repeat("ef", 32)+`","mimeType":"image/png"}]`, 1), []ProblemKind{ProblemCorruptBlob}},
		{"bad-blob", testHeader + strings.Replace(user("a1", ""), `"content":"hi"`, `"content":[{"type":"image","data":"blob:sha256:../../etc/passwd","mimeType":"image/png"}]`, 1), []ProblemKind{ProblemBadBlob}},
	}
	// A blob whose bytes do not hash to its name.
	os.MkdirAll(filepath.Join(dir, "blobs"), 0o700)
	os.WriteFile(filepath.Join(dir, "blobs", strings.Repeat("ef", 32)), []byte("not what the name says"), 0o600)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, dir, c.name+".jsonl", c.content)
			sum := fileSum(t, path)
			probs, err := Verify(path, &VerifyOptions{Blobs: NewBlobStore(filepath.Join(dir, "blobs"))})
			if err != nil {
				t.Fatal(err)
			}
			if got := kinds(probs); !slices.Equal(got, c.want) {
				t.Errorf("problems %v, want %v: %v", got, c.want, probs)
			}
			for _, p := range probs {
				if p.Path != path || p.Detail == "" {
					t.Errorf("problem %+v", p)
				}
			}
			unchanged(t, path, sum)
			// Repair writes a copy whose repairable problems are gone.
			changes, err := Repair(path, "")
			if c.name == "not-a-session" {
				if err == nil {
					t.Error("repaired a file with no header")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			unchanged(t, path, sum)
			if len(changes) == 0 {
				if fileExists(path + ".repaired") {
					t.Error("a copy was written with nothing to repair")
				}
				return
			}
			left, err := Verify(path+".repaired", &VerifyOptions{Blobs: NewBlobStore(filepath.Join(dir, "blobs"))})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range left {
				if p.Repair != "" {
					t.Errorf("after repair still: %v", p)
				}
			}
			if fi, _ := os.Stat(path + ".repaired"); fi.Mode().Perm() != 0o600 {
				t.Errorf("repaired copy mode %v", fi.Mode().Perm())
			}
			if _, err := Repair(path, ""); !os.IsExist(unwrapAll(err)) {
				t.Errorf("second repair over the copy: %v", err)
			}
		})
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		if next := u.Unwrap(); next != nil {
			err = next
		} else {
			return err
		}
	}
}

// TestVerifyOmpCorpus: omp's own files are clean; a branched copy whose
// chain omp broke (its label entries dropped) is repaired whole.
func TestVerifyOmpCorpus(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, "testdata/omp", dir)
	files, _ := filepath.Glob(filepath.Join(dir, "sessions", "-proj", "*.jsonl"))
	for _, f := range files {
		probs, err := Verify(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(probs) != 0 {
			t.Errorf("%s: %v", filepath.Base(f), probs)
		}
	}
	// What omp's createBranchedSession writes: the labelled path without
	// its label entries, so the entries after them point at nothing.
	s, lpath, _, _ := labelled(t)
	s.Close()
	var kept []string
	for _, l := range readLines(t, lpath) {
		if !strings.Contains(l, `"type":"label"`) {
			kept = append(kept, l)
		}
	}
	src := writeFile(t, dir, "broken.jsonl", strings.Join(kept, "\n")+"\n")
	probs, _ := Verify(src, nil)
	if got := kinds(probs); !slices.Equal(got, []ProblemKind{ProblemDanglingParent, ProblemDanglingParent}) {
		t.Errorf("broken chain: %v", probs)
	}
	before, _ := Open(src, nil)
	if _, err := Repair(src, ""); err != nil {
		t.Fatal(err)
	}
	after, err := Open(src+".repaired", nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, a := len(before.BuildContext().Messages), len(after.BuildContext().Messages); b != 2 || a != 3 {
		t.Errorf("context %d messages before the repair, %d after; want 2 and 3", b, a)
	}
}

func TestVerifyRealSessions(t *testing.T) {
	for _, name := range []string{"pi-v1-before-compaction.jsonl", "pi-v1-large-session.jsonl"} {
		p := realFixture(t, name)
		probs, err := Verify(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := kinds(probs); !slices.Equal(got, []ProblemKind{ProblemOldVersion}) {
			t.Errorf("%s: %v", name, probs)
		}
	}
}
