package main

import (
	"flag"
	"fmt"
	"path/filepath"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/term"
)

var importCommand = &command{
	name: "import", args: "[--omp] [--again] [--cwd DIR] [--json] SESSION",
	summary: "Import a " + catalog.Names(catalog.ConvertedHarnesses(), "or") + " session so omp and xdev continue it",
	example: `  xdev import ~/.claude/projects/-work-app/1af7fc5e-….jsonl
  xdev import 1af7fc5e              an id (or prefix) of a Claude Code or Codex session
  xdev import ~/.codex/sessions/2026/02/23/rollout-….jsonl
  xdev import --omp --json 1af7fc5e  into omp's data dir; prints {"path", "id"}`,
	options: func() options { return &importOptions{} },
}

// importOptions are the flags and arguments of `xdev import`.
type importOptions struct {
	store   *storeFlags
	sources *sourceFlags
	again   bool
	cwd     string
	asJSON  bool
	args    []string
}

func (o *importOptions) define(fs *flag.FlagSet) {
	o.store = addDestinationFlags(fs)
	o.sources = addSourceFlags(fs)
	fs.BoolVar(&o.again, "again", false, "import even if the session was imported before")
	fs.StringVar(&o.cwd, "cwd", "", "the session's working `directory`, when the transcript names none")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
}

func (o *importOptions) setArgs(args []string) { o.args = args }

func (o *importOptions) run(e *env) error {
	if len(o.args) != 1 {
		return usagef("want one %s session: a path, or an id or id prefix", catalog.Names(catalog.ConvertedHarnesses(), "or"))
	}
	c, ref, err := resolve(e, o.store, o.sources, o.args[0])
	if err != nil {
		return err
	}
	if !ref.Harness.Converted() {
		return fmt.Errorf("%s is in omp's format already: omp and xdev open it as it is, and 'xdev fork %s' copies it into the data dir", ref.Path, o.args[0])
	}
	cwd := ""
	if o.cwd != "" {
		if cwd, err = filepath.Abs(o.cwd); err != nil {
			return err
		}
	}
	im, err := c.Import(ref, catalog.ImportOptions{Again: o.again, Cwd: cwd})
	if err != nil {
		return err
	}
	path, newID, skipped := im.Path, im.ID, im.Skipped
	if skipped > 0 {
		fmt.Fprintf(e.ErrOut, "xdev import: %s of %s skipped as unreadable (torn, junk or too long), as omp's import skips them\n",
			term.Plural(skipped, "line"), ref.Path)
	}
	if o.asJSON {
		return writeJSON(e, struct {
			Path string `json:"path"`
			ID   string `json:"id"`
		}{path, newID})
	}
	fmt.Fprintln(e.Out, path)
	return nil
}
