package catalog

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/foreign"
	"github.com/xdev/xdev/internal/secrets"
	"github.com/xdev/xdev/internal/session"
)

// A Row is one session as a listing shows it, whichever place it is in:
// what was read of its head, its tail and its harness's own indexes,
// never the whole file. The JSON of `xdev list` renders it.
type Row struct {
	Harness Harness
	ID      string
	// Title is what a listing calls the session (session.SessionInfo's
	// ListTitle: its title, else a compaction's short summary);
	// TitleSource says where a real title came from ("" for a fallback).
	Title, TitleSource string
	ShortSummary       string
	Status             session.Status // "" where the harness has none
	Cwd, Path          string
	Created, Modified  time.Time
	Size               int64
	ParentSession      string
	Subagent           bool
	Version            int // the omp format version; 0 for another harness's
	FirstMessage       string
	// Err says why a file where sessions live is not one (or could not be
	// read); the other fields are then partial.
	Err error
}

// ListOptions choose what a listing holds.
type ListOptions struct {
	// Subagents lists subagent transcripts too.
	Subagents bool
	// Cwd lists only the sessions of this project ("" for every
	// project's); a file that is not a session is listed wherever it is.
	Cwd string
}

// ListDataDir lists the omp-format data dir dir, of harness h (Xdev,
// Omp), newest first, with each session's status.
func ListDataDir(h Harness, dir string, opts ListOptions) ([]Row, error) {
	infos, err := session.List(dir, &session.ListOptions{Subagents: opts.Subagents, Status: true, Cwd: opts.Cwd, Cache: ListCacheDir()})
	if err != nil {
		return nil, err
	}
	out := make([]Row, 0, len(infos))
	for _, i := range infos {
		out = append(out, rowOf(h, i))
	}
	return out, nil
}

// rowOf is the Row of a data dir's session, as List described it.
func rowOf(h Harness, i session.SessionInfo) Row {
	r := Row{Harness: h, ID: i.ID, Title: i.ListTitle(), ShortSummary: i.ShortSummary, Status: i.Status,
		Cwd: i.Cwd, Path: i.Path, Created: i.Created, Modified: i.Modified, Size: i.Size,
		ParentSession: i.ParentSession, Subagent: i.Subagent, Version: i.Version, FirstMessage: i.FirstMessage, Err: i.Err}
	if r.Title == i.Title {
		r.TitleSource = i.TitleSource.String()
	}
	return r.masked()
}

// masked is the row with the secrets of its texts (a title, a first
// message, a summary: what a person reads of a listing) masked. Every
// row a place lists is: a listing reaches pages, MCP results and JSON.
func (r Row) masked() Row {
	r.Title, r.ShortSummary, r.FirstMessage = secrets.Mask(r.Title), secrets.Mask(r.ShortSummary), secrets.Mask(r.FirstMessage)
	return r
}

// Relist is what ListHarness(h, opts) lists once the files at changed
// have changed, given prev, what it listed before they did: it reads
// only those files (Reread), where a listing reads every project
// directory of the data dir. It is how a watcher told of a few appends
// among thousands of sessions keeps its listing. prev is not changed.
// ok is false when only a whole listing can say (Reread).
func (c *Catalog) Relist(h Harness, prev []Row, changed []string, opts ListOptions) (rows []Row, ok bool) {
	listed := make(map[string]bool, len(prev))
	for _, r := range prev {
		listed[r.Path] = true
	}
	under := func(d string) bool {
		return slices.ContainsFunc(prev, func(r Row) bool { return IsUnder(r.Path, d) })
	}
	fresh, ok := c.Reread(h, changed, opts, func(p string) bool { return listed[p] }, under)
	if !ok {
		return nil, false
	}
	seen := make(map[string]bool, len(changed))
	for _, p := range changed {
		seen[filepath.Clean(p)] = true
	}
	kept := make([]Row, 0, len(prev))
	for _, r := range prev {
		if !seen[r.Path] {
			kept = append(kept, r)
		}
	}
	rows = MergeListing(kept, fresh)
	if opts.Cwd == "" {
		c.noteCwds(h, rows) // as a whole listing would
	}
	return rows, true
}

// Reread is what a listing of harness h now says of the files at
// changed, and only of them: the rows of those that are sessions, in
// DataDirOrder; a changed path with no row is gone (or not a session).
// It reads only those files: a data dir's (Xdev, Omp) through
// session.ListPaths, another harness's where its source can say what its
// listing says of a few files alone (foreign.PathLister: Claude Code's
// transcripts, Codex's rollouts). listed reports whether the caller's
// listing has a row at a path, under whether it has one under a
// directory.
//
// ok is false when only a whole listing can say: h is neither, a path
// is a directory (made or renamed into place), or a path the caller has
// no row at names a directory it has rows under (removed or renamed
// away, whose files were not each seen), or is one of what the
// harness's listing reads besides its transcripts.
func (c *Catalog) Reread(h Harness, changed []string, opts ListOptions, listed func(path string) bool, under func(dir string) bool) (fresh []Row, ok bool) {
	dir := ""
	if h == Xdev || h == Omp {
		dir = c.DataDirOf(h)
	} else if c.sources[h] != nil {
		return c.rereadForeign(h, changed, opts)
	}
	if dir == "" {
		return nil, false
	}
	infos, ok := session.ListPaths(dir, changed, &session.ListOptions{Subagents: opts.Subagents, Status: true, Cwd: opts.Cwd})
	if !ok {
		return nil, false
	}
	read := make(map[string]bool, len(infos))
	for _, i := range infos {
		read[i.Path] = true
	}
	root := session.SessionsDir(dir)
	for _, p := range changed {
		// A changed path that is neither a listed file nor one read now
		// may be a directory removed or renamed away, with sessions under
		// it.
		p = filepath.Clean(p)
		if !read[p] && !listed(p) && len(p) > len(root) && under(p) {
			return nil, false
		}
	}
	fresh = make([]Row, 0, len(infos))
	for _, i := range infos {
		fresh = append(fresh, rowOf(h, i))
	}
	slices.SortFunc(fresh, DataDirOrder)
	if opts.Cwd == "" {
		c.addCwds(h, fresh)
	}
	return fresh, true
}

// rereadForeign is Reread of another harness's files, through its
// source's PathLister: the rows its listing (harnessPlace.List) makes of
// them.
func (c *Catalog) rereadForeign(h Harness, changed []string, opts ListOptions) ([]Row, bool) {
	pl, ok := c.sources[h].(foreign.PathLister)
	if !ok || opts.Cwd != "" {
		return nil, false
	}
	list, ok := pl.ListPaths(changed, opts.Subagents)
	if !ok {
		return nil, false
	}
	fresh := make([]Row, 0, len(list))
	for _, s := range list {
		fresh = append(fresh, rowOfForeign(h, s))
	}
	slices.SortFunc(fresh, DataDirOrder)
	c.addCwds(h, fresh)
	return fresh, true
}

// DataDirOrder is the order of a data dir's listing (session.List's):
// newest change first, then newest made, then by path, last first.
func DataDirOrder(a, b Row) int {
	return cmp.Or(b.Modified.Compare(a.Modified), b.Created.Compare(a.Created), strings.Compare(b.Path, a.Path))
}

// MergeListing is a data dir's listing of kept, the rows of its files not
// read again, and fresh, those read again (Reread), in DataDirOrder.
// kept is in that order already when it comes from a listing, so fresh
// is sorted and merged in, where sorting the whole moved every row.
func MergeListing(kept, fresh []Row) []Row {
	if !slices.IsSortedFunc(kept, DataDirOrder) {
		kept = slices.Clone(kept)
		slices.SortStableFunc(kept, DataDirOrder)
	}
	if !slices.IsSortedFunc(fresh, DataDirOrder) {
		fresh = slices.Clone(fresh)
		slices.SortFunc(fresh, DataDirOrder)
	}
	return mergeSorted(kept, fresh, DataDirOrder)
}

// IsUnder reports whether path lies under the directory dir.
func IsUnder(path, dir string) bool {
	return len(path) > len(dir) && strings.HasPrefix(path, dir) && path[len(dir)] == filepath.Separator
}

// mergeSorted merges a and b, each sorted by order, into one sorted
// slice; of two equal rows, a's comes first.
func mergeSorted(a, b []Row, order func(a, b Row) int) []Row {
	out := make([]Row, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if order(b[0], a[0]) < 0 {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}

// List lists another harness's sessions (Claude, Codex, Pi), newest
// first; a harness not on this machine lists nothing.

// Root is harness h's directory (its default, or where Config.Roots
// moved it); "" for a harness read from the data dir.
func (c *Catalog) Root(h Harness) string {
	if s := c.sources[h]; s != nil {
		return s.Root()
	}
	return ""
}

// Roots are the other harnesses' roots on this machine: the directories
// xdev only reads.
func (c *Catalog) Roots() []string {
	var out []string
	for _, h := range Foreign {
		if s := c.sources[h]; s != nil {
			out = append(out, s.Root())
		}
	}
	return out
}

// sameDir reports whether two directory names are the same directory.
func sameDir(a, b string) bool {
	if a == "" {
		return false
	}
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}
