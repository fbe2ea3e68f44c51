package foreign

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/xdev/xdev/internal/session"
)

// ClaudeDir is Claude Code's data dir: $CLAUDE_CONFIG_DIR, else ~/.claude.
func ClaudeDir() (string, error) { return envOrHome("CLAUDE_CONFIG_DIR", ".claude") }

// envOrHome is the directory the environment variable names, else name
// under the home directory: how each harness finds its data dir.
func envOrHome(variable, name string) (string, error) {
	if d := os.Getenv(variable); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, name), nil
}

// ClaudeProjectCwd decodes a Claude project directory's name into the cwd
// it stands for, as omp's projectCwd does without Claude's project list:
// "-work-app" is /work/app.
func ClaudeProjectCwd(name string) string {
	if !strings.HasPrefix(name, "-") {
		return name
	}
	return strings.ReplaceAll(name, "-", string(filepath.Separator))
}

// FindClaude resolves a Claude Code session named by path (the rule of
// session.SessionPath), or by id or id prefix among the transcripts under
// root's projects.
func FindClaude(root, arg string) (string, error) {
	if session.SessionPath(arg) {
		return filepath.Abs(arg)
	}
	matches, _ := filepath.Glob(filepath.Join(root, "projects", "*", arg+"*.jsonl"))
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("no Claude Code session %q under %s: %w", arg, filepath.Join(root, "projects"), fs.ErrNotExist)
	case 1:
		return matches[0], nil
	}
	return "", fmt.Errorf("%q names more than one Claude Code session: %s", arg, strings.Join(matches, ", "))
}
