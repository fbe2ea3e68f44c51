package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/xdev/xdev/internal/atomicfile"
)

// A killed writer can leave three kinds of name beside the sessions it
// was writing: a temp file of a new or rewritten file (atomicfile's,
// named ".<name>.xdev-<pid>-<n>.tmp" where the system has no nameless temp
// files), a temp directory named the same way (a new project directory,
// made with its first file in it and renamed into place: killed before
// the rename, it holds that file or nothing) and omp's lockfile
// (".<name>.jsonl.lock") whose holder is gone. None can be a session
// file's or a project directory's name (listers skip atomicfile.IsTemp
// names). isLeftover says which are such leftovers, by
// atomicfile.Leftover and omp's stale-lock rule; a write into a project
// directory removes those it finds there and beside it (SweepLeftovers),
// and VerifyDataDir reports them (ProblemLeftover).

// isLeftover reports whether the file or directory at path, with info,
// is a temp file, temp directory or lockfile of a writer that is gone.
func isLeftover(path string, info fs.FileInfo) bool {
	name := filepath.Base(path)
	if info.IsDir() {
		return atomicfile.Leftover(name, info)
	}
	if strings.HasSuffix(name, ".jsonl") || !info.Mode().IsRegular() {
		return false
	}
	if atomicfile.Leftover(name, info) {
		return true
	}
	return IsLockfile(name) && lockIsStale(path)
}

// RemoveLeftover removes path if it is still a leftover (see isLeftover).
func RemoveLeftover(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !isLeftover(path, fi) {
		return fmt.Errorf("%s: not a leftover of a writer that is gone; left alone", path)
	}
	if fi.IsDir() {
		return os.RemoveAll(path) // a temp directory: only its writer's file
	}
	return os.Remove(path)
}

// SweepLeftovers removes the leftovers in dir and in its parent (not
// below them): a writer calls it on the project directory it is about to
// write into, whose parent holds the temp directories of new project
// directories. It sweeps a directory once in a process: the leftovers are
// of writers gone before the sweep, and reading a directory of 10,000
// sessions for each file a process writes there (a mirror's refresh
// writes thousands) made the writes quadratic. One a writer leaves later
// is the next process's.
func SweepLeftovers(dir string) {
	dir = filepath.Clean(dir)
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if _, done := swept.LoadOrStore(d, true); !done {
			sweep(d)
		}
	}
}

// swept are the directories SweepLeftovers swept.
var swept sync.Map

// sweep removes the leftovers in dir (not below it).
func sweep(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	ents, err := d.ReadDir(-1) // unsorted: the order does not matter
	d.Close()
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.Name()[0] != '.' || !e.Type().IsRegular() && !e.IsDir() {
			continue
		}
		if fi, err := e.Info(); err == nil && isLeftover(filepath.Join(dir, e.Name()), fi) {
			if fi.IsDir() {
				os.RemoveAll(filepath.Join(dir, e.Name()))
			} else {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
}
