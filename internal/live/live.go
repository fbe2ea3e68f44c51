// Package live is how a running `xdev serve` tells the other xdev
// processes that it keeps a search index fresh, so that `xdev search`
// from a terminal can answer from the index without its stat walk.
//
// A marker is a small file beside the index (MarkerPath). The server
// that keeps the index fresh creates it and holds an exclusive flock on
// it for as long as it runs; the kernel drops the lock with the process,
// so a server that died, however it died, vouches for nothing. The
// file's first byte is its state:
//
//   - 'd' (dirty): the server saw a change under the place the index
//     reads and has not yet indexed it. It writes this the moment its
//     watcher reports the first change of a burst, before it waits for
//     the burst to settle.
//   - 'c' (clean): every change the watcher reported was indexed and
//     committed, and none came in meanwhile.
//
// then a space, the server's pid, and a newline. One byte is written at
// a time, so a reader never sees half a state.
//
// Fresh is the reader's check: the marker is held (a shared lock cannot
// be taken), it says clean, and its pid is a process that runs (not
// stopped: a server under SIGSTOP holds its lock and its watcher reads
// nothing). Anything else (no marker, no holder, dirty, a stopped or gone
// pid, an unreadable file) is not fresh, and the reader refreshes the
// index itself, as it does with no server. What is left is the moment
// between a write and the server's watcher reading its event (the kernel
// queues it at once; the watcher's goroutine reads it within
// microseconds when the machine is not starved): a search in that moment
// answers from the index as it was a moment before the write.
package live

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// MarkerPath is the marker of the index at index.
func MarkerPath(index string) string { return index + ".live" }

// ErrHeld is Hold's error when another process holds the marker: another
// server keeps that index fresh.
var ErrHeld = errors.New("another xdev serve keeps this index fresh")

// A Marker is a held marker. Its state starts dirty.
type Marker struct {
	f     *os.File
	state byte
}

// Hold creates (or opens) the marker at path, takes its lock, and marks
// it dirty.
func Hold(path string) (*Marker, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrHeld
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	m := &Marker{f: f}
	line := "d " + strconv.Itoa(os.Getpid()) + "\n"
	if err := f.Truncate(0); err != nil {
		m.Close()
		return nil, err
	}
	if _, err := f.WriteAt([]byte(line), 0); err != nil {
		m.Close()
		return nil, err
	}
	m.state = 'd'
	return m, nil
}

// Dirty marks the index behind what the server has seen.
func (m *Marker) Dirty() error { return m.set('d') }

// Clean marks the index fresh: everything seen is indexed.
func (m *Marker) Clean() error { return m.set('c') }

func (m *Marker) set(b byte) error {
	if m.state == b {
		return nil
	}
	if _, err := m.f.WriteAt([]byte{b}, 0); err != nil {
		return err
	}
	m.state = b
	return nil
}

// Close marks the index dirty, removes the marker and drops the lock.
func (m *Marker) Close() error {
	m.set('d')
	os.Remove(m.f.Name())
	return m.f.Close() // closing drops the flock
}

// Fresh reports whether a running server vouches that the index whose
// marker is at path is fresh (see the package comment).
func Fresh(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false // nobody holds it
	} else if !errors.Is(err, syscall.EWOULDBLOCK) {
		return false
	}
	var b [32]byte
	n, _ := f.ReadAt(b[:], 0)
	state, pid, ok := strings.Cut(strings.TrimSpace(string(b[:n])), " ")
	if !ok || state != "c" {
		return false
	}
	p, err := strconv.Atoi(pid)
	return err == nil && p > 0 && running(p)
}

// running reports whether pid is a process that is not stopped, traced
// or a zombie, by /proc/PID/stat where there is one; elsewhere a
// signal 0 that reaches it.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if _, statErr := os.Stat("/proc/self/stat"); statErr == nil {
			return false // /proc is there and the pid is not
		}
		return syscall.Kill(pid, 0) == nil
	}
	// pid (comm) S ...: comm may hold spaces and parentheses; the state
	// follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	switch s[i+2] {
	case 'T', 't', 'Z', 'X':
		return false
	}
	return true
}
