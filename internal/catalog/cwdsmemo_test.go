package catalog

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

	"github.com/xdev/xdev/internal/testscale"
)

// TestCwdsMemo: the working directories a catalog finds through the memo
// are those a listing finds, after any run of what happens to a Claude
// Code dir: a session started in a new project, another in a project
// there, one in a project there but with another cwd, one appended to,
// one removed, a project removed; each change given its own clock
// second, as a filesystem would. The memo is used (a memo planted with
// a cwd no session has is believed while no directory moved), and not
// written while a directory moved too lately to be trusted.
func TestCwdsMemo(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	root := filepath.Join(home, ".claude")
	projects := filepath.Join(root, "projects")
	os.MkdirAll(projects, 0o700)
	catalog := func() *Catalog {
		c, err := New(Config{DataDir: filepath.Join(home, "data"), Roots: map[Harness]string{Claude: root}, ListOnce: true})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// The clock the test's changes are made at: each step's changed
	// directories are set to a second of their own, long past.
	clock := time.Now().Add(-time.Hour)
	mtimes := func() map[string]time.Time {
		out := map[string]time.Time{}
		filepath.WalkDir(projects, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				if fi, err := d.Info(); err == nil {
					out[path] = fi.ModTime()
				}
			}
			return nil
		})
		return out
	}
	settle := func(before map[string]time.Time) {
		clock = clock.Add(time.Second)
		for dir, mt := range mtimes() {
			if old, ok := before[dir]; !ok || !old.Equal(mt) {
				os.Chtimes(dir, clock, clock)
			}
		}
	}
	line := func(id, cwd string) string {
		return fmt.Sprintf(`{"type":"user","sessionId":%q,"cwd":%q,"uuid":"u-%s","timestamp":"2026-01-02T10:00:00.000Z","message":{"role":"user","content":"hi"}}`+"\n", id, cwd, id)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	var sessions []string // their files
	n := 0
	for step := range testscale.N(300, 300) {
		before := mtimes()
		dirs, _ := filepath.Glob(filepath.Join(projects, "*"))
		switch op := rng.IntN(6); {
		case op == 0 || len(dirs) == 0: // a session in a new project
			n++
			cwd := fmt.Sprintf("/work/p%d", n)
			dir := filepath.Join(projects, claudeSlug(cwd))
			os.MkdirAll(dir, 0o700)
			id := fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
			path := filepath.Join(dir, id+".jsonl")
			os.WriteFile(path, []byte(line(id, cwd)), 0o600)
			sessions = append(sessions, path)
		case op <= 2: // another in a project there, its cwd or another
			n++
			dir := dirs[rng.IntN(len(dirs))]
			cwd := fmt.Sprintf("/work/q%d", n)
			if op == 1 {
				cwd = "/work/" + filepath.Base(dir)[len("-work-"):]
			}
			id := fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
			path := filepath.Join(dir, id+".jsonl")
			os.WriteFile(path, []byte(line(id, cwd)), 0o600)
			sessions = append(sessions, path)
		case op == 3 && len(sessions) > 0: // appended to
			f, _ := os.OpenFile(sessions[rng.IntN(len(sessions))], os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(line("appended", "/elsewhere"))
			f.Close()
		case op == 4 && len(sessions) > 0: // removed
			k := rng.IntN(len(sessions))
			os.Remove(sessions[k])
			sessions = slices.Delete(sessions, k, k+1)
		case op == 5: // a project removed
			dir := dirs[rng.IntN(len(dirs))]
			os.RemoveAll(dir)
			sessions = slices.DeleteFunc(sessions, func(p string) bool { return filepath.Dir(p) == dir })
		}
		settle(before)
		got := catalog().listedCwds(Claude)
		memo := cwdsMemoPath(Claude, catalog().sessionDirsOf(Claude))
		kept, _ := os.ReadFile(memo)
		os.Remove(memo)
		want := catalog().listedCwds(Claude)
		os.WriteFile(memo, kept, 0o600)
		if !slices.Equal(got, want) {
			t.Fatalf("step %d: through the memo %v, listed %v", step, got, want)
		}
	}

	// Believed while nothing moved: a planted cwd is found.
	c := catalog()
	stamps, trusted := c.cwdsStamp(Claude)
	if !trusted {
		t.Fatal("directories of an hour ago are not trusted")
	}
	c.rememberCwds(Claude, stamps, []string{"/planted"})
	if got := catalog().listedCwds(Claude); !slices.Equal(got, []string{"/planted"}) {
		t.Errorf("the memo was not used: %v", got)
	}
	// A directory changed just now: listed, and no memo kept.
	dir := filepath.Join(projects, claudeSlug("/work/now"))
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "00000000-0000-4000-8000-999999999999.jsonl"), []byte(line("00000000-0000-4000-8000-999999999999", "/work/now")), 0o600)
	if got := catalog().listedCwds(Claude); !slices.Contains(got, "/work/now") || slices.Contains(got, "/planted") {
		t.Errorf("after a new project: %v", got)
	}
	memo := cwdsMemoPath(Claude, catalog().sessionDirsOf(Claude))
	if data, _ := os.ReadFile(memo); bytes.Contains(data, []byte("/work/now")) || !bytes.Contains(data, []byte("/planted")) {
		t.Errorf("a memo of directories that moved just now was kept: %s", data)
	}
}

// claudeSlug is the name Claude Code gives a project's directory: every
// character but a letter or digit a '-'.
func claudeSlug(cwd string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, cwd)
}
