package catalog

import (
	"context"
	"os"
	"path/filepath"
	"slices"
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
//     directory of their own): from their listings this catalog made
//     already (a listing of every harness lists those first: Every's
//     order), else listed once.

// ProjectsEnv lists, as PATH does, the project directories read when
// Config.Projects names none.
const ProjectsEnv = "XDEV_PROJECTS"

// projectDirs finds the project directories, once per catalog.
type projectDirs struct {
	once sync.Once
	dirs []string

	mu     sync.Mutex
	listed map[Harness][]string // the cwds of each place's whole listing
}

// noteCwds keeps the working directories of a place's whole listing, for
// projects to read rather than list that place again.
func (c *Catalog) noteCwds(h Harness, rows []Row) {
	var cwds []string
	for _, r := range rows {
		if r.Cwd != "" && (len(cwds) == 0 || cwds[len(cwds)-1] != r.Cwd) {
			cwds = append(cwds, r.Cwd)
		}
	}
	c.projectDirs.mu.Lock()
	defer c.projectDirs.mu.Unlock()
	if c.projectDirs.listed == nil {
		c.projectDirs.listed = map[Harness][]string{}
	}
	c.projectDirs.listed[h] = cwds
}

// listedCwds are the working directories of place h's sessions: from its
// listing made already, else listed now.
func (c *Catalog) listedCwds(h Harness) []string {
	c.projectDirs.mu.Lock()
	cwds, ok := c.projectDirs.listed[h]
	c.projectDirs.mu.Unlock()
	if ok {
		return cwds
	}
	rows, _ := c.Place(h).List(context.Background(), ListOptions{}) // notes them
	c.projectDirs.mu.Lock()
	defer c.projectDirs.mu.Unlock()
	if cwds, ok = c.projectDirs.listed[h]; !ok {
		for _, r := range rows {
			cwds = append(cwds, r.Cwd)
		}
	}
	return cwds
}

// projects are the directories a ProjectReader reads the sessions of.
func (c *Catalog) projects() []string {
	c.projectDirs.once.Do(func() {
		seen := map[string]bool{}
		add := func(d string) {
			if d == "" || !filepath.IsAbs(d) {
				return
			}
			d = filepath.Clean(d)
			if !seen[d] {
				seen[d] = true
				c.projectDirs.dirs = append(c.projectDirs.dirs, d)
			}
		}
		if c.cfg.Cwd != "" {
			for d := filepath.Clean(c.cfg.Cwd); ; d = filepath.Dir(d) {
				add(d)
				if d == filepath.Dir(d) {
					break
				}
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
		slices.Sort(c.projectDirs.dirs)
	})
	return c.projectDirs.dirs
}
