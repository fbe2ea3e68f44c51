package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"

	"github.com/go-json-experiment/json"
	"github.com/valyala/fastjson"
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

// maxCatchUp is how many bytes another writer may have appended before a
// write reads them in as entries; beyond it the store reloads the file
// (windowed), so memory stays bounded however much was appended.
const maxCatchUp = 8 << 20

// writer holds the append descriptor of an on-disk session.
type writer struct {
	f *os.File
}

// checkWritable refuses to write a file in a format version xdev does not
// write. s.mu must be held.
func (s *Store) checkWritable() error {
	switch {
	case s.memoryOnly:
		return nil
	case s.version < CurrentVersion:
		return fmt.Errorf("%s: format v%d: %w", s.path, s.version, ErrOldVersion)
	case s.version > CurrentVersion:
		return fmt.Errorf("%s: format v%d: %w", s.path, s.version, ErrNewerVersion)
	}
	return nil
}

// lockedWrite runs one write to an on-disk session under its lockfile.
// First it brings the store up to date with the file (see syncWithFile),
// so that build, which encodes what is to be written, sees the file's real
// leaf and ids, not the ones the store read earlier. Then write does the
// writing. If either fails, the lock is dropped and the file is as it was.
// s.mu must be held.
//
// The lockfile is kept for LockLinger after the write (see holdLock), so a
// burst of writes pays for one lockfile. While it is held no writer that
// follows the protocol can touch the file, so the file is re-read only
// when the lock was not held since our last write, or its size is not the
// one we left.
func (s *Store) lockedWrite(write func() error) (err error) {
	fresh := s.lease != nil && s.leaseFresh && s.w != nil
	if fresh {
		// Writers that follow the protocol wait for our lock; one that does
		// not (or a stale-lock breaker) shows as a size we did not write.
		fi, err := s.w.f.Stat()
		fresh = err == nil && fi.Size() == s.size
	}
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
		if err := s.syncWithFile(); err != nil {
			return err
		}
	}
	if err := s.checkWritable(); err != nil {
		return err
	}
	return write()
}

// syncWithFile takes in what other writers did to the file since the
// store last read or wrote it: a retitle (the slot rewritten in place),
// entries appended (read in, so the leaf is the file's last entry), or the
// file replaced or shortened (an omp rewrite): then it is loaded anew.
// s.mu and the lock must be held.
func (s *Store) syncWithFile() error {
	fi, err := os.Stat(s.path)
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	ino := fi.Sys().(*syscall.Stat_t).Ino
	if s.w != nil && s.ino != ino {
		s.w.f.Close()
		s.w = nil
	}
	if s.w == nil {
		f, err := os.OpenFile(s.path, os.O_RDWR|os.O_APPEND, 0)
		if err != nil {
			return fmt.Errorf("%s: %w", s.path, err)
		}
		s.w = &writer{f: f}
	}
	// The descriptor's size, not the path's: the file may have been
	// replaced since the stat above.
	fi, err = s.w.f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	ino = fi.Sys().(*syscall.Stat_t).Ino
	switch size := fi.Size(); {
	case ino != s.ino || size < s.size || size-s.size > maxCatchUp:
		return s.reload()
	case size > s.size:
		if err := s.catchUp(size); err != nil {
			return err
		}
	}
	return s.rereadSlot()
}

// reload reads the file again (as Open does, with the store's options) and
// takes its state, keeping the store's descriptor, lock and settings.
func (s *Store) reload() error {
	n, err := Open(s.path, &s.opts)
	if err != nil {
		return err
	}
	s.slot, s.hasSlot, s.header, s.headerLine, s.version = n.slot, n.hasSlot, n.header, n.headerLine, n.version
	s.entries, s.byID, s.leaf = n.entries, n.byID, n.leaf
	s.windowRoot, s.prefix = n.windowRoot, n.prefix
	s.malformed, s.undecodable, s.badLines, s.tornTail = n.malformed, n.undecodable, n.badLines, n.tornTail
	s.stats, s.size, s.lines, s.ino = n.stats, n.size, n.lines, n.ino
	return nil
}

// catchUp reads the entries another writer appended, from s.size to size,
// into the store. The rules are Open's: blank lines are skipped, malformed
// ones counted; a line torn at the end is left for the next append to
// close. If a new entry hangs from an entry outside the store's window,
// the file is reloaded instead, so the store's view stays whole.
func (s *Store) catchUp(size int64) error {
	f := s.w.f
	skipFirst := false
	if s.size > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], s.size-1); err != nil {
			return fmt.Errorf("%s: %w", s.path, err)
		}
		// We stopped inside a torn line; its rest is no entry.
		skipFirst = last[0] != '\n'
	}
	lr := newLineReaderSize(io.NewSectionReader(f, s.size, size-s.size), s.size, s.opts.MaxLineBytes, 64<<10)
	var sc scanner
	var p fastjson.Parser
	windowed := s.stats.Engaged || s.windowRoot != ""
	for {
		l, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: reading what another writer appended: %w", s.path, err)
		}
		if skipFirst {
			skipFirst = false
			continue
		}
		num := s.lines + l.num
		if !l.eol {
			s.tornTail = true
			break
		}
		if l.tooLong {
			s.skip(num, tooLongReason(lr.max))
			continue
		}
		if blank(l.data) {
			continue
		}
		env, err := sc.scan(l.data)
		if why := notEntry(&env, err, true); why != "" {
			s.skip(num, why)
			continue
		}
		e := &Entry{Type: env.typ, ID: env.id, ParentID: env.parentID, raw: append([]byte(nil), l.data...), line: num}
		if err := s.decodeEntry(&p, e, env.firstKept); err != nil {
			if !isStrictJSON(e.raw) {
				s.skip(num, "not valid JSON: "+err.Error())
				continue
			}
			s.undecodable++
		}
		if windowed && e.ParentID != "" && s.byID[e.ParentID] == nil {
			return s.reload()
		}
		s.tornTail = false
		s.index(e)
	}
	s.lines += lr.lineNum
	s.size = size
	return nil
}

// findOnDisk reports which of ids are the id of an entry in the file. It
// reads the file forward, parsing the envelope only of lines that hold one
// of the ids, so a windowed store can check an entry it does not hold.
func (s *Store) findOnDisk(ids []string) (map[string]bool, error) {
	found := make(map[string]bool, len(ids))
	f, _, err := openRegular(s.path, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	quoted := make([][]byte, len(ids))
	for i, id := range ids {
		quoted[i], _ = json.Marshal(id)
	}
	lr := newLineReader(f, 0, s.opts.MaxLineBytes)
	var sc scanner
	for len(found) < len(ids) {
		l, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.path, err)
		}
		if l.tooLong || !slices.ContainsFunc(quoted, func(q []byte) bool { return bytes.Contains(l.data, q) }) {
			continue
		}
		if env, err := sc.scan(l.data); err == nil && env.typ != "" && env.typ != "session" && env.typ != "title" {
			if slices.Contains(ids, env.id) {
				found[env.id] = true
			}
		}
	}
	return found, nil
}

// rereadSlot reads line 1 again: another process may have retitled the
// session in place.
func (s *Store) rereadSlot() error {
	if !s.hasSlot {
		return nil
	}
	buf := make([]byte, TitleSlotWidth)
	n, err := s.w.f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return fmt.Errorf("%s: reading the title slot: %w", s.path, err)
	}
	if slot, ok := ParseTitleSlotSource(buf[:n]); ok {
		s.slot = slot
	}
	return nil
}

// appendLines writes lines, each plus '\n', at the end of the file in one
// write. If the file's last byte is not a newline (a torn tail left by a
// crash), a newline goes first, in the same write, so the new entry is
// never glued onto the torn one. A failed write is truncated back so no
// partial line remains. It runs inside lockedWrite.
func (s *Store) appendLines(lines ...[]byte) error {
	f := s.w.f
	size := s.size
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	buf := make([]byte, 0, n+1)
	if size > 0 && s.tornTail {
		buf = append(buf, '\n')
	}
	for _, l := range lines {
		buf = append(buf, l...)
		buf = append(buf, '\n')
	}
	w, err := diskWrite(f, buf)
	if err != nil || w != len(buf) {
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
	s.size = size + int64(w)
	s.tornTail = false
	s.lines += len(lines)
	return nil
}

// truncateBack undoes an append when the operation it was part of failed
// afterwards: the file goes back to size bytes and lines lines. It runs
// inside lockedWrite.
func (s *Store) truncateBack(size int64, lines int) error {
	if err := diskTruncate(s.w.f, size); err != nil {
		return fmt.Errorf("%s: undoing the append: %w", s.path, err)
	}
	s.size, s.lines = size, lines
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
