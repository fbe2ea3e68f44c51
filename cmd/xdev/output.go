package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/session"
)

// An output file (`export -o FILE`) is what a command writes that is not a
// session: it may replace a file the user named, but only once the new
// content is complete, and never a transcript. These are the rules, in one
// place:
//
//   - The content goes to a temp file beside the target and is renamed over
//     it on success (internal/atomicfile): a failed export leaves the target
//     as it was, and removes only the temp file it made.
//   - A name ending in .jsonl is a session's: refused.
//   - The file of a session being read is refused, whatever its name.
//   - Nothing is written under a sessions or blobs directory of a data dir
//     (xdev's, omp's, or the one the input lies in), nor into the
//     directory of any other harness the catalog knows (its default and
//     the one a flag chose: ~/.claude, ~/.codex, ~/.pi/agent, ~/.copilot,
//     ~/.gemini, opencode's data dir, …).
//   - A symlink is followed: its target is what gets replaced, and the
//     rules apply to the target.
//   - An existing FIFO or device (-o /dev/stdout) is written to in place,
//     since there is no file to replace.

// outputPolicy knows which files and directories an output must not touch.
type outputPolicy struct {
	inputs []string // sessions being read
	roots  []string // directories never written into (canonical paths)
}

// outputPolicy returns the policy for a command reading inputs with the
// data dir these flags choose and the harness directories sources
// choose.
func (f *storeFlags) outputPolicy(sources *sourceFlags, inputs ...string) *outputPolicy {
	p := &outputPolicy{inputs: inputs}
	var dataDirs []string
	if d, err := f.dir(); err == nil {
		dataDirs = append(dataDirs, d)
	}
	if d, err := session.DefaultDataDir(); err == nil {
		dataDirs = append(dataDirs, d)
	}
	if d, err := session.OmpDataDir(); err == nil {
		dataDirs = append(dataDirs, d)
	}
	for _, d := range dataDirs {
		p.roots = append(p.roots, canonicalPath(session.SessionsDir(d)), canonicalPath(session.BlobsDir(d)))
	}
	for _, in := range inputs {
		// A session file outside every known data dir still lies in some
		// agent's sessions directory when one of its parents is named so.
		for dir := filepath.Dir(canonicalPath(in)); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
			if filepath.Base(dir) == "sessions" {
				p.roots = append(p.roots, dir)
				break
			}
		}
	}
	// Every harness's directory, where it is by default and where the
	// flags put it: the catalog's list, so a harness added there is
	// protected here.
	for _, d := range append((&sourceFlags{}).roots(), sources.roots()...) {
		p.roots = append(p.roots, canonicalPath(d))
	}
	return p
}

// checkDir refuses an output directory (export --all -o DIR) that lies in
// a protected one.
func (p *outputPolicy) checkDir(dir string) error {
	c := canonicalPath(dir)
	for _, r := range p.roots {
		if within(c, r) {
			return fmt.Errorf("refusing to write into %s: it is in %s, where sessions live; choose another directory", dir, r)
		}
	}
	return nil
}

// writeFile writes what fill writes to path under the rules above.
func (p *outputPolicy) writeFile(path string, fill func(io.Writer) error) error {
	target, stream, err := p.check(path)
	if err != nil {
		return err
	}
	if stream {
		f, err := os.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		err = fill(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return atomicfile.Replace(target, fill)
}

// check returns the file to write for path, and whether it is a FIFO or
// device to be written in place.
func (p *outputPolicy) check(path string) (target string, stream bool, err error) {
	refuse := func(why string) (string, bool, error) {
		return "", false, fmt.Errorf("refusing to write to %s: %s", path, why)
	}
	if isSessionName(path) {
		return refuse("a .jsonl name is a session's; choose another name (.md or .html)")
	}
	target, err = filepath.Abs(path)
	if err != nil {
		return "", false, err
	}
	if fi, err := os.Stat(target); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		// A FIFO, a terminal, /dev/stdout (a link to a pipe): nothing to
		// replace, so write into it.
		return target, true, nil
	}
	if fi, err := os.Lstat(target); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if target, err = filepath.EvalSymlinks(target); err != nil {
			return refuse("a symlink whose target cannot be resolved")
		}
		if isSessionName(target) {
			return refuse("a symlink to " + target + ", a session's name")
		}
	}
	fi, statErr := os.Stat(target)
	switch {
	case statErr == nil && fi.IsDir():
		return refuse("a directory")
	case statErr == nil:
		for _, in := range p.inputs {
			if ifi, err := os.Stat(in); err == nil && os.SameFile(fi, ifi) {
				return refuse("it is the session being exported")
			}
		}
	case !errors.Is(statErr, os.ErrNotExist):
		return "", false, statErr
	}
	c := canonicalPath(target)
	for _, r := range p.roots {
		if within(c, r) {
			return refuse("it is in " + r + ", where sessions live")
		}
	}
	return target, false, nil
}

func isSessionName(path string) bool {
	return strings.HasSuffix(strings.ToLower(path), ".jsonl")
}

// canonicalPath resolves symlinks in the longest existing prefix of path,
// so that two names of one place compare equal.
func canonicalPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if dir == filepath.Dir(dir) {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// within reports whether path is root or lies under it.
func within(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
