package catalog

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/xdev/xdev/internal/foreign"
)

// Projects. Some harnesses keep their sessions in the projects
// themselves (foreign.ProjectReader: Crush's .crush/crush.db, Aider's
// .aider.chat.history.md), so that where they are is known only from
// where people work. The catalog gives such a source, when it lists,
// every directory it knows a person worked in, never a walk of the
// disk:
//
//   - the working directory and every directory above it;
//   - the directories Config.Projects names (--project), else
//     $XDEV_PROJECTS;
//   - the working directory of every session of the other places (the
//     data dirs and the harnesses that keep their sessions in a
//     directory of their own): from the last whole listing of each this
//     catalog made (a listing of every harness lists those first:
//     Every's order), else listed once.

// ProjectsEnv lists, as PATH does, the project directories read when
// Config.Projects names none.
const ProjectsEnv = "XDEV_PROJECTS"

// projectDirs keeps what finds the project directories.
type projectDirs struct {
	mu     sync.Mutex
	listed map[Harness][]string // the cwds of each place's whole listing
	// known is every cwd noted, by itself: the copy every note of it
	// keeps. A listing's cwds are substrings of its list cache, read
	// whole (8 MB at 10,000 omp sessions), which a note that kept one
	// would keep all of, for the catalog's life: `xdev usage`'s walk
	// held two listings' caches to the end for Aider's and Crush's
	// projects.
	known map[string]string
	gen   uint64 // moves when a cwd is first noted
}

// own is the copy of cwd the notes keep, made at its first note. The
// caller holds mu.
func (p *projectDirs) own(cwd string) (owned string, first bool) {
	p.init()
	if c, ok := p.known[cwd]; ok {
		return c, false
	}
	c := strings.Clone(cwd)
	p.known[c] = c
	p.gen++
	return c, true
}

// init makes the maps. The caller holds mu.
func (p *projectDirs) init() {
	if p.listed == nil {
		p.listed, p.known = map[Harness][]string{}, map[string]string{}
	}
}

// ProjectsSeen is a generation that moves whenever a listing this
// catalog made names a working directory none named before: a project
// whose Crush or Aider sessions a watcher may now have to watch.
func (c *Catalog) ProjectsSeen() uint64 {
	c.projectDirs.mu.Lock()
	defer c.projectDirs.mu.Unlock()
	return c.projectDirs.gen
}

// noteCwds keeps the working directories of a place's whole listing, for
// projects to read rather than list that place again.
func (c *Catalog) noteCwds(h Harness, rows []Row) {
	c.noteCwdsOf(h, len(rows), func(k int) string { return rows[k].Cwd })
}

// noteCwdsOf is noteCwds of the n sessions whose k-th's cwd is cwd(k).
func (c *Catalog) noteCwdsOf(h Harness, n int, cwd func(k int) string) {
	var cwds []string
	for k := range n {
		if d := cwd(k); d != "" && (len(cwds) == 0 || cwds[len(cwds)-1] != d) {
			cwds = append(cwds, d)
		}
	}
	c.projectDirs.mu.Lock()
	defer c.projectDirs.mu.Unlock()
	c.projectDirs.init()
	for k, d := range cwds {
		cwds[k], _ = c.projectDirs.own(d)
	}
	c.projectDirs.listed[h] = cwds
}

// addCwds notes the working directories of rows, sessions of place h
// read again (Reread), beside those its last listing noted: a directory
// no longer worked in stays noted until h is listed whole.
func (c *Catalog) addCwds(h Harness, rows []Row) {
	c.projectDirs.mu.Lock()
	defer c.projectDirs.mu.Unlock()
	for _, r := range rows {
		if r.Cwd == "" {
			continue
		}
		if d, first := c.projectDirs.own(r.Cwd); first {
			c.projectDirs.listed[h] = append(slices.Clip(c.projectDirs.listed[h]), d)
		}
	}
}

// listedCwds are the working directories of place h's sessions: from its
// listing made already, else as remembered from the last one while the
// directories its sessions lie in did not move (cwdsmemo.go), else
// listed now.
func (c *Catalog) listedCwds(h Harness) []string {
	c.projectDirs.mu.Lock()
	cwds, ok := c.projectDirs.listed[h]
	c.projectDirs.mu.Unlock()
	if ok {
		return cwds
	}
	if cwds, ok := c.rememberedCwds(h); ok {
		c.noteCwdsOf(h, len(cwds), func(k int) string { return cwds[k] })
		return cwds
	}
	stamps, trusted := c.cwdsStamp(h) // before the listing, so that a change during it is seen next time
	if _, ok := c.sources[h]; ok {
		// In a ListOnce catalog, with subagents' sessions: the listing a
		// search's mirror refresh makes too, then made once. A
		// long-lived one lists without them, as its pages do.
		list, _ := c.sessionsOf(h, c.cfg.ListOnce)
		c.noteCwdsOf(h, len(list), func(k int) string { return list[k].Cwd })
	} else {
		rows, _ := c.Place(h).List(context.Background(), ListOptions{}) // notes them
		c.noteCwdsOf(h, len(rows), func(k int) string { return rows[k].Cwd })
	}
	c.projectDirs.mu.Lock()
	cwds = slices.Clone(c.projectDirs.listed[h])
	c.projectDirs.mu.Unlock()
	slices.Sort(cwds)
	cwds = slices.Compact(cwds)
	if trusted {
		c.rememberCwds(h, stamps, cwds)
	}
	return cwds
}

// projects are the directories a ProjectReader reads the sessions of,
// found anew at each call (a long-lived catalog, serve's, sees new ones
// as the listings it makes note new working directories).
func (c *Catalog) projects() []string {
	var dirs []string
	seen := map[string]bool{}
	add := func(d string) {
		if d == "" || !filepath.IsAbs(d) {
			return
		}
		d = filepath.Clean(d)
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	if c.cfg.Cwd != "" {
		for _, d := range foreign.Ancestors(c.cfg.Cwd) {
			add(d)
		}
	}
	named := c.cfg.Projects
	if named == nil {
		named = filepath.SplitList(os.Getenv(ProjectsEnv))
	}
	for _, d := range named {
		if abs, err := filepath.Abs(d); err == nil {
			add(abs)
		}
	}
	for _, h := range Every {
		if _, ok := c.sources[h].(foreign.ProjectReader); ok {
			continue // listing it would ask for the projects again
		}
		for _, d := range c.listedCwds(h) {
			add(d)
		}
	}
	slices.Sort(dirs)
	return dirs
}
