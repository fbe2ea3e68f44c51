package usagecache

import (
	"os"
	"syscall"
	"time"
)

// usageStamp is what says a file is as it was: a file whose size, inode
// and mtime are those it had when it was read is not read again.
type Stamp struct {
	Size, ModTime int64
	Ino           uint64
}

func StatStamp(path string) (Stamp, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return Stamp{}, false
	}
	st := Stamp{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.Ino = sys.Ino
	}
	return st, true
}

// fresh reports whether a file of this stamp may have changed again in
// the same clock tick as it was read: one changed within the last second
// is read again next time, never trusted from the cache.
func (s Stamp) Fresh(now time.Time) bool {
	return now.UnixNano()-s.ModTime < int64(time.Second)
}
