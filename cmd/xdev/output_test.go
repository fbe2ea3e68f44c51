package main

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExportTargets: `xdev export -o TARGET` over a generated set of
// targets (new and existing files under many names, sessions given by
// path, symlinks and hard links to them, names under sessions and blobs
// directories, directories, missing parents) and inputs (a session, a
// file that is not one, a name that matches nothing). Whatever happens, no
// session changes; a failed export changes nothing at all (no file
// truncated, removed or left behind); a successful one changes exactly
// the file the target names (through a symlink, the file it points to).
func TestExportTargets(t *testing.T) {
	type target struct {
		name  string
		setup func(t *testing.T, work, data string) string // returns the -o argument
	}
	session := func(data, name string) string { return filepath.Join(data, "sessions", "-proj", name) }
	var targets []target
	for _, ext := range []string{".md", ".html", "", ".JSONL", ".jsonl", ".md.jsonl", ".jsonl.md"} {
		targets = append(targets,
			target{"new" + ext, func(t *testing.T, work, _ string) string { return filepath.Join(work, "out"+ext) }},
			target{"existing" + ext, func(t *testing.T, work, _ string) string {
				p := filepath.Join(work, "mine"+ext)
				writeTestFile(t, p, "my notes\n")
				return p
			}},
			target{"under-sessions" + ext, func(t *testing.T, _, data string) string { return session(data, "x"+ext) }},
			target{"under-blobs" + ext, func(t *testing.T, _, data string) string { return filepath.Join(data, "blobs", "x"+ext) }},
		)
	}
	for _, name := range []string{"01-all-entry-types.jsonl", "02-branch-summary.jsonl", "03-compaction/Scout.jsonl"} {
		targets = append(targets,
			target{"session:" + name, func(t *testing.T, _, data string) string { return session(data, name) }},
			target{"symlink-to:" + name, func(t *testing.T, work, data string) string {
				p := filepath.Join(work, "link.md")
				must(t, os.Symlink(session(data, name), p))
				return p
			}},
			target{"hardlink-to:" + name, func(t *testing.T, work, data string) string {
				p := filepath.Join(work, "hard.md")
				must(t, os.Link(session(data, name), p))
				return p
			}},
		)
	}
	targets = append(targets,
		target{"symlink-to-file", func(t *testing.T, work, _ string) string {
			writeTestFile(t, filepath.Join(work, "real.md"), "old\n")
			p := filepath.Join(work, "link.md")
			must(t, os.Symlink("real.md", p))
			return p
		}},
		target{"dangling-symlink", func(t *testing.T, work, _ string) string {
			p := filepath.Join(work, "link.md")
			must(t, os.Symlink("nowhere/x.md", p))
			return p
		}},
		target{"directory", func(t *testing.T, work, _ string) string { return work }},
		target{"missing-dir", func(t *testing.T, work, _ string) string { return filepath.Join(work, "no", "such", "x.md") }},
		target{"dotdot-into-sessions", func(t *testing.T, work, data string) string {
			return filepath.Join(data, "blobs", "..", "sessions", "-proj", "y.md")
		}},
	)
	inputs := []string{"01-all", "06-image", "garbage.jsonl", "no-such-session", "03-compaction/Scout.jsonl"}
	for _, tg := range targets {
		for _, in := range inputs {
			t.Run(tg.name+"/"+in, func(t *testing.T) {
				work := t.TempDir()
				t.Setenv("HOME", filepath.Join(work, "home"))
				data := filepath.Join(work, "agent")
				must(t, os.CopyFS(data, os.DirFS("../../internal/session/testdata/omp")))
				writeTestFile(t, filepath.Join(work, "garbage.jsonl"), "not a session\n")
				arg := in
				switch in {
				case "garbage.jsonl":
					arg = filepath.Join(work, in)
				case "03-compaction/Scout.jsonl":
					arg = session(data, in)
				}
				out := tg.setup(t, work, data)
				before := snapshot(t, work)
				_, stderr, code := xdev(t, "", "export", "--data-dir", data, "-o", out, arg)
				after := snapshot(t, work)
				changed := diffSnapshots(before, after)
				for _, p := range changed {
					if strings.HasSuffix(p, ".jsonl") {
						t.Errorf("session %s changed (exit %d, %s)", p, code, stderr)
					}
				}
				if code != 0 {
					if len(changed) > 0 {
						t.Errorf("a failed export (exit %d: %s) changed %v", code, strings.TrimSpace(stderr), changed)
					}
					return
				}
				want, err := filepath.EvalSymlinks(filepath.Dir(out))
				if err != nil {
					t.Fatalf("exit 0, but the target's directory: %v", err)
				}
				want = filepath.Join(want, filepath.Base(out))
				if real, err := filepath.EvalSymlinks(out); err == nil {
					want = real
				}
				if len(changed) != 1 || changed[0] != want {
					t.Errorf("export -o %s changed %v, want only %s", out, changed, want)
				}
			})
		}
	}
}

// snapshot maps every path under dir to its content's hash, or a
// symlink's target.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			m[p] = "-> " + target
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[p] = fmt.Sprintf("%x", sha256.Sum256(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func diffSnapshots(a, b map[string]string) []string {
	var out []string
	for _, p := range slices.Sorted(maps.Keys(b)) {
		if a[p] != b[p] {
			out = append(out, p)
		}
	}
	for p := range a {
		if _, ok := b[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o700))
	must(t, os.WriteFile(path, []byte(content), 0o600))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
