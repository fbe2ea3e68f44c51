package main

import (
	"cmp"
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

// root is the data dir of harness.
func (f *sourceFlags) root(harness string) (string, error) {
	var flagged string
	var def func() (string, error)
	switch harness {
	case foreign.HarnessClaude:
		flagged, def = f.claude, foreign.ClaudeDir
	case foreign.HarnessCodex:
		flagged, def = f.codex, foreign.CodexDir
	case foreign.HarnessPi:
		flagged, def = f.pi, piDir
	default:
		return "", fmt.Errorf("no harness %q", harness)
	}
	if flagged != "" {
		return filepath.Abs(flagged)
	}
	return def()
}

func piDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".pi", "agent"), nil
}

// list lists one foreign harness's sessions; a harness that is not
// installed lists nothing.
func (f *sourceFlags) list(harness string, subagents bool) ([]foreign.Session, error) {
	root, err := f.root(harness)
	if err != nil {
		return nil, err
	}
	if harness == foreign.HarnessPi {
		return piSessions(root, subagents)
	}
	return foreign.List(harness, root, subagents)
}

// piSessions lists pi's sessions: omp's format without the title slot,
// which session.List reads as it is; a session_info name near the end is
// the title.
func piSessions(root string, subagents bool) ([]foreign.Session, error) {
	infos, err := session.List(root, &session.ListOptions{Subagents: subagents})
	if err != nil {
		return nil, err
	}
	out := make([]foreign.Session, 0, len(infos))
	for _, i := range infos {
		s := foreign.Session{Harness: foreign.HarnessPi, ID: i.ID, Path: i.Path, Cwd: i.Cwd,
			Title: i.Title, FirstMessage: i.FirstMessage,
			Created: i.Created, Modified: i.Modified, Size: i.Size, Subagent: i.Subagent, Err: i.Err}
		if i.Err == nil {
			s.Title = cmp.Or(foreign.PiName(i.Path), i.Title)
		}
		out = append(out, s)
	}
	return out, nil
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
		root, err := f.root(harness)
		if err != nil {
			return s, false, err
		}
		s, err = foreign.At(harness, root, path)
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
	if s.Harness == foreign.HarnessPi {
		r.path = s.Path
		return r, nil
	}
	conv, err := foreign.StreamOf(s)
	if err != nil {
		return r, err
	}
	tmp, err := os.MkdirTemp("", "xdev-"+s.Harness+"-")
	if err != nil {
		return r, err
	}
	r.cleanup = func() { os.RemoveAll(tmp) }
	if r.path, _, err = foreign.ImportStream(tmp, s.Source(), conv); err != nil {
		r.cleanup()
		return r, err
	}
	return r, nil
}
