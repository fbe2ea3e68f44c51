// Package live is how a running `xdev serve` tells the other xdev
// processes that it keeps a search index fresh, so that `xdev search`
// from a terminal can answer from the index without its stat walk, and
// how such a process makes sure of it.
//
// # The marker
//
// A marker is a small file beside the index (MarkerPath). The server
// that keeps the index fresh creates it and holds an exclusive flock on
// it for as long as it runs; the kernel drops the lock with the process,
// so a server that died, however it died, vouches for nothing. The
// file's first byte is its state, then a space, the server's pid and a
// newline; the state is written one byte at a time, so a reader never
// sees half of one:
//
//   - 'd' (dirty): the server saw a change under the place the index
//     reads and has not yet indexed it;
//   - 'c' (clean): everything the server saw is indexed;
//   - 'u' (unwatched): the server could not watch every directory of the
//     place (inotify's limit), and vouches for nothing.
//
// # The handshake
//
// A marker alone leaves a race: a file written a moment ago may not yet
// have reached the server's watcher. So a reader asks (Fresh): it
// creates an empty request file in the markers' sync directory (SyncDir,
// which the server watches with the same inotify instance as the
// sessions, whose events come in order), and waits for the server's
// answer, the request's name with ".ack". The server answers a request
// only once it has taken every event before it, and indexed what they
// changed (a dirty place is refreshed at once, not after the burst
// settles). An answer within the timeout means the index holds
// everything written before the request; ".nack" that the server could
// not index it.
//
// Anything else is not fresh: no marker, no holder, 'u', a pid that is
// not a running process (a server under SIGSTOP holds its lock and
// answers nothing), no answer in time. The reader then refreshes the
// index itself, as it does with no server.
package live

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MarkerPath is the marker of the index at index.
func MarkerPath(index string) string { return index + ".live" }

// ErrHeld is Hold's error when another process holds the marker: another
// server keeps that index fresh.
var ErrHeld = errors.New("another xdev serve keeps this index fresh")

// A Marker is a held marker. Its state starts dirty.
// Its methods may be called from several goroutines.
type Marker struct {
	mu    sync.Mutex
	path  string
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
	m := &Marker{f: f, path: path}
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

// Path is the marker's file.
func (m *Marker) Path() string { return m.path }

// Dirty marks the index behind what the server has seen.
func (m *Marker) Dirty() error { return m.set('d') }

// Clean marks the index fresh: everything seen is indexed.
func (m *Marker) Clean() error { return m.set('c') }

// Unwatched marks a place the server cannot watch whole: it vouches for
// nothing, and readers refresh the index themselves.
func (m *Marker) Unwatched() error { return m.set('u') }

func (m *Marker) set(b byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.setLocked(b)
}

func (m *Marker) setLocked(b byte) error {
	if m.f == nil {
		return os.ErrClosed
	}
	if m.state == b || m.state == 'u' && b != 'u' {
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
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.f == nil {
		return nil
	}
	m.setLocked('d')
	os.Remove(m.f.Name())
	err := m.f.Close() // closing drops the flock
	m.f = nil
	return err
}

// SyncDir is the directory of the sync requests of the markers in dir.
func SyncDir(dir string) string { return filepath.Join(dir, "live-sync") }

// ackSuffix ends an answer's name; nackSuffix a refusal's (the server
// could not index what changed: the reader refreshes the index itself at
// once, rather than wait out its timeout).
const (
	ackSuffix  = ".ack"
	nackSuffix = ".nack"
)

// Request is the marker a file name in SyncDir asks about (its name
// without the request's nonce), and whether the name is a request (an
// answer is not).
func Request(name string) (marker string, ok bool) {
	base := filepath.Base(name)
	if strings.HasSuffix(base, ackSuffix) || strings.HasSuffix(base, nackSuffix) {
		return "", false
	}
	i := strings.LastIndexByte(base, '.')
	if i <= 0 || !strings.HasSuffix(base[:i], ".live") {
		return "", false
	}
	return filepath.Join(filepath.Dir(filepath.Dir(name)), base[:i]), true
}

// Answer answers the request at path: every change before it is indexed
// (fresh), or the server could not index it (not fresh).
func Answer(path string, fresh bool) error {
	suffix := ackSuffix
	if !fresh {
		suffix = nackSuffix
	}
	f, err := os.OpenFile(path+suffix, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	os.Remove(path)
	return f.Close()
}

// Fresh reports whether a running server vouches that the index whose
// marker is at path holds everything written before the call: the marker
// is held, watched and its pid running, and the server answered a
// request within timeout (see the package comment).
func Fresh(path string, timeout time.Duration) bool { return Vouching(path, timeout) != 0 }

// Vouching is Fresh, saying which server vouched: its pid, 0 for none. A
// file the server writes beside the index, naming itself, is one a
// reader it vouched to may take as the server has it.
func Vouching(path string, timeout time.Duration) (pid int) {
	pid = holder(path)
	if pid == 0 || !ask(path, pid, timeout) {
		return 0
	}
	return pid
}

// ask asks the server holding the marker at path, pid, whether the index
// is fresh (the handshake).
func ask(path string, pid int, timeout time.Duration) bool {
	dir := SyncDir(filepath.Dir(path))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false
	}
	nonce := make([]byte, 8)
	rand.Read(nonce)
	req := filepath.Join(dir, filepath.Base(path)+"."+hex.EncodeToString(nonce))
	f, err := os.OpenFile(req, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false
	}
	f.Close()
	defer os.Remove(req)
	defer os.Remove(req + ackSuffix)
	defer os.Remove(req + nackSuffix)
	end := time.Now().Add(timeout)
	wait := 100 * time.Microsecond
	for {
		if _, err := os.Stat(req + ackSuffix); err == nil {
			return true
		}
		if _, err := os.Stat(req + nackSuffix); err == nil {
			return false
		}
		if time.Now().After(end) || holder(path) != pid {
			return false
		}
		time.Sleep(wait)
		wait = min(2*wait, 5*time.Millisecond)
	}
}

// Held reports whether the marker at path is held by a running server
// that watches its place whole (state 'c' or 'd').
func Held(path string) bool { return holder(path) != 0 }

// holder is the pid of the running server that holds the marker at path
// and watches its place whole, 0 for none.
func holder(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return 0 // nobody holds it
	} else if !errors.Is(err, syscall.EWOULDBLOCK) {
		return 0
	}
	var b [32]byte
	n, _ := f.ReadAt(b[:], 0)
	state, pid, ok := strings.Cut(strings.TrimSpace(string(b[:n])), " ")
	if !ok || state != "c" && state != "d" {
		return 0
	}
	p, err := strconv.Atoi(pid)
	if err != nil || p <= 0 || !running(p) {
		return 0
	}
	return p
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
