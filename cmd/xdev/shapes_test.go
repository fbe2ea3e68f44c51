package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/fileshape"
	"github.com/xdev/xdev/internal/jsonx"
	"github.com/xdev/xdev/internal/omptest"
)

// TestCommandsOnEveryShape runs every command that reads or writes a
// session file on the sessions real omp wrote, each given every shape
// other writers and editors leave (package fileshape: a byte order mark,
// CRLF, blank and NUL lines, a NUL-filled tail, no slot, a narrow slot, a
// lone surrogate in the title, a number for a title, v1 and v2 headers).
// What omp resumes, every reading command reads, and every writing
// command either writes a file omp still resumes, with the same messages
// where the write adds none, or refuses for a reason it names and leaves
// the file as it was. With omp installed, omp itself is asked.
func TestCommandsOnEveryShape(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	samples, err := filepath.Glob("../../internal/session/testdata/omp/sessions/-proj/*.jsonl")
	if err != nil || len(samples) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	r := rand.New(rand.NewPCG(38, 2))
	work, data := t.TempDir(), t.TempDir()
	written := t.TempDir() // what omp is asked to resume, by name
	type write struct {
		name, file, op string
		orig           string // the shaped file before the write
	}
	var writes []write
	var origs []string
	refusals := map[string]int{}
	// Refusals a writer may give, each naming its reason.
	refusalOK := []string{"old format version", "newer format version", "has no id", "omp could not resume"}
	for _, sample := range samples {
		content, err := os.ReadFile(sample)
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range fileshape.Shapes {
			f := fileshape.Parse(content)
			sh.Apply(r, f)
			name := strings.TrimSuffix(filepath.Base(sample), ".jsonl") + "." + sh.Name
			shaped := f.Bytes()
			orig := filepath.Join(written, name+".orig.jsonl")
			if err := os.WriteFile(orig, shaped, 0o600); err != nil {
				t.Fatal(err)
			}
			origs = append(origs, name)

			// Reading: every command reads it, and changes nothing.
			path := filepath.Join(work, name+".jsonl")
			if err := os.WriteFile(path, shaped, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"context", "--json", path}, {"show", path}, {"show", "--tree", path}, {"show", "--raw", path},
				{"export", "--format", "md", "-o", filepath.Join(work, name+".md"), path},
				{"verify", path},
			} {
				_, errs, code := xdev(t, "", args...)
				if code != 0 && !(args[0] == "verify" && code == exitProblems) {
					t.Errorf("%s: xdev %s: exit %d: %s", name, args[0], code, errs)
				}
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, shaped) {
				t.Errorf("%s: a reading command changed the file", name)
			}

			// Writing, each on its own copy.
			leaf := leafOf(t, path)
			for _, op := range []struct {
				name  string
				stdin string
				args  func(path string) []string
			}{
				{"title", "", func(p string) []string { return []string{"title", p, "Renamed \xed\xa0\x80 café"} }},
				{"append", `{"type":"message","message":{"role":"user","content":"appended","timestamp":1}}`, func(p string) []string { return []string{"append", p} }},
				{"branch", "", func(p string) []string { return []string{"branch", p, leaf} }},
				{"fork", "", func(p string) []string { return []string{"fork", "--data-dir", data, p} }},
				{"fork-at", "", func(p string) []string { return []string{"fork", "--data-dir", data, "--at", leaf, p} }},
			} {
				p := filepath.Join(work, name+"."+op.name+".jsonl")
				if err := os.WriteFile(p, shaped, 0o600); err != nil {
					t.Fatal(err)
				}
				out, errs, code := xdev(t, op.stdin, op.args(p)...)
				if code != 0 {
					if got, _ := os.ReadFile(p); !bytes.Equal(got, shaped) {
						t.Errorf("%s: xdev %s failed and changed the file: %s", name, op.name, errs)
					}
					ok := false
					for _, why := range refusalOK {
						if strings.Contains(errs, why) {
							ok = true
							refusals[op.name+": "+why]++
						}
					}
					if !ok {
						t.Errorf("%s: xdev %s: exit %d: %s", name, op.name, code, errs)
					}
					continue
				}
				result := p
				if strings.HasPrefix(op.name, "fork") {
					result = strings.TrimSpace(out)
				}
				b, err := os.ReadFile(result)
				if err != nil {
					t.Fatalf("%s: xdev %s wrote no file: %v (%q)", name, op.name, err, out)
				}
				if err := os.WriteFile(filepath.Join(written, name+"."+op.name+".jsonl"), b, 0o600); err != nil {
					t.Fatal(err)
				}
				writes = append(writes, write{name + "." + op.name, result, op.name, name})
			}
		}
	}
	t.Logf("%d shaped files, %d writes; refused: %v", len(origs), len(writes), refusals)
	if _, ok := omptestInstalled(t); !ok {
		return
	}
	views := ompViews(t, written)
	for _, name := range origs {
		if v := views[name+".orig"]; v.Get("error").Defined() {
			t.Errorf("%s: omp does not resume the shaped file itself: %s", name, v.Get("error"))
		}
	}
	for _, w := range writes {
		after, before := views[w.name], views[w.orig+".orig"]
		if e := after.Get("error"); e.Defined() {
			t.Errorf("%s: omp no longer resumes it: %s", w.name, e)
			continue
		}
		switch w.op {
		case "title", "fork":
			if a, b := after.Get("messages").JSON(), before.Get("messages").JSON(); !bytes.Equal(a, b) {
				t.Errorf("%s: omp's messages changed:\n  before %.300s\n  after  %.300s", w.name, b, a)
			}
		case "append":
			if a, b := len(after.Get("messages").Items()), len(before.Get("messages").Items()); a != b+1 {
				t.Errorf("%s: %d messages after the append, %d before", w.name, a, b)
			}
		}
		if w.op == "title" && after.Get("title").String() != "Renamed \xed\xa0\x80 café" {
			t.Errorf("%s: omp's title is %q", w.name, after.Get("title").String())
		}
	}
}

// leafOf returns the id of the leaf's parent in the session at path, as
// xdev names entries (a v1 file's ids come from their places), "" when
// there is none: the entry the branch and fork --at writes go to.
func leafOf(t *testing.T, path string) string {
	out, _, code := xdev(t, "", "show", "--tree", "--json", path)
	if code != 0 {
		return ""
	}
	v, err := jsonx.Parse([]byte(out))
	if err != nil {
		return ""
	}
	var path2 []string
	for _, e := range v.Items() {
		if e.Get("onPath").Truthy() {
			path2 = append(path2, e.Get("id").String())
		}
	}
	switch len(path2) {
	case 0:
		return ""
	case 1:
		return path2[0]
	}
	return path2[len(path2)-2]
}

// omptestInstalled reports whether omp is there to ask (installing it in
// CI, skipping the omp half of a test elsewhere).
func omptestInstalled(t *testing.T) (string, bool) {
	t.Helper()
	var dir string
	ok := t.Run("omp", func(t *testing.T) { dir = omptest.Require(t) })
	return dir, ok && dir != ""
}

// ompViews runs omp's context.ts over every file of dir and returns its
// view of each, by file name without .jsonl.
func ompViews(t *testing.T, dir string) map[string]jsonx.Value {
	t.Helper()
	all, err := jsonx.Parse(omptest.Run(t, t.TempDir(), "context.ts", "--dir", dir))
	if err != nil {
		t.Fatal(err)
	}
	views := map[string]jsonx.Value{}
	for _, v := range all.Items() {
		views[strings.TrimSuffix(filepath.Base(v.Get("file").String()), ".jsonl")] = v
	}
	if len(views) == 0 {
		t.Fatal(fmt.Errorf("omp read nothing in %s", dir))
	}
	return views
}
