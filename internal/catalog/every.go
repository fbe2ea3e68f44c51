package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/xdev/xdev/internal/foreign"
	"github.com/xdev/xdev/internal/session"
)

// Every is every harness in the order a view of all of them (xdev serve,
// `--from all`) lists them: the omp-format data dirs, then the harnesses
// read in place.
var Every = append([]Harness{Xdev, Omp}, Foreign...)

// DataDirOf is the omp-format data dir of h on this machine: for Xdev
// and Omp the catalog's data dir when it is h's, else h's default one;
// pi's agent dir; "" when h has none here (no sessions directory) or
// keeps its sessions in another format.
func (c *Catalog) DataDirOf(h Harness) string {
	var dir string
	switch {
	case h == c.cfg.DataDirHarness:
		dir = c.cfg.DataDir
	case h == Xdev || h == Omp:
		dir = c.otherDataDir(h)
	case h == Pi:
		dir = c.Root(Pi)
	}
	if dir == "" {
		return ""
	}
	if _, err := os.Stat(session.SessionsDir(dir)); err != nil {
		return ""
	}
	return dir
}

// UnknownHarnessError is a harness name that is none of Every's.
type UnknownHarnessError struct{ Name string }

func (e *UnknownHarnessError) Error() string {
	return fmt.Sprintf("no harness %q: %s", e.Name, HarnessChoices())
}

// HarnessChoices names the harnesses a person may choose among, as help
// texts and errors say them: "xdev, omp, claude, … or all".
func HarnessChoices() string {
	names := make([]string, len(Every))
	for i, h := range Every {
		names[i] = string(h)
	}
	return strings.Join(names, ", ") + " or all"
}

// Scope is the harnesses a command that reads sessions reads, given the
// name a person chose ("" when none): every harness (Every) by default,
// since most of a person's sessions are another harness's, or the data
// dir's alone when a flag chose the data dir (Config.Explicit); "all" is
// every harness, with the data dir a flag chose standing for its own.
// A harness with no sessions here is in the scope and lists nothing.
func (c *Catalog) Scope(from string) ([]Harness, error) {
	switch {
	case from == "" && c.cfg.Explicit:
		return []Harness{c.cfg.DataDirHarness}, nil
	case from == "" || from == "all":
		return Every, nil
	case !slices.Contains(Every, Harness(from)):
		return nil, &UnknownHarnessError{Name: from}
	}
	return []Harness{Harness(from)}, nil
}

// Where is the directory where harness h keeps its sessions on this
// machine, or would keep them (for a person told where xdev looked), and
// whether it is there (its Place's Where).
func (c *Catalog) Where(h Harness) (dir string, here bool) {
	dir, here = c.Place(h).Where()
	if dir == "" && (h == Xdev || h == Omp) {
		// The default of a harness whose data dir a flag moved elsewhere.
		if d, err := defaultDataDir(h); err == nil {
			dir = session.SessionsDir(d)
		}
	}
	return dir, here
}

// Places are the places of the harnesses hs (Place).
func (c *Catalog) Places(hs []Harness) []Place {
	out := make([]Place, len(hs))
	for i, h := range hs {
		out[i] = c.Place(h)
	}
	return out
}

// ListPlaces lists the sessions of places, newest first: each as its
// List does. A place that cannot be read does not hide the others: its
// error is in failed, by harness.
func ListPlaces(ctx context.Context, places []Place, opts ListOptions) (rows []Row, failed map[Harness]error) {
	lists := make([][]Row, 0, len(places))
	for _, p := range places {
		list, err := p.List(ctx, opts)
		if err != nil {
			if failed == nil {
				failed = map[Harness]error{}
			}
			failed[p.Harness()] = err
		}
		lists = append(lists, list)
	}
	if len(lists) == 1 {
		return lists[0], failed
	}
	return NewestFirst(lists), failed
}

// NewestFirst is the rows of lists in one, newest change first; rows
// changed at the same time keep the order of lists and their order within
// them (what a stable sort of their concatenation gives). Each list is a
// listing, newest first already (one that is not is sorted, a copy):
// merged, each row is copied once, into a slice of the right size, where
// appending the lists and sorting them held the rows up to three times
// over (a listing of 25,000 sessions) and moved each many times. lists
// itself is used up.
func NewestFirst(lists [][]Row) []Row {
	n := 0
	newer := func(a, b Row) int { return b.Modified.Compare(a.Modified) }
	for k, rows := range lists {
		n += len(rows)
		if !slices.IsSortedFunc(rows, newer) {
			lists[k] = slices.Clone(rows)
			slices.SortStableFunc(lists[k], newer)
		}
	}
	if n == 0 {
		return nil
	}
	all := make([]Row, 0, n)
	for len(all) < n {
		best := -1
		for k, rows := range lists {
			if len(rows) > 0 && (best < 0 || rows[0].Modified.After(lists[best][0].Modified)) {
				best = k
			}
		}
		all = append(all, lists[best][0])
		lists[best] = lists[best][1:]
	}
	return all
}

// ListHarness lists the sessions of harness h here, newest first (its
// Place's List).
func (c *Catalog) ListHarness(h Harness, opts ListOptions) ([]Row, error) {
	return c.Place(h).List(context.Background(), opts)
}

// PlacesIn are the search places of the harnesses hs here; a harness
// with no sessions on this machine has none.
func (c *Catalog) PlacesIn(hs []Harness) ([]SearchPlace, error) {
	var out []SearchPlace
	for _, h := range hs {
		p, err := c.Place(h).Index()
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
// the session whatever its harness: a file, or a session of a container
// such as opencode's database).
func (c *Catalog) RefOf(row Row) (Ref, error) {
	if foreign.IsContainedSession(row.Path) {
		return c.atContained(row.Path)
	}
	return c.At(row.Path)
}

// Watched is the directory whose tree holds p's sessions, the one a
// watcher of p's changes watches: a data dir's sessions directory, or
// where the harness keeps its sessions (Claude Code's projects/, Codex's
// sessions/, Copilot CLI's session-state/, Gemini CLI's tmp/, opencode's
// data dir, which holds its database).
func (p SearchPlace) Watched() string {
	k, _ := foreign.KindOf(string(p.Harness))
	switch {
	case p.mirror == nil:
		return session.SessionsDir(p.Dir)
	case k.Watched != "":
		return filepath.Join(p.Root, k.Watched)
	}
	return p.Root
}

// WatchedAlso are the directories outside Watched that hold p's
// sessions, each to be watched alone (not its tree), for the changes of
// the files that hold sessions (foreign.IsContainerFile): the projects'
// of a harness that keeps its sessions in them (Crush's .crush/, the
// directory of an Aider chat), as far as they are known now.
func (p SearchPlace) WatchedAlso() []string {
	if !p.InProjects() {
		return nil
	}
	list, _ := p.mirror.Source.List(true)
	var out []string
	seen := map[string]bool{}
	for _, s := range list {
		if _, container, _, ok := foreign.SplitContained(s.Path); ok && !seen[filepath.Dir(container)] {
			seen[filepath.Dir(container)] = true
			out = append(out, filepath.Dir(container))
		}
	}
	slices.Sort(out)
	return out
}

// Concerns reports whether a change of the file at path, in one of
// WatchedAlso's directories, is a change of p's sessions: a file that
// holds them (a database or its -wal, a chat history), not another file
// of the project.
func (p SearchPlace) Concerns(path string) bool { return foreign.IsContainerFile(path) }

// InProjects reports whether p's harness keeps its sessions in the
// projects (foreign.ProjectReader): a watcher never sees all of them,
// since a project it does not know of yet may gain one.
func (p SearchPlace) InProjects() bool {
	if p.mirror == nil {
		return false
	}
	_, ok := p.mirror.Source.(foreign.ProjectReader)
	return ok
}
