package main

import (
	"flag"
	"fmt"
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
	root, err := foreign.ClaudeDir()
	if err != nil {
		return err
	}
	src, err := foreign.FindClaude(root, o.args[0])
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
	c, err := foreign.ConvertClaude(src, foreign.ClaudeProjectCwd(filepath.Base(filepath.Dir(src))))
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
