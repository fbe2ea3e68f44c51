package session

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xdev/xdev/internal/atomicfile"
)

// SessionInfo describes one session file as List sees it: from its slot
// and header (the first HeadBytes) and its stat, never its entries.
type SessionInfo struct {
	Path          string
	ID            string
	Cwd           string
	Title         string // the slot's title, else the header's
	TitleSource   TitleSource
	Created       time.Time // the header's timestamp
	Modified      time.Time // the file's mtime
	ParentSession string    // a fork's source id, or a branch's or subagent's parent file path
	Size          int64
	Version       int
	// FirstMessage is the start of the first user message when it lies in
	// the first HeadBytes (a title for sessions that have none).
	FirstMessage string
	// ShortSummary is the shortSummary of the last compaction in the first
	// HeadBytes: what omp's picker shows for a session without a title.
	ShortSummary string
	// Status is how the last turn ended, read from the file's last
	// TailBytes; only with ListOptions.Status.
	Status Status
	// Subagent marks a subagent transcript: a file nested under its parent
	// session's directory, or an older file whose slot says "subagent".
	Subagent bool
	// Err says why the file cannot be opened as a session (unreadable, not
	// a session, a symlink); the other fields are then partial.
	Err error

	hasSlot bool
}

// ListOptions narrow List. The zero value lists every project's sessions
// without subagents.
type ListOptions struct {
	// Cwd limits the listing to one project: its sessions directory and the
	// older names omp gave that directory (see legacySlugs).
	Cwd string
	// Subagents includes subagent transcripts.
	Subagents bool
	// Status reads each file's last TailBytes too, for SessionInfo.Status.
	Status bool
	// Cache is the directory List keeps its list cache in (see
	// listCacheFormat): what it read of each file, so that the next
	// listing reads only the files that changed. "" keeps none. It is
	// never the data dir: List writes nothing there.
	Cache string
	// CacheReadOnly reads Cache but never writes it: the listing of a
	// command that must leave xdev's cache as it was should it fail.
	CacheReadOnly bool
}

// ListTitle is the title omp's session picker shows: the stored title
// (a slot's that is only spaces counts as none), else the ShortSummary.
func (i SessionInfo) ListTitle() string {
	if strings.TrimSpace(i.Title) != "" || (i.Title != "" && !i.hasSlot) {
		return i.Title
	}
	return i.ShortSummary
}

// List returns the sessions under dataDir, newest first (by modification
// time, then creation time, then path, as omp orders them). It reads at most
// HeadBytes of each file and never writes. Files it cannot read, or that are
// not sessions, are listed with Err set rather than failing the listing; the
// error is for the sessions directory itself. A missing directory lists
// nothing.
func List(dataDir string, opts *ListOptions) ([]SessionInfo, error) {
	if opts == nil {
		opts = &ListOptions{}
	}
	root := SessionsDir(dataDir)
	var dirs []string
	var cands []candidate
	if opts.Cwd != "" {
		for _, name := range append([]string{Slug(opts.Cwd)}, legacySlugs(opts.Cwd)...) {
			dirs = append(dirs, filepath.Join(root, name))
		}
	} else {
		ents, err := os.ReadDir(root)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			switch {
			case e.IsDir() && atomicfile.IsTemp(e.Name()):
				// A project directory still being made (atomicfile's
				// Link), or one its killed writer left: not a project's.
			case e.IsDir():
				dirs = append(dirs, filepath.Join(root, e.Name()))
			case e.Type()&fs.ModeSymlink != 0:
				// A project directory that is a symlink is reported, not entered.
				cands = append(cands, candidate{path: filepath.Join(root, e.Name()), symlink: true})
			}
		}
	}
	for _, d := range dirs {
		cands = appendCandidates(cands, d, opts.Subagents)
	}
	for i := range cands {
		cands[i].status = opts.Status
	}
	cache := openListCache(opts.Cache, root)
	infos, fresh := statAll(cands, cache)
	if cache != nil && !opts.CacheReadOnly {
		cache.update(root, dirs, opts.Subagents, cands, infos, fresh)
		cache.save()
	}
	if !opts.Subagents {
		infos = slices.DeleteFunc(infos, func(i SessionInfo) bool { return i.Subagent })
	}
	slices.SortFunc(infos, func(a, b SessionInfo) int {
		return cmp.Or(b.Modified.Compare(a.Modified), b.Created.Compare(a.Created), strings.Compare(b.Path, a.Path))
	})
	return infos, nil
}

// SessionFile is a session file found under a data dir, with its stat.
type SessionFile struct {
	Path     string
	Subagent bool // nested under its parent session's directory
	Size     int64
	ModTime  time.Time
	Ino      uint64
}

// Files returns the session files under dataDir's sessions directory, in
// every project, subagent transcripts included, as List finds them, each
// with its stat but without opening any: for a reader that follows them
// (a search index). Symlinks and files that are not regular are left
// out, as List reports them rather than reading them. A missing sessions
// directory has none. The projects are read in parallel, each file
// stat'ed relative to its directory: with tens of thousands of files the
// cost is system calls, which overlap.
func Files(dataDir string) ([]SessionFile, error) {
	root := SessionsDir(dataDir)
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range ents {
		if e.IsDir() && !atomicfile.IsTemp(e.Name()) { // see List
			dirs = append(dirs, filepath.Join(root, e.Name()))
		}
	}
	per := make([][]SessionFile, len(dirs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(dirs), 4*runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for k := int(next.Add(1) - 1); k < len(dirs); k = int(next.Add(1) - 1) {
				per[k] = projectFiles(dirs[k])
			}
		})
	}
	wg.Wait()
	n := 0
	for _, p := range per {
		n += len(p)
	}
	files := make([]SessionFile, 0, n)
	for _, p := range per {
		files = append(files, p...)
	}
	slices.SortFunc(files, func(a, b SessionFile) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

// projectFiles lists and stats one project directory's session files and
// the subagent transcripts nested in its session directories. A file of
// the directory itself is stat'ed relative to it (fstatat), which spares
// the kernel walking the path's leading directories for each file: a
// third of the time of a no-change refresh.
func projectFiles(dir string) []SessionFile {
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	ents, err := d.ReadDir(-1) // unsorted: the caller does not need an order
	if err != nil {
		return nil
	}
	var out []SessionFile
	fd := int(d.Fd())
	for _, c := range appendCandidatesOf(nil, dir, ents, true) {
		if c.symlink || c.irregular {
			continue
		}
		var st unix.Stat_t
		if c.subagent {
			err = unix.Lstat(c.path, &st)
		} else {
			err = unix.Fstatat(fd, filepath.Base(c.path), &st, unix.AT_SYMLINK_NOFOLLOW)
		}
		if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			continue // gone since it was listed, or replaced by something else
		}
		out = append(out, SessionFile{Path: c.path, Subagent: c.subagent, Size: st.Size,
			ModTime: time.Unix(st.Mtim.Unix()), Ino: st.Ino})
	}
	return out
}

// candidate is a file List will read.
type candidate struct {
	path     string
	subagent bool
	symlink  bool
	// irregular: a FIFO, socket or device, reported without being opened.
	irregular bool
	status    bool // read the tail for SessionInfo.Status
}

// appendCandidates adds the *.jsonl files of one project directory and,
// with subagents, the transcripts nested in its session directories.
// Symlinks are reported, never followed: a link could lead List out of the
// data dir.
func appendCandidates(cands []candidate, dir string, subagents bool) []candidate {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return cands
	}
	return appendCandidatesOf(cands, dir, ents, subagents)
}

// appendCandidatesOf is appendCandidates on the entries of dir, read.
func appendCandidatesOf(cands []candidate, dir string, ents []fs.DirEntry, subagents bool) []candidate {
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			if strings.HasSuffix(e.Name(), ".jsonl") {
				cands = append(cands, candidate{path: p, symlink: true})
			}
		case e.IsDir():
			if subagents {
				filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
					if err == nil && d.Type().IsRegular() && strings.HasSuffix(q, ".jsonl") {
						cands = append(cands, candidate{path: q, subagent: true})
					}
					return nil
				})
			}
		case strings.HasSuffix(e.Name(), ".jsonl"):
			cands = append(cands, candidate{path: p, irregular: !e.Type().IsRegular()})
		}
	}
	return cands
}

// statAll reads the heads of cands in parallel: with thousands of files the
// cost is system calls, which overlap well. A file cache has an unchanged
// entry of is only stat'ed; fresh[k] is the new entry of a file read, for
// the cache (nil without one).
func statAll(cands []candidate, cache *listCache) (infos []SessionInfo, fresh []*listCacheEntry) {
	infos = make([]SessionInfo, len(cands))
	if cache != nil {
		fresh = make([]*listCacheEntry, len(cands))
	}
	workers := min(len(cands), 4*runtime.GOMAXPROCS(0))
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				next.Lock()
				k := i
				i++
				next.Unlock()
				if k >= len(cands) {
					return
				}
				if cache == nil {
					infos[k], _ = describe(cands[k])
					continue
				}
				var ok bool
				if infos[k], ok = cache.lookup(cands[k]); ok {
					continue
				}
				var st *syscall.Stat_t
				infos[k], st = describe(cands[k])
				if st != nil {
					fresh[k] = &listCacheEntry{stamp: stampOf(st), withStatus: cands[k].status}
				}
			}
		})
	}
	wg.Wait()
	return infos, fresh
}

// Stat describes the session file at path the way List does, reading only
// its head.
func Stat(path string) SessionInfo {
	info, _ := describe(candidate{path: path})
	return info
}

// describe reads what List says of c's file, and returns the stat of the
// file it read (nil when it read none).
func describe(c candidate) (SessionInfo, *syscall.Stat_t) {
	info := SessionInfo{Path: c.path, Subagent: c.subagent}
	if c.symlink {
		info.Err = errors.New(c.path + ": a symlink; not followed")
		if fi, err := os.Lstat(c.path); err == nil {
			info.Modified = fi.ModTime()
		}
		return info, nil
	}
	if c.irregular {
		info.Err = errors.New(c.path + ": not a regular file")
		return info, nil
	}
	h, facts, fi, err := statHead(c.path, c.status)
	var st *syscall.Stat_t
	if fi != nil {
		info.Size, info.Modified = fi.Size(), fi.ModTime()
		st, _ = fi.Sys().(*syscall.Stat_t)
	}
	if err != nil {
		info.Err = err
		return info, st
	}
	info.fill(h, facts)
	return info, st
}

// fill sets what a file's head and status say of it.
func (info *SessionInfo) fill(h head, tail tailFacts) {
	hd := h.header
	info.ID, info.Cwd, info.ParentSession = hd.ID, hd.Cwd, hd.ParentSession
	info.FirstMessage, info.ShortSummary, info.Status, info.hasSlot = h.firstMessage, h.shortSummary, tail.status, h.hasSlot
	info.Version = hd.FormatVersion()
	info.Created, _ = ParseTime(hd.Timestamp)
	info.Title, info.TitleSource = h.title()
	if info.Title == "" && tail.name != "" {
		// A name pi gave the session (/name): a person chose it.
		info.Title, info.TitleSource = tail.name, TitleManual
	}
	if info.TitleSource == TitleSubagent {
		info.Subagent = true
	}
}

// Describe describes a session from its first bytes and its last, by the
// rules List describes a file by: head is its first HeadBytes or more (or
// all of it), tail its last TailBytes or more (whole lines ending the
// session will do), size its length. name is the Path and names it in
// errors. It is how a session kept elsewhere than in a file (a database's
// rows) is listed as a file would be; Size, Modified and a subagent's
// place are the caller's to set.
func Describe(name string, head, tail []byte, size int64) SessionInfo {
	info := SessionInfo{Path: name, Size: size}
	h, err := parseHead(head[:min(len(head), HeadBytes)], len(head) >= HeadBytes, name)
	if err != nil {
		info.Err = err
		return info
	}
	info.fill(h, readTail(h, tail[max(0, len(tail)-TailBytes):]))
	return info
}
