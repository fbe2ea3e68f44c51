package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/xdev/xdev/internal/foreign"
)

var importCommand = &command{
	name: "import", args: "[--omp] [--again] [--json] CLAUDE-SESSION",
	summary: "Import a Claude Code session so omp and xdev continue it",
	example: `  xdev import ~/.claude/projects/-work-app/1af7fc5e-….jsonl
  xdev import 1af7fc5e              a session id (or prefix) under $CLAUDE_CONFIG_DIR or ~/.claude
  xdev import --omp --json 1af7fc5e into omp's data dir; prints {"path", "id"}`,
	options: func() options { return &importOptions{} },
}

// importOptions are the flags and arguments of `xdev import`.
type importOptions struct {
	store  *storeFlags
	again  bool
	asJSON bool
	args   []string
}

func (o *importOptions) define(fs *flag.FlagSet) {
	o.store = addStoreFlags(fs)
	fs.BoolVar(&o.again, "again", false, "import even if the session was imported before")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
}

func (o *importOptions) setArgs(args []string) { o.args = args }

func (o *importOptions) run(e *env) error {
	if len(o.args) != 1 {
		return usagef("want one Claude Code session: a path, or an id or id prefix")
	}
	src, err := findClaudeSession(o.args[0])
	if err != nil {
		return err
	}
	dir, err := o.store.dir()
	if err != nil {
		return err
	}
	id := strings.TrimSuffix(filepath.Base(src), ".jsonl")
	if !o.again {
		prev, err := foreign.Imported(dir, foreign.Source{Harness: "claude", ID: id, Path: src})
		if err != nil {
			return err
		}
		if prev != "" {
			return fmt.Errorf("%s was imported before, as %s (--again imports it again)", src, prev)
		}
	}
	c, err := foreign.ConvertClaude(src, claudeProjectCwd(filepath.Base(filepath.Dir(src))))
	if err != nil {
		return err
	}
	path, newID, err := foreign.Import(dir, c, foreign.Source{Harness: "claude", ID: id, Path: src, Cwd: c.Cwd})
	if err != nil {
		return err
	}
	if o.asJSON {
		return writeJSON(e, struct {
			Path string `json:"path"`
			ID   string `json:"id"`
		}{path, newID})
	}
	fmt.Fprintln(e.stdout, path)
	return nil
}

// claudeDir is Claude Code's data dir: $CLAUDE_CONFIG_DIR, else ~/.claude.
func claudeDir() (string, error) {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".claude"), nil
}

// claudeProjectCwd decodes a Claude project directory's name into the cwd
// it stands for, as omp's projectCwd does without Claude's project list.
func claudeProjectCwd(name string) string {
	if !strings.HasPrefix(name, "-") {
		return name
	}
	return strings.ReplaceAll(name, "-", string(filepath.Separator))
}

// findClaudeSession resolves a path, or a session id or id prefix among
// the transcripts under the Claude data dir's projects.
func findClaudeSession(arg string) (string, error) {
	if strings.HasSuffix(arg, ".jsonl") || strings.ContainsRune(arg, filepath.Separator) {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(abs); err != nil {
			return "", err
		}
		return abs, nil
	}
	root, err := claudeDir()
	if err != nil {
		return "", err
	}
	matches, _ := filepath.Glob(filepath.Join(root, "projects", "*", arg+"*.jsonl"))
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("no Claude Code session %q under %s: %w", arg, filepath.Join(root, "projects"), fs.ErrNotExist)
	case 1:
		return matches[0], nil
	}
	return "", errors.New("Claude Code session " + arg + " is ambiguous: " + strings.Join(matches, ", "))
}
