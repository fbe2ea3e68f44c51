package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/realfixtures"
)

// TestFirstRun: on a machine that never ran xdev (no data dir), with only
// one other harness's sessions or none, the commands that read the data
// dir say where they looked and name the harnesses whose sessions are
// here and the flag that reads them, and `list --from all --all` lists
// them (or says where it looked, when there are none).
func TestFirstRun(t *testing.T) {
	real := realfixtures.Dir(t)
	for _, c := range []struct {
		name, from, to, says string
	}{
		{"claude", "claude", ".claude/projects", "Claude Code in ~/.claude"},
		{"codex", "codex", ".codex/sessions", "Codex in ~/.codex"},
		{"gemini", "gemini", ".gemini", "Gemini CLI in ~/.gemini"},
		{"opencode", "opencode-sqlite", ".local/share/opencode", "opencode in ~/.local/share/opencode"},
		{"none", "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			for _, k := range []string{"XDEV_DATA_DIR", "PI_CODING_AGENT_DIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "GEMINI_CLI_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"} {
				t.Setenv(k, "")
			}
			if c.from != "" {
				if err := os.CopyFS(filepath.Join(home, c.to), os.DirFS(filepath.Join(real, c.from))); err != nil {
					t.Fatal(err)
				}
			}
			for _, args := range [][]string{{"list"}, {"search", "the"}, {"index"}, {"verify"}} {
				_, stderr, code := xdev(t, "", args...)
				if code != 1 || !strings.Contains(stderr, ".xdev/agent/sessions does not exist") {
					t.Errorf("xdev %s: exit %d, %s", strings.Join(args, " "), code, stderr)
				}
				if c.says != "" && (!strings.Contains(stderr, c.says) || !strings.Contains(stderr, "--from all")) {
					t.Errorf("xdev %s does not name %s and --from all: %s", strings.Join(args, " "), c.says, stderr)
				}
				if c.says == "" && strings.Contains(stderr, "This machine has sessions") {
					t.Errorf("xdev %s names sessions on a machine with none: %s", strings.Join(args, " "), stderr)
				}
			}
			out, stderr, code := xdev(t, "", "list", "--from", "all", "--all")
			switch {
			case code != 0:
				t.Errorf("list --from all --all: exit %d, %s", code, stderr)
			case c.says != "" && strings.Count(out, "\n") == 0:
				t.Errorf("list --from all --all lists nothing: %s", stderr)
			case c.says == "" && (out != "" || !strings.Contains(stderr, "No sessions in any project in xdev")):
				t.Errorf("list --from all --all with no sessions: %q, %s", out, stderr)
			}
		})
	}
}
