package catalog

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/xdev/xdev/internal/foreign"
	"github.com/xdev/xdev/internal/session"
)

// Every is every harness in the order a view of all of them (xdev serve,
// `--from all`) lists them: the omp-format data dirs, then the harnesses
// read in place.
var Every = append([]Harness{Xdev, Omp}, Foreign...)

// DataDirOf is the omp-format data dir of h (Xdev or Omp) on this
// machine: the catalog's data dir when it is h's, else h's default one;
// "" when h has none here (no sessions directory).
func (c *Catalog) DataDirOf(h Harness) string {
	dir := c.otherDataDir(h)
	if h == c.cfg.DataDirHarness {
		dir = c.cfg.DataDir
	}
	if dir == "" {
		return ""
	}
	if _, err := os.Stat(session.SessionsDir(dir)); err != nil {
		return ""
	}
	return dir
}

// ListEvery lists the sessions of every harness here (Every), newest
// first: each as ListHarness does. A harness that cannot be read does not
// hide the others: its error is in failed, by harness.
func (c *Catalog) ListEvery(opts ListOptions) (rows []Row, failed map[Harness]error) {
	for _, h := range Every {
		list, err := c.ListHarness(h, opts)
		if err != nil {
			if failed == nil {
				failed = map[Harness]error{}
			}
			failed[h] = err
		}
		rows = append(rows, list...)
	}
	slices.SortStableFunc(rows, func(a, b Row) int { return b.Modified.Compare(a.Modified) })
	return rows, failed
}

// ListHarness lists the sessions of harness h here, newest first: a data
// dir (Xdev, Omp) as ListDataDir does, nothing when h has none here;
// another harness as List does.
func (c *Catalog) ListHarness(h Harness, opts ListOptions) ([]Row, error) {
	if h == Xdev || h == Omp {
		dir := c.DataDirOf(h)
		if dir == "" {
			return nil, nil
		}
		return ListDataDir(h, dir, opts)
	}
	return c.List(h, opts)
}

// PlacesEvery are the search places of every harness here (Every); a
// harness with no sessions on this machine has none.
func (c *Catalog) PlacesEvery() ([]Place, error) {
	var out []Place
	for _, h := range Every {
		if h == Xdev || h == Omp {
			if dir := c.DataDirOf(h); dir != "" {
				out = append(out, DataDirPlace(h, dir))
			}
			continue
		}
		p, err := c.HarnessPlace(h)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}

// RefOf is the Ref of a session a listing gave (row.Path, which names
// the session whatever its harness: a file, or an opencode database's
// session).
func (c *Catalog) RefOf(row Row) (Ref, error) {
	if foreign.IsOpencodeSessionPath(row.Path) {
		return c.atOpencode(row.Path)
	}
	return c.At(row.Path)
}

// Watched is the directory whose tree holds p's sessions, the one a
// watcher of p's changes watches: a data dir's sessions directory, or
// where the harness keeps its sessions (Claude Code's projects/, Codex's
// sessions/, Copilot CLI's session-state/, Gemini CLI's tmp/, opencode's
// data dir, which holds its database).
func (p Place) Watched() string {
	sub := map[Harness]string{Claude: "projects", Codex: "sessions", Copilot: "session-state", Gemini: "tmp"}[p.Harness]
	switch {
	case p.mirror == nil:
		return session.SessionsDir(p.Dir)
	case sub != "":
		return filepath.Join(p.Root, sub)
	}
	return p.Root
}
