package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrEmptyTitle is returned for a title that is empty after cleaning.
var ErrEmptyTitle = errors.New("title is empty")

// SetTitle retitles the session the way omp does: it appends a
// title_change entry, then overwrites the 256-byte slot at offset 0 in
// place; no other byte of the file moves. A file without a slot gets one by
// an atomic rewrite that keeps every other byte. An automatic title never
// replaces a manual one (it reports false).
func (s *Store) SetTitle(title string, source TitleSource) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	title = CleanTitle(title)
	if title == "" {
		return false, ErrEmptyTitle
	}
	if source == TitleSubagent || source == TitleNone {
		return false, fmt.Errorf("cannot set a %q title", source)
	}
	prev, prevSource := s.titleLocked()
	if source == TitleAuto && prevSource == TitleManual {
		return false, nil
	}
	now := Now()
	slot, err := MarshalTitleSlot(title, source, now)
	if err != nil {
		return false, err
	}
	if _, err := s.appendBody(&TitleChange{Title: title, Source: source.wire(), PreviousTitle: prev}, s.leaf); err != nil {
		return false, err
	}
	if !s.memoryOnly {
		if err := s.writeSlot(slot); err != nil {
			return false, err
		}
	}
	s.slot = TitleSlot{Title: title, Source: source, UpdatedAt: now, OmpAccepts: true}
	s.hasSlot = true
	return true, nil
}

// writeSlot replaces line 1 under the session lock: in place when line 1 is
// a 256-byte slot, else by an atomic rewrite that puts the slot in front of
// the file's bytes.
func (s *Store) writeSlot(slot []byte) error {
	if err := s.holdLock(); err != nil {
		return err
	}
	// The slot write may replace the file; the next append checks again.
	s.leaseFresh = false
	defer s.releaseLater()
	f, err := os.OpenFile(s.path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, TitleSlotWidth)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s: reading the slot: %w", s.path, err)
	}
	head = head[:n]
	if n == TitleSlotWidth && head[n-1] == '\n' && bytes.IndexByte(head[:n-1], '\n') < 0 {
		if _, ok := ParseTitleSlotSource(head); ok {
			if _, err := diskWriteAt(f, slot, 0); err != nil {
				// Put the old slot back, so a failed write leaves line 1 as
				// it was rather than half new.
				if _, rerr := diskWriteAt(f, head, 0); rerr != nil {
					err = errors.Join(err, fmt.Errorf("restoring the old slot: %w", rerr))
				}
				return fmt.Errorf("%s: writing the slot: %w", s.path, err)
			}
			return nil
		}
	}
	if s.hasSlot {
		return fmt.Errorf("%s: line 1 is a slot of the wrong width; not rewriting it", s.path)
	}
	// No slot: rewrite the whole file with one in front, unless someone
	// else changed the file since we last saw it.
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != s.size {
		return fmt.Errorf("%s: changed by another writer (size %d, expected %d); not rewriting", s.path, fi.Size(), s.size)
	}
	err = createAtomic(s.path, false, func(w io.Writer) error {
		if _, err := w.Write(slot); err != nil {
			return err
		}
		_, err := io.Copy(w, io.NewSectionReader(f, 0, fi.Size()))
		return err
	})
	if err != nil {
		return err
	}
	s.size += int64(len(slot))
	if s.w != nil {
		s.w.f.Close()
		s.w = nil
	}
	return nil
}
