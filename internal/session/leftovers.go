package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/xdev/xdev/internal/atomicfile"
)

// A killed writer can leave two kinds of file beside the sessions it was
// writing: a temp file of a new or rewritten file (atomicfile's, named
// ".<name>.xdev-<pid>-<n>.tmp" where the system has no nameless temp
// files) and omp's lockfile (".<name>.jsonl.lock") whose holder is gone.
// Neither name can be a session file's (*.jsonl). IsLeftover says which
// files are such leftovers, by atomicfile.Leftover and omp's stale-lock
// rule; a write into a project directory removes those it finds there
// (SweepLeftovers), and VerifyDataDir reports them (ProblemLeftover).

// IsLeftover reports whether the file at path, with info, is a temp file
// or lockfile of a writer that is gone.
func IsLeftover(path string, info fs.FileInfo) bool {
	name := filepath.Base(path)
	if strings.HasSuffix(name, ".jsonl") || !info.Mode().IsRegular() {
		return false
	}
	if atomicfile.Leftover(name, info) {
		return true
	}
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".jsonl.lock") && lockIsStale(path)
}

// RemoveLeftover removes path if it is still a leftover (see IsLeftover).
func RemoveLeftover(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !IsLeftover(path, fi) {
		return fmt.Errorf("%s: not a leftover of a writer that is gone; left alone", path)
	}
	return os.Remove(path)
}

// SweepLeftovers removes the leftovers in dir (not below it): a writer
// calls it on the project directory it is about to write into.
func SweepLeftovers(dir string) { sweep(dir) }

// sweep removes the leftovers in dir (not below it).
func sweep(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.Name()[0] != '.' || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil && IsLeftover(filepath.Join(dir, e.Name()), fi) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
