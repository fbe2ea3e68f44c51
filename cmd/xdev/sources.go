package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/xdev/xdev/internal/foreign"
	"github.com/xdev/xdev/internal/session"
)

// sourceFlags choose where the other harnesses keep their sessions.
type sourceFlags struct {
	claude, codex, pi string
}

func addSourceFlags(fs *flag.FlagSet) *sourceFlags {
	f := &sourceFlags{}
	fs.StringVar(&f.claude, "claude-dir", "", "Claude Code's dir (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	fs.StringVar(&f.codex, "codex-dir", "", "Codex's dir (default $CODEX_HOME or ~/.codex)")
	fs.StringVar(&f.pi, "pi-dir", "", "pi's agent dir (default ~/.pi/agent)")
	return f
}

// foreignHarnesses are the harnesses a SESSION id is looked up in when the
// data dir does not hold it, in this order.
var foreignHarnesses = []string{foreign.HarnessClaude, foreign.HarnessCodex, foreign.HarnessPi}

// source is harness's sessions, under the root its flag names, else
// where the harness keeps them.
func (f *sourceFlags) source(harness string) (foreign.Source, error) {
	flagged := map[string]string{foreign.HarnessClaude: f.claude, foreign.HarnessCodex: f.codex, foreign.HarnessPi: f.pi}[harness]
	root := flagged
	if flagged == "" {
		var err error
		if root, err = foreign.DefaultRoot(harness); err != nil {
			return nil, err
		}
	} else if abs, err := filepath.Abs(flagged); err == nil {
		root = abs
	}
	return foreign.NewSource(harness, root)
}

// root is the data dir of harness.
func (f *sourceFlags) root(harness string) (string, error) {
	src, err := f.source(harness)
	if err != nil {
		return "", err
	}
	return src.Root(), nil
}

// list lists one foreign harness's sessions; a harness that is not
// installed lists nothing.
func (f *sourceFlags) list(harness string, subagents bool) ([]foreign.Session, error) {
	src, err := f.source(harness)
	if err != nil {
		return nil, err
	}
	return src.List(subagents)
}

// errNoForeign is find's error for an id no other harness has.
var errNoForeign = errors.New("no Claude Code, Codex or pi session")

// find finds a foreign session: a path (its first line says which
// harness wrote it), else an id or id prefix under each harness's dir.
// ok is false, with no error, for a path of an omp-format file.
func (f *sourceFlags) find(arg string) (s foreign.Session, ok bool, err error) {
	if session.SessionPath(arg) {
		path, err := filepath.Abs(arg)
		if err != nil {
			return s, false, err
		}
		harness, err := foreign.Detect(path)
		if err != nil || harness == "" {
			return s, false, err
		}
		src, err := f.source(harness)
		if err != nil {
			return s, false, err
		}
		s, err = src.At(path)
		return s, err == nil, err
	}
	var found []foreign.Session
	for _, h := range foreignHarnesses {
		list, err := f.list(h, true)
		if err != nil {
			continue // a harness that cannot be read holds nothing we can show
		}
		for _, s := range list {
			if s.Err == nil && strings.HasPrefix(s.ID, arg) {
				found = append(found, s)
			}
		}
	}
	switch len(found) {
	case 0:
		return s, false, fmt.Errorf("%w %q", errNoForeign, arg)
	case 1:
		return found[0], true, nil
	}
	names := make([]string, len(found))
	for i, s := range found {
		names[i] = s.Harness + " " + s.Path
	}
	return s, false, fmt.Errorf("%q names more than one session: %s", arg, strings.Join(names, ", "))
}

// readable is a session to read: an omp-format file, or a foreign
// session converted into one in a private temp dir.
type readable struct {
	path    string // the omp-format file to open
	shown   string // the path to print: the source's for a foreign session
	harness string // "" for the data dir's own
	skipped int    // the foreign source's lines skipped as unreadable
	cleanup func()
}

// resolveReadable finds the session SESSION names for show and export:
// in the data dir as resolve does, else among the other harnesses'. A
// Claude Code or Codex session is converted as `xdev import` converts
// it, into a temp file removed by cleanup; its source is only read.
func resolveReadable(store *storeFlags, sources *sourceFlags, arg string) (readable, error) {
	r := readable{cleanup: func() {}}
	var own error
	if !session.SessionPath(arg) {
		path, err := store.resolve(arg)
		if err == nil || store.explicit() {
			r.path, r.shown = path, path
			return r, err
		}
		own = err
	}
	s, ok, err := sources.find(arg)
	if err != nil {
		if own != nil && errors.Is(err, errNoForeign) {
			return r, fmt.Errorf("%w (nor is it a Claude Code, Codex or pi session's)", own)
		}
		return r, err
	}
	if !ok {
		r.path, r.shown = arg, arg
		return r, nil
	}
	r.shown, r.harness = s.Path, s.Harness
	src, err := sources.source(s.Harness)
	if err != nil {
		return r, err
	}
	conv := src.Stream(s)
	if conv == nil { // pi's: omp's format, opened as it is
		r.path = s.Path
		return r, nil
	}
	tmp, err := os.MkdirTemp("", "xdev-"+s.Harness+"-")
	if err != nil {
		return r, err
	}
	r.cleanup = func() { os.RemoveAll(tmp) }
	counted := func(begin func(*foreign.Converted) error, emit func(string, []byte) error) error {
		return conv(func(c *foreign.Converted) error { r.skipped = c.Skipped; return begin(c) }, emit)
	}
	if r.path, _, err = foreign.ImportStream(tmp, s.Provenance(), counted); err != nil {
		r.cleanup()
		return r, err
	}
	return r, nil
}
