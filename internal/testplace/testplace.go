// Package testplace is a test's machine: a home, a cache, xdev's data dir
// and every other harness's root, in temp dirs, with the process pointed
// at them (HOME, XDG_CACHE_HOME, the data dirs), so that nothing of the
// real user's is read; and the real fixtures copied into those roots.
package testplace

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/realfixtures"
	"github.com/xdev/xdev/internal/session"
)

// A Place is the dirs of a test's machine.
type Place struct {
	Home, Cache, Data string
	Roots             map[catalog.Harness]string // every other harness's root
}

// New makes an empty machine and points the process at it.
func New(t testing.TB) *Place {
	t.Helper()
	root := t.TempDir()
	p := &Place{Home: filepath.Join(root, "home"), Cache: filepath.Join(root, "cache"), Data: filepath.Join(root, "home", ".xdev", "agent"),
		Roots: map[catalog.Harness]string{}}
	for _, h := range catalog.Foreign {
		p.Roots[h] = filepath.Join(root, string(h))
	}
	os.MkdirAll(session.SessionsDir(p.Data), 0o700)
	t.Setenv("HOME", p.Home)
	t.Setenv("XDG_CACHE_HOME", p.Cache)
	t.Setenv(session.DataDirEnv, p.Data)
	t.Setenv(session.OmpDataDirEnv, filepath.Join(root, "home", ".omp", "agent"))
	return p
}

// Catalog is the catalog of the place, as a server makes it: its data
// dir and roots, names resolved through the list cache.
func (p *Place) Catalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	c, err := catalog.New(catalog.Config{DataDir: p.Data, DataDirHarness: catalog.Xdev, Roots: p.Roots, ResolveWritesCache: true})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// CopyRealFixtures copies the real fixtures of every other harness into
// roots, laid out as each harness keeps them (copies: what reads them
// must not be trusted to keep them whole). Under CI their absence fails
// the test (realfixtures).
func CopyRealFixtures(t testing.TB, roots map[catalog.Harness]string) {
	t.Helper()
	real := realfixtures.Dir(t)
	copyDir := func(from, to string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(to), 0o700)
		if err := os.CopyFS(to, os.DirFS(from)); err != nil {
			t.Fatal(err)
		}
	}
	copyDir(filepath.Join(real, "claude"), filepath.Join(roots[catalog.Claude], "projects"))
	copyDir(filepath.Join(real, "codex"), filepath.Join(roots[catalog.Codex], "sessions"))
	copyDir(filepath.Join(real, "copilot"), roots[catalog.Copilot])
	copyDir(filepath.Join(real, "gemini"), roots[catalog.Gemini])
	copyDir(filepath.Join(real, "opencode-sqlite"), roots[catalog.Opencode])
	copyDir(filepath.Join(real, "qwen"), roots[catalog.Qwen])
	copyDir(filepath.Join(real, "continue"), roots[catalog.Continue])
	copyDir(filepath.Join(real, "kimi"), roots[catalog.Kimi])
	copyDir(filepath.Join(real, "cline"), roots[catalog.Cline])
	copyDir(filepath.Join(real, "goose"), roots[catalog.Goose])
	copyProjects(t, real, roots)
	pi := filepath.Join(session.SessionsDir(roots[catalog.Pi]), "--tmp-pi--")
	os.MkdirAll(pi, 0o700)
	for _, name := range []string{"pi-v1-before-compaction.jsonl", "pi-v1-large-session.jsonl"} {
		b, err := os.ReadFile(filepath.Join(real, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(pi, name), b, 0o600)
	}
}

// copyProjects lays out the harnesses that keep their sessions in the
// projects (Crush, Aider): each fixture project a directory of
// ProjectsDir, as its harness left it; Crush's projects.json (in its
// root) names two of its three projects, as Crush records those it ran
// in, and $XDEV_PROJECTS names the rest (the third Crush project, the
// Aider ones), as a person would.
func copyProjects(t testing.TB, real string, roots map[catalog.Harness]string) {
	t.Helper()
	dir := ProjectsDir(roots)
	var named []string
	type project struct {
		Path    string `json:"path"`
		DataDir string `json:"data_dir"`
	}
	var crush []project
	for _, h := range []catalog.Harness{catalog.Crush, catalog.Aider} {
		ents, err := os.ReadDir(filepath.Join(real, string(h)))
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range ents {
			to := filepath.Join(dir, string(h)+"-"+e.Name())
			if err := os.CopyFS(to, os.DirFS(filepath.Join(real, string(h), e.Name()))); err != nil {
				t.Fatal(err)
			}
			if h == catalog.Crush && i < 2 {
				crush = append(crush, project{Path: to, DataDir: filepath.Join(to, ".crush")})
			} else {
				named = append(named, to)
			}
		}
	}
	b, _ := json.Marshal(map[string]any{"projects": crush})
	os.MkdirAll(roots[catalog.Crush], 0o700)
	if err := os.WriteFile(filepath.Join(roots[catalog.Crush], "projects.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(roots[catalog.Aider], 0o700) // Aider's caches: where it ran
	t.Setenv(catalog.ProjectsEnv, strings.Join(named, string(filepath.ListSeparator)))
}

// ProjectsDir is where CopyRealFixtures puts the projects of the
// harnesses that keep their sessions in them: beside the roots.
func ProjectsDir(roots map[catalog.Harness]string) string {
	return filepath.Join(filepath.Dir(roots[catalog.Aider]), "projects")
}
