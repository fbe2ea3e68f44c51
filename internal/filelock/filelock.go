// Package filelock takes advisory locks on files, for work that two
// processes must not do at once (refreshing one search index, one mirror
// of another harness's sessions). The kernel drops an flock with the
// process, so a crash leaves no lock behind. The holder writes its pid
// into the file, so a process that waits can say whom it waits for.
package filelock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Options tune Lock. The zero value waits until the context ends and says
// nothing.
type Options struct {
	// Waiting, when set, is called once when the lock is still held
	// after NoticeAfter, with the holder's pid (0 if unknown): a person
	// should not wait in silence.
	Waiting func(holder int)
	// Timeout, when positive, bounds the wait: past it Lock fails with a
	// *BusyError.
	Timeout time.Duration
}

// NoticeAfter is how long Lock waits before it calls Options.Waiting.
const NoticeAfter = time.Second

// BusyError is Lock's error when the lock stays held past the timeout.
type BusyError struct {
	Path   string
	Holder int // the holder's pid, 0 if unknown
	Waited time.Duration
}

func (e *BusyError) Error() string {
	who := "another process"
	if e.Holder > 0 {
		who = "process " + strconv.Itoa(e.Holder)
	}
	return fmt.Sprintf("%s is held by %s; gave up after %v", e.Path, who, e.Waited.Round(time.Second))
}

// Lock takes an exclusive flock on path, creating the file (mode 0600) if
// need be, and waits for another holder until ctx ends (or opts.Timeout).
// unlock releases it.
func Lock(ctx context.Context, path string, opts *Options) (unlock func(), err error) {
	if opts == nil {
		opts = &Options{}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	noticed := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			// Say who holds it, for those who wait.
			if f.Truncate(0) == nil {
				f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			}
			return func() {
				syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		waited := time.Since(start)
		if !noticed && opts.Waiting != nil && waited >= NoticeAfter {
			noticed = true
			opts.Waiting(holder(f))
		}
		if opts.Timeout > 0 && waited >= opts.Timeout {
			h := holder(f)
			f.Close()
			return nil, &BusyError{Path: path, Holder: h, Waited: waited}
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// holder is the pid of the process that holds the lock on f: the
// kernel's word for it (/proc/locks), else the pid the holder wrote into
// the file when that process is alive, else 0. The file alone can be
// wrong: a holder that is not xdev (flock(1), another tool) writes
// nothing, and what is there is the last xdev's.
func holder(f *os.File) int {
	if pid := kernelHolder(f); pid > 0 {
		return pid
	}
	pid := writtenHolder(f)
	if pid > 0 && syscall.Kill(pid, 0) != nil && !errors.Is(syscall.Kill(pid, 0), syscall.EPERM) {
		return 0 // gone: not the holder
	}
	return pid
}

// kernelHolder is the pid /proc/locks gives for the flock on f's inode,
// 0 when it says none (or there is no /proc).
func kernelHolder(f *os.File) int {
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0
	}
	// "1: FLOCK  ADVISORY  WRITE 21697 fe:00:9978373 0 EOF"; a line that
	// starts "1: -> " is a request waiting, not the holder.
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	for _, line := range bytes.Split(b, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) >= 6 && f[1] == "FLOCK" && f[5] == want {
			if pid, err := strconv.Atoi(f[4]); err == nil && pid > 0 {
				return pid
			}
		}
	}
	return 0
}

// writtenHolder is the pid the lock's holder wrote into it, 0 if none.
func writtenHolder(f *os.File) int {
	b := make([]byte, 32)
	n, err := f.ReadAt(b, 0)
	if err != nil && err != io.EOF {
		return 0
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:n])))
	if err != nil {
		return 0
	}
	return pid
}
