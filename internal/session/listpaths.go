package session

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xdev/xdev/internal/atomicfile"
)

// ListPaths describes the files at paths as List(dataDir, opts) would
// list them now, reading only those files: it is how a caller that holds
// a listing and was told which files changed (a watcher) keeps it
// current without listing every project again. infos holds one
// SessionInfo for each path List would list, in the order of paths; a
// path List would not list (gone, not a *.jsonl, outside the sessions
// directory, a subagent's transcript without opts.Subagents) has none.
//
// ok is false when only a whole List can say what changed: a path is a
// directory (made or renamed into place, whose files were not each
// seen), or the sessions directory or one of its parents, or opts.Cwd is
// set. A path that is gone and was a directory is the caller's to
// notice, by the rows it holds under it.
func ListPaths(dataDir string, paths []string, opts *ListOptions) (infos []SessionInfo, ok bool) {
	if opts == nil {
		opts = &ListOptions{}
	}
	if opts.Cwd != "" {
		return nil, false
	}
	root := filepath.Clean(SessionsDir(dataDir))
	for _, p := range paths {
		c, listed, ok := candidateAt(root, filepath.Clean(p))
		if !ok {
			return nil, false
		}
		if !listed || (c.subagent && !opts.Subagents) {
			continue
		}
		c.status = opts.Status
		info, _ := describe(c)
		if info.Subagent && !opts.Subagents {
			continue // a file whose slot says it is a subagent's
		}
		infos = append(infos, info)
	}
	return infos, true
}

// candidateAt is the candidate List would make of the file at p, by the
// rules of List and appendCandidatesOf: listed is false when List would
// not list it, ok false when p is a directory of the tree or above it.
func candidateAt(root, p string) (c candidate, listed, ok bool) {
	sep := string(filepath.Separator)
	if p == root || strings.HasPrefix(root, p+sep) {
		return candidate{}, false, false // the sessions directory, or above it
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+sep) {
		return candidate{}, false, true // outside the sessions directory
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return candidate{}, false, true // gone
	}
	if fi.IsDir() {
		return candidate{}, false, false
	}
	parts := strings.Split(rel, sep)
	c = candidate{path: p}
	if len(parts) > 1 && atomicfile.IsTemp(parts[0]) {
		return c, false, true // in a project directory still being made (see List)
	}
	symlink := fi.Mode()&fs.ModeSymlink != 0
	jsonl := strings.HasSuffix(p, ".jsonl")
	switch {
	case len(parts) == 1:
		// The sessions directory's own entries: project directories,
		// and a symlink, reported whatever its name.
		c.symlink = true
		return c, symlink, true
	case len(parts) == 2:
		// A project directory's: *.jsonl files and symlinks.
		if !jsonl || !isRealDir(filepath.Dir(p)) {
			return c, false, true
		}
		c.symlink, c.irregular = symlink, !symlink && !fi.Mode().IsRegular()
		return c, true, true
	}
	// Under a session directory: a subagent's transcript, found by a walk
	// that follows no symlink and reads only regular files.
	if !jsonl || !fi.Mode().IsRegular() {
		return c, false, true
	}
	for d := filepath.Dir(p); d != root; d = filepath.Dir(d) {
		if !isRealDir(d) {
			return c, false, true
		}
	}
	c.subagent = true
	return c, true, true
}

// isRealDir reports whether dir is a directory, not a symlink to one.
func isRealDir(dir string) bool {
	fi, err := os.Lstat(dir)
	return err == nil && fi.IsDir()
}

// FilesAt is Files for the named paths only: the session files among
// them, as Files would find them now, each with its stat. ok is false
// when only a walk can tell (see ListPaths); a path gone, outside the
// sessions directory or not a session file has no SessionFile.
func FilesAt(dataDir string, paths []string) (files []SessionFile, ok bool) {
	root := filepath.Clean(SessionsDir(dataDir))
	for _, p := range paths {
		c, listed, ok := candidateAt(root, filepath.Clean(p))
		if !ok {
			return nil, false
		}
		if !listed || c.symlink || c.irregular {
			continue
		}
		var st unix.Stat_t
		if err := unix.Lstat(c.path, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		files = append(files, SessionFile{Path: c.path, Subagent: c.subagent, Size: st.Size,
			ModTime: time.Unix(st.Mtim.Unix()), Ino: st.Ino})
	}
	return files, true
}
