package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The lockfile protocol omp 18.2.3 uses around every append and rewrite
// (session-storage.ts): create ".<name>.lock" beside the session with
// O_EXCL, mode 0600, holding "<pid>:<epoch ms>\n"; remove it afterwards. A
// lock whose pid is dead, or whose content is malformed and older than
// lockStaleAfter, is stale and may be broken.
const (
	lockPoll       = 2 * time.Millisecond
	lockStaleAfter = 500 * time.Millisecond
)

// LockOptions tune how a store takes omp's lockfile. The zero value means
// the defaults.
type LockOptions struct {
	// Timeout is how long a write waits for a lock another process holds;
	// zero means DefaultLockTimeout.
	Timeout time.Duration
	// Linger is how long the store keeps the lockfile after a write, so
	// that the next write of a burst (an assistant message, then its tool
	// results) need not create it again: on the disks measured here
	// creating and removing the lockfile costs 30-400 µs, the append itself
	// 2-5 µs. omp 18.2.3 polls a held lock every 100 ms, 50 times
	// (pi-utils' file-lock.ts), so a lock kept this long delays it by at
	// most one poll; writes that come faster than the linger keep it as
	// long as they come (a stress test's thousands a second starved omp
	// on a loaded machine once: TestInteropConcurrentWriters). Zero means
	// DefaultLockLinger; a negative value releases the lock at once, as omp
	// does.
	Linger time.Duration
}

// The lock defaults.
const (
	DefaultLockTimeout = 5 * time.Second
	DefaultLockLinger  = time.Millisecond
)

func (o LockOptions) timeout() time.Duration {
	if o.Timeout <= 0 {
		return DefaultLockTimeout
	}
	return o.Timeout
}

func (o LockOptions) linger() time.Duration {
	switch {
	case o.Linger < 0:
		return 0
	case o.Linger == 0:
		return DefaultLockLinger
	}
	return o.Linger
}

// ErrLocked is returned when a session's lock stays held past the lock
// timeout (LockOptions.Timeout).
var ErrLocked = errors.New("session is locked by another process")

// lockPath returns the lockfile of a session file.
func lockPath(path string) string {
	dir, base := filepath.Split(path)
	return filepath.Join(dir, "."+base+".lock")
}

// IsLockfile reports whether path names a session's lockfile (lockPath):
// it holds no session's content, so a watcher takes no change of it as a
// change of the sessions (it comes and goes about every append).
func IsLockfile(path string) bool {
	base := filepath.Base(path)
	return strings.HasPrefix(base, ".") && strings.HasSuffix(base, ".jsonl.lock")
}

type fileLock struct{ path string }

// acquireLock takes the session's lockfile, waiting up to timeout.
func acquireLock(path string, timeout time.Duration) (*fileLock, error) {
	lp := lockPath(path)
	deadline := time.Now().Add(timeout)
	content := []byte(strconv.Itoa(os.Getpid()) + ":" + strconv.FormatInt(time.Now().UnixMilli(), 10) + "\n")
	for {
		f, err := os.OpenFile(lp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_, werr := f.Write(content)
			cerr := f.Close()
			if werr == nil && cerr == nil {
				return &fileLock{lp}, nil
			}
			os.Remove(lp)
			return nil, fmt.Errorf("lock %s: %w", lp, errors.Join(werr, cerr))
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", lp, err)
		}
		if lockIsStale(lp) {
			os.Remove(lp)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: %w (lockfile %s)", path, ErrLocked, lp)
		}
		time.Sleep(lockPoll)
	}
}

func (l *fileLock) release() { os.Remove(l.path) }

// lockIsStale applies omp's rules: the holder's pid is gone, or the
// content is malformed and the file is older than lockStaleAfter.
func lockIsStale(lp string) bool {
	data, err := os.ReadFile(lp)
	if err != nil {
		return false // gone already, or unreadable: retry
	}
	pidText, _, ok := bytes.Cut(bytes.TrimSpace(data), []byte(":"))
	pid, perr := strconv.Atoi(string(pidText))
	if !ok || perr != nil || pid <= 0 {
		fi, err := os.Stat(lp)
		return err == nil && time.Since(fi.ModTime()) > lockStaleAfter
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// holdLock takes the session's lockfile unless the store holds it already.
// s.mu must be held.
func (s *Store) holdLock() error {
	if s.lease != nil {
		return nil
	}
	l, err := acquireLock(s.path, s.opts.Lock.timeout())
	if err != nil {
		return err
	}
	s.lease, s.leaseFresh = l, false
	return nil
}

// releaseLater lets the lock go after the linger (LockOptions.Linger),
// unless another write comes first. s.mu must be held.
func (s *Store) releaseLater() {
	linger := s.opts.Lock.linger()
	if linger <= 0 {
		s.dropLock()
		return
	}
	s.leaseUntil = time.Now().Add(linger)
	if s.leaseTimer == nil {
		s.leaseTimer = time.AfterFunc(linger, s.lingerExpired)
	} else {
		s.leaseTimer.Reset(linger)
	}
}

func (s *Store) lingerExpired() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lease == nil {
		return
	}
	if left := time.Until(s.leaseUntil); left > 0 {
		s.leaseTimer.Reset(left)
		return
	}
	s.dropLock()
}

// dropLock releases the lockfile now. s.mu must be held.
func (s *Store) dropLock() {
	if s.lease != nil {
		s.lease.release()
		s.lease, s.leaseFresh = nil, false
	}
}
