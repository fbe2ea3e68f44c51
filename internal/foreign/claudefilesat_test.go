package foreign

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestClaudeFilesAtIsClaudeFiles: of every path of a tree of Claude Code
// projects (transcripts, subagents' beside them and under a session's
// directory, files that are none, links, a linked project, .projects),
// and of transcripts gone, ClaudeFilesAt names what ClaudeFiles names
// of them; a directory, or a path gone that is no transcript's name, it
// leaves to a walk.
func TestClaudeFilesAtIsClaudeFiles(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{
		"projects/-w-p/a.jsonl", "projects/-w-p/agent-b.jsonl", "projects/-w-p/notes.txt",
		"projects/-w-p/s1/subagents/c.jsonl", "projects/-w-p/s1/subagents/.d.jsonl", "projects/-w-p/s1/other.jsonl",
		"projects/-w-q/e.jsonl", ".projects/-x/f.jsonl", "todos/g.jsonl", "history.jsonl",
	} {
		p := filepath.Join(root, f)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink(filepath.Join(root, "projects/-w-p/a.jsonl"), filepath.Join(root, "projects/-w-p/link.jsonl"))
	os.Symlink(filepath.Join(root, "projects/-w-p/a.jsonl"), filepath.Join(root, "projects/-w-p/s1/subagents/l.jsonl"))
	os.Symlink(filepath.Join(root, "projects/-w-q"), filepath.Join(root, "projects/-linked"))
	all := map[string]Session{}
	for _, s := range ClaudeFiles(root) {
		all[s.Path] = s
	}
	var paths []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != root {
			paths = append(paths, p)
		}
		return nil
	})
	paths = append(paths, filepath.Join(root, "projects/-linked/e.jsonl"), filepath.Join(root, "projects/-w-p/gone.jsonl"),
		filepath.Join(root, "projects/-w-p/s2/subagents/gone.jsonl"))
	for _, p := range paths {
		got, ok := ClaudeFilesAt(root, []string{p})
		fi, err := os.Lstat(p)
		dir := err == nil && fi.IsDir()
		if rel, _ := filepath.Rel(root, p); dir && (filepath.Dir(rel) != "." || rel == "projects" || rel == ".projects") && rel != "todos" {
			if ok {
				t.Errorf("%s, a directory: named %v", rel, got)
			}
			continue
		}
		if dir {
			continue
		}
		var want []Session
		if s, named := all[p]; named {
			want = append(want, s)
		}
		if !ok || !slices.Equal(got, want) {
			t.Errorf("%s: %v %v; ClaudeFiles names %v", p, got, ok, want)
		}
	}
}
