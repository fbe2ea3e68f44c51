package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/foreign"
)

// TestOutputNeverInAHarnessDir: export -o FILE and export --all -o DIR
// refuse every harness's directory the catalog knows, by default and
// as a flag moves it, and write nothing there. (export --all wrote into
// ~/.copilot, ~/.gemini and opencode's dir: the policy named three
// harnesses of its own.)
func TestOutputNeverInAHarnessDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, k := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "GEMINI_CLI_HOME", "XDG_DATA_HOME"} {
		t.Setenv(k, "")
	}
	samples, err := filepath.Abs("../../internal/session/testdata/omp")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDEV_DATA_DIR", samples)
	moved := t.TempDir()
	for _, h := range catalog.Foreign {
		root, err := foreign.DefaultRoot(string(h))
		if err != nil {
			t.Fatal(err)
		}
		flagged := filepath.Join(moved, string(h))
		for _, c := range []struct {
			dir   string
			flags []string
		}{
			{root, nil},
			{filepath.Join(root, "deeper"), nil},
			{flagged, []string{"--" + string(h) + "-dir", flagged}},
		} {
			file := filepath.Join(c.dir, "notes.md")
			for _, args := range [][]string{
				append(append([]string{"export"}, c.flags...), "-o", file, "01-all"),
				append(append([]string{"export"}, c.flags...), "--all", "-o", filepath.Join(c.dir, "out")),
			} {
				_, stderr, code := xdev(t, "", args...)
				if code != 1 || !strings.Contains(stderr, "refusing to write") {
					t.Errorf("%s: xdev %s: exit %d, %s", h, strings.Join(args, " "), code, stderr)
				}
				if _, err := os.Stat(c.dir); err == nil {
					t.Errorf("%s: xdev %s wrote into %s", h, strings.Join(args, " "), c.dir)
				}
			}
		}
	}
	// Elsewhere, both are written.
	out := t.TempDir()
	if _, stderr, code := xdev(t, "", "export", "-o", filepath.Join(out, "one.md"), "01-all"); code != 0 {
		t.Fatalf("export -o elsewhere: %s", stderr)
	}
	if _, stderr, code := xdev(t, "", "export", "--all", "-o", filepath.Join(out, "all")); code != 0 {
		t.Fatalf("export --all -o elsewhere: %s", stderr)
	}
}
