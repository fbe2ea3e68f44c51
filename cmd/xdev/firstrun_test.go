package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/realfixtures"
)

// TestFirstRun: on a machine that never ran xdev (no data dir), with only
// one other harness's sessions or none, the commands that read sessions
// read every harness's by default: list, search, index, usage and verify
// exit 0 with that harness's sessions, or with a message naming every
// place looked at.
func TestFirstRun(t *testing.T) {
	real := realfixtures.Dir(t)
	for _, c := range []struct {
		name, from, to string
		harness, word  string // whose sessions list shows; a word search finds
	}{
		{"claude", "claude", ".claude/projects", "claude", "CLAUDE.md"},
		{"codex", "codex", ".codex/sessions", "codex", "REDACTED_TEXT"},
		{"gemini", "gemini", ".gemini", "gemini", "the"},
		{"opencode", "opencode-sqlite", ".local/share/opencode", "opencode", "average_item_price"},
		{"none", "", "", "", "the"},
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
			for _, args := range [][]string{{"list", "--all"}, {"search", "-l", c.word}, {"index"}, {"usage"}, {"verify"}} {
				cmd := strings.Join(args, " ")
				out, stderr, code := xdev(t, "", args...)
				if code != 0 {
					t.Errorf("xdev %s: exit %d, %s", cmd, code, stderr)
					continue
				}
				if c.from == "" {
					for _, place := range []string{"~/.xdev/agent/sessions (not there)", "~/.claude (not there)", "~/.local/share/opencode (not there)"} {
						if !strings.Contains(stderr, place) {
							t.Errorf("xdev %s on an empty machine does not name %s: %s", cmd, place, stderr)
						}
					}
					if out != "" {
						t.Errorf("xdev %s on an empty machine printed %q", cmd, out)
					}
					continue
				}
				switch args[0] {
				case "list":
					if n := strings.Count(out, "\n"+c.harness+"\t") + boolInt(strings.HasPrefix(out, c.harness+"\t")); n == 0 {
						t.Errorf("xdev %s lists no %s session: %q %s", cmd, c.harness, out, stderr)
					}
				case "search", "index":
					if !strings.Contains(out, "/") {
						t.Errorf("xdev %s names no session or index: %q %s", cmd, out, stderr)
					}
				case "usage":
					if strings.Contains(stderr, "No sessions here") {
						t.Errorf("xdev %s found no sessions: %s", cmd, stderr)
					}
				}
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
