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
//     directory of their own), listed once per catalog.

// ProjectsEnv lists, as PATH does, the project directories read when
// Config.Projects names none.
const ProjectsEnv = "XDEV_PROJECTS"

// projectDirs finds the project directories, once per catalog.
type projectDirs struct {
	once sync.Once
	dirs []string
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
			rows, _ := c.Place(h).List(context.Background(), ListOptions{Subagents: false})
			for _, r := range rows {
				add(r.Cwd)
			}
		}
		slices.Sort(c.projectDirs.dirs)
	})
	return c.projectDirs.dirs
}
