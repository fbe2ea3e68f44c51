package foreign

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestClaudeSlug: the project directory of a cwd is named as Claude Code
// names it, path.replace(/[^a-zA-Z0-9]/g, '-') on UTF-16 code units.
func TestClaudeSlug(t *testing.T) {
	for _, c := range []struct{ cwd, want string }{
		{"/work/app", "-work-app"},
		{"/home/u/.config/x_y z", "-home-u--config-x-y-z"},
		{"/srv/café", "-srv-caf-"},
		{"/srv/a😀b", "-srv-a--b"},
		{"/work/app/", "-work-app"},
		{"/work/../work/app", "-work-app"},
	} {
		if got := claudeSlug(c.cwd); got != c.want {
			t.Errorf("claudeSlug(%q) = %q, want %q", c.cwd, got, c.want)
		}
	}
}

// TestClaudeListCwd: the listing of one project (ListCwd, read from its
// directory only) holds every session the whole listing gives that cwd,
// over project directories of many shapes of name: dots, underscores,
// spaces, accents, dashes that the name cannot tell from slashes, and a
// name past Claude Code's 200 characters.
func TestClaudeListCwd(t *testing.T) {
	root := t.TempDir()
	long := "/work/" + strings.Repeat("deep/", 45) + "app"
	cwds := []string{"/work/app", "/work/app-b", "/work/app/b", "/home/u/.config/x_y z", "/srv/café", long}
	for k, cwd := range cwds {
		name := claudeSlug(cwd)
		if len(name) > claudeSlugMax {
			name = name[:claudeSlugMax] + "-1a2b3c"
		}
		dir := filepath.Join(root, "projects", name)
		os.MkdirAll(dir, 0o700)
		for n := range 3 {
			id := fmt.Sprintf("%08d-0000-4000-8000-%012d", k, n)
			line := fmt.Sprintf(`{"type":"user","cwd":%q,"sessionId":%q,"uuid":"u%d","timestamp":"2026-01-01T00:00:0%dZ","message":{"role":"user","content":"hello %d"}}`+"\n", cwd, id, n, n, k)
			if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(line), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	src := claudeSource{root: root}
	all, err := src.List(false)
	if err != nil {
		t.Fatal(err)
	}
	for _, cwd := range cwds {
		var want, got []string
		for _, s := range all {
			if s.Cwd == cwd {
				want = append(want, s.ID)
			}
		}
		one, err := src.ListCwd(cwd, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range one {
			if s.Cwd == cwd {
				got = append(got, s.ID)
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if len(want) != 3 || !slices.Equal(got, want) {
			t.Errorf("%s: ListCwd %v, the whole listing %v", cwd, got, want)
		}
		if len(one) > 9 { // a slug two cwds share (6), and the name too long to tell (3)
			t.Errorf("%s: ListCwd read %d sessions, not one project's", cwd, len(one))
		}
	}
}
