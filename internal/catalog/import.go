package catalog

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/xdev/xdev/internal/foreign"
)

// ImportOptions say how Import imports.
type ImportOptions struct {
	// Again imports a session imported before.
	Again bool
	// Cwd (absolute) is the working directory of a transcript that names
	// none; without it such a transcript is refused.
	Cwd string
}

// Imported is what Import wrote.
type Imported struct {
	Path, ID string
	// Skipped counts the source's lines skipped as unreadable, as omp's
	// import skips them.
	Skipped int
}

// ErrOmpFormat is Import's error for a session in omp's format already
// (the data dir's, omp's, pi's, a file's): it opens as it is.
var ErrOmpFormat = errors.New("in omp's format already")

// Import converts the Claude Code or Codex session ref names as omp's
// importer does (foreign.ForResume) into a new session of the data dir,
// with omp's provenance entry. A session imported before (a provenance
// entry naming the same source path, or another file with its id) is
// refused, naming the earlier import, unless opts.Again.
func (c *Catalog) Import(ref Ref, opts ImportOptions) (Imported, error) {
	if !ref.Harness.Converted() || ref.Foreign == nil {
		return Imported{}, fmt.Errorf("%s is %w: omp and xdev open it as it is, and 'xdev fork' copies it into the data dir", ref.Path, ErrOmpFormat)
	}
	s := *ref.Foreign
	dir := c.DataDir()
	src := s.Provenance()
	if !opts.Again {
		prev, ok, err := foreign.Imported(dir, src, cacheDir("imports"))
		if err != nil {
			return Imported{}, err
		}
		switch {
		case ok && prev.SamePath(s.Path):
			return Imported{}, fmt.Errorf("%s was imported before, as %s (--again imports it again)", s.Path, prev.Path)
		case ok:
			// Another file with this session's id: the same rollout
			// moved or compressed, or a copy that may hold more or less.
			return Imported{}, fmt.Errorf("%s is %s session %s, which was imported before from another file, %s, as %s (--again imports this file too)",
				s.Path, ref.Harness.Name(), s.ID, prev.Source.Path, prev.Path)
		}
	}
	var out Imported
	conv := c.sources[ref.Harness].Stream(s, foreign.ForResume)
	counted := func(begin func(*foreign.Converted) error, emit func(string, []byte) error) error {
		return conv(func(cv *foreign.Converted) error {
			out.Skipped = cv.Skipped
			// A session lives under its directory's project: one the
			// transcript does not name (a file outside Claude's projects
			// directory, no record with a cwd) is given or refused, never
			// made up from a directory's name.
			switch {
			case !filepath.IsAbs(cv.Cwd) && opts.Cwd == "":
				return fmt.Errorf("%s names no working directory (no record has a cwd, and it is not in a projects directory): --cwd DIR says which", s.Path)
			case !filepath.IsAbs(cv.Cwd):
				cv.Cwd = opts.Cwd
			}
			return begin(cv)
		}, emit)
	}
	var err error
	out.Path, out.ID, err = foreign.ImportStream(dir, src, counted)
	return out, err
}
