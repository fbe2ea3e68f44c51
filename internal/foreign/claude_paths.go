package foreign

import (
	"os"
	"path/filepath"
	"strings"
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
