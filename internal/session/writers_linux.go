package session

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// otherWriters returns the processes other than this one that hold the
// file fi (by device and inode) open for writing, as far as /proc lets
// this user see: a writer that does not take omp's lockfile (a harness
// of another make, `tee -a`), which a rewrite by rename would leave
// writing into the old, unlinked file.
func otherWriters(fi os.FileInfo) []int {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		dir := filepath.Join("/proc", p.Name(), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // another user's, or gone
		}
		for _, fd := range fds {
			var ft syscall.Stat_t
			if syscall.Stat(filepath.Join(dir, fd.Name()), &ft) != nil || ft.Dev != st.Dev || ft.Ino != st.Ino {
				continue
			}
			if writable(filepath.Join("/proc", p.Name(), "fdinfo", fd.Name())) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// writable reads an fdinfo file's flags: open for writing (O_WRONLY or
// O_RDWR).
func writable(fdinfo string) bool {
	b, err := os.ReadFile(fdinfo)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&(syscall.O_WRONLY|syscall.O_RDWR) != 0
		}
	}
	return false
}

// processName is what /proc says pid runs, for a message.
func processName(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
