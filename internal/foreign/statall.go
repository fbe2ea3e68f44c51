package foreign

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// fileStat is what a freshness check keeps of a transcript's stat: its
// size and modification time, ok when it is a regular file.
type fileStat struct {
	size  int64
	mtime time.Time
	ok    bool
}

// statAll stats each of paths (not following a symlink) as os.Lstat
// would, on several goroutines: a search's freshness check of 10,000
// Claude Code transcripts is these stats, half its time when taken one
// after the other. Paths of one directory that follow each other (as a
// walk names them) are stated relative to it, opened once (fstatat),
// which spares the kernel walking each path's leading directories.
func statAll(paths []string) []fileStat {
	out := make([]fileStat, len(paths))
	// Runs of paths in one directory, each a unit of work.
	var runs [][2]int
	for i := 0; i < len(paths); {
		dir := filepath.Dir(paths[i])
		j := i + 1
		for j < len(paths) && filepath.Dir(paths[j]) == dir {
			j++
		}
		runs = append(runs, [2]int{i, j})
		i = j
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(runs), 4*runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for k := int(next.Add(1) - 1); k < len(runs); k = int(next.Add(1) - 1) {
				statRun(paths[runs[k][0]:runs[k][1]], out[runs[k][0]:runs[k][1]])
			}
		})
	}
	wg.Wait()
	return out
}

// statRun stats paths, all in one directory, into out.
func statRun(paths []string, out []fileStat) {
	fd := -1
	if len(paths) > 1 {
		if d, err := os.Open(filepath.Dir(paths[0])); err == nil {
			defer d.Close()
			fd = int(d.Fd())
		}
	}
	for i, p := range paths {
		var st unix.Stat_t
		var err error
		if fd >= 0 {
			err = unix.Fstatat(fd, filepath.Base(p), &st, unix.AT_SYMLINK_NOFOLLOW)
		} else {
			err = unix.Lstat(p, &st)
		}
		if err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			out[i] = fileStat{size: st.Size, mtime: time.Unix(st.Mtim.Unix()), ok: true}
		}
	}
}
