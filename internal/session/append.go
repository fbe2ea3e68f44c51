package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// SyncMode says when appends reach stable storage.
type SyncMode int

const (
	// SyncNever leaves appends in the page cache, as omp does: they survive
	// a crash of the process but not of the machine.
	SyncNever SyncMode = iota
	// SyncEveryEntry fdatasyncs after every append.
	SyncEveryEntry
)

// ErrOldVersion is returned when appending to a file in format v1 or v2:
// omp would re-id and rewrite such a file on its next write, so a v3 entry
// appended to it would not mean what it says.
var ErrOldVersion = errors.New("file is in an old format version; fork it to get a v3 copy")

// ErrNewerVersion is returned when appending to a file whose header claims
// a format newer than v3: xdev reads it as v3 (as omp does) but does not
// know what a writer of that version expects, so it does not write.
var ErrNewerVersion = errors.New("file is in a newer format version than this xdev writes")

// writer holds the append descriptor of an on-disk session.
type writer struct {
	f   *os.File
	ino uint64
}

// appendLine writes line plus '\n' at the end of the file as one write,
// under the session's lockfile. If the file's last byte is not a newline
// (a torn tail left by a crash), a newline goes first, in the same write,
// so the new entry is never glued onto the torn one. A failed write is
// truncated back so no partial line remains. s.mu must be held.
//
// The lockfile is kept for LockLinger after the append (see holdLock), so
// a burst of appends pays for one lockfile. While it is held no writer that
// follows the protocol can touch the file, so the checks of the file's
// identity and last byte are skipped when its size is still ours.
func (s *Store) appendLine(line []byte) (err error) {
	fresh := s.lease != nil && s.leaseFresh
	if err := s.holdLock(); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			s.dropLock()
		} else {
			s.leaseFresh = true
			s.releaseLater()
		}
	}()
	if !fresh {
		if err := s.openWriter(); err != nil {
			return err
		}
	}
	f := s.w.f
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	size := fi.Size()
	buf := make([]byte, 0, len(line)+2)
	if size > 0 && !(fresh && size == s.size) {
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err != nil && err != io.EOF {
			return fmt.Errorf("%s: reading the last byte: %w", s.path, err)
		}
		if last[0] != '\n' {
			buf = append(buf, '\n')
		}
	}
	buf = append(buf, line...)
	buf = append(buf, '\n')
	n, err := diskWrite(f, buf)
	if err != nil || n != len(buf) {
		if terr := diskTruncate(f, size); terr != nil {
			err = errors.Join(err, fmt.Errorf("truncating the partial line: %w", terr))
		}
		if err == nil {
			err = io.ErrShortWrite
		}
		return fmt.Errorf("%s: append: %w", s.path, err)
	}
	if s.sync == SyncEveryEntry {
		if err := fdatasync(f); err != nil {
			return fmt.Errorf("%s: sync: %w", s.path, err)
		}
	}
	s.size = size + int64(n)
	return nil
}

// openWriter opens (or reopens, if someone renamed a new file over the
// path, as omp's rewrites do) the append descriptor.
func (s *Store) openWriter() error {
	fi, err := os.Stat(s.path)
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	ino := fi.Sys().(*syscall.Stat_t).Ino
	if s.w != nil && s.w.ino == ino {
		return nil
	}
	if s.w != nil {
		s.w.f.Close()
		s.w = nil
	}
	f, err := os.OpenFile(s.path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	s.w = &writer{f: f, ino: ino}
	return nil
}

// Sync flushes appended entries to stable storage, for callers that sync
// once per turn rather than per entry.
func (s *Store) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return nil
	}
	return fdatasync(s.w.f)
}

// Close releases the store's file descriptor. The store stays readable.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLock()
	if s.w == nil {
		return nil
	}
	err := s.w.f.Close()
	s.w = nil
	return err
}

func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
