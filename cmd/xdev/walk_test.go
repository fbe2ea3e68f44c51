package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/realfixtures"
)

// TestEverySessionEveryName lays the real fixtures (Claude Code, Codex,
// pi) and the hand-made Claude Code 2.1 shapes out under a HOME as each
// harness keeps them, lists every session `list --from all --all
// --subagents` shows, and walks each through every reading command by
// every way of naming it (its path, its file name, its id, a prefix of
// its id): show gives the same output whatever the name, and show
// --tree, export (Markdown and HTML), search --session and, for Claude
// Code and Codex, import all succeed (issue 23).
func TestEverySessionEveryName(t *testing.T) {
	real := realfixtures.Dir(t)
	work := t.TempDir()
	home := filepath.Join(work, "home")
	copyTree := func(src, dst string) {
		t.Helper()
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	copyTree(filepath.Join(real, "claude"), filepath.Join(home, ".claude", "projects"))
	copyTree(filepath.Join(real, "codex"), filepath.Join(home, ".codex", "sessions"))
	piDir := filepath.Join(home, ".pi", "agent", "sessions", "--Users-badlogic-workspaces-pi-mono--")
	os.MkdirAll(piDir, 0o700)
	for _, f := range []string{"pi-v1-large-session.jsonl", "pi-v1-before-compaction.jsonl"} {
		b, err := os.ReadFile(filepath.Join(real, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(piDir, f), b, 0o600)
	}
	v21 := filepath.Join(home, ".claude", "projects", "-work-v21")
	os.MkdirAll(filepath.Join(v21, "c0ffee21-0000-4000-8000-000000000021", "subagents"), 0o700)
	for src, dst := range map[string]string{
		"v21-compacted.jsonl": "c0ffee21-0000-4000-8000-000000000021.jsonl",
		"agent-v21sub.jsonl":  "c0ffee21-0000-4000-8000-000000000021/subagents/agent-v21sub.jsonl",
	} {
		b, err := os.ReadFile(filepath.Join("../../internal/foreign/testdata/claude", src))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(v21, dst), b, 0o600)
	}
	data := filepath.Join(work, "agent")
	os.MkdirAll(filepath.Join(data, "sessions"), 0o700)
	tmp := filepath.Join(work, "tmp")
	os.MkdirAll(tmp, 0o700)
	for k, v := range map[string]string{"HOME": home, "XDEV_DATA_DIR": data, "TMPDIR": tmp, "XDG_CACHE_HOME": filepath.Join(work, "cache"),
		"CLAUDE_CONFIG_DIR": "", "CODEX_HOME": "", "XDEV_FORCE_TTY": "0"} {
		t.Setenv(k, v)
	}
	t.Chdir(work)
	// In this process, as main runs it: a process a command would cost a
	// second under the race detector, and the walk runs hundreds.
	run := func(args ...string) (string, error) {
		out, errOut, code := xdev(t, "", args...)
		if code != 0 {
			return out, &cmdError{args, errOut}
		}
		return out, nil
	}
	out, err := run("list", "--from", "all", "--all", "--subagents", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []listedRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	for _, r := range rows {
		ids[r.ID]++
	}
	walked := map[string]int{}
	for _, r := range rows {
		if r.Error != "" || r.Harness == "xdev" {
			continue
		}
		names := []string{r.Path, filepath.Base(r.Path)}
		if ids[r.ID] == 1 {
			names = append(names, r.ID)
			if len(r.ID) > 12 && unique(rows, r.ID[:12]) {
				names = append(names, r.ID[:12])
			}
		}
		var first string
		for k, name := range names {
			got, err := run("show", name)
			if err != nil {
				t.Errorf("%s %s: show %q: %v", r.Harness, r.Path, name, err)
				continue
			}
			if k == 0 {
				first = got
			} else if got != first {
				t.Errorf("%s %s: show %q differs from show by path", r.Harness, r.Path, name)
			}
		}
		name := names[len(names)-1]
		for _, args := range [][]string{
			{"show", "--tree", name},
			{"show", "--json", name},
			{"export", name},
			{"export", "-o", filepath.Join(work, "out.html"), name},
			{"search", "--from", r.Harness, "--subagents", "--session", name, "-l", "the"},
		} {
			if _, err := run(args...); err != nil {
				t.Errorf("%s %s: %v", r.Harness, r.Path, err)
			}
		}
		if r.Harness == "claude" || r.Harness == "codex" {
			if _, err := run("import", "--again", "--json", name); err != nil {
				t.Errorf("%s %s: %v", r.Harness, r.Path, err)
			}
			if _, err := run("fork", name); err == nil || !strings.Contains(err.Error(), "xdev import") {
				t.Errorf("%s %s: fork: %v, want a pointer to xdev import", r.Harness, r.Path, err)
			}
		} else {
			// A fork of a pi session lands in the data dir, never in pi's.
			before, _ := os.ReadDir(piDir)
			if out, err := run("fork", name); err != nil || !strings.HasPrefix(strings.TrimSpace(out), data) {
				t.Errorf("pi %s: fork wrote %q, %v; want a file in the data dir", r.Path, out, err)
			}
			if after, _ := os.ReadDir(piDir); len(after) != len(before) {
				t.Errorf("pi %s: fork wrote into pi's directory", r.Path)
			}
		}
		walked[r.Harness]++
	}
	for _, h := range []string{"claude", "codex", "pi"} {
		if walked[h] == 0 {
			t.Errorf("no %s session listed to walk", h)
		}
	}
	if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
		t.Errorf("the temp dir holds %d files after the walk", len(ents))
	}
	t.Logf("walked %v sessions", walked)
}

// unique reports whether exactly one row's id starts with prefix.
func unique(rows []listedRow, prefix string) bool {
	n := 0
	for _, r := range rows {
		if strings.HasPrefix(r.ID, prefix) {
			n++
		}
	}
	return n == 1
}

// listedRow is what the walk reads of a `list --json` row.
type listedRow struct {
	Harness, ID, Path, Error string
}

type cmdError struct {
	args   []string
	stderr string
}

func (e *cmdError) Error() string {
	return strings.Join(e.args, " ") + ": " + strings.TrimSpace(e.stderr)
}
