package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"unicode"

	"github.com/xdev/xdev/internal/jsonx"
)

// TitleSlotWidth is the exact size of line 1, newline included. omp
// rewrites the slot in place by writing this many bytes at offset 0, so any
// other width would corrupt the header that follows.
const TitleSlotWidth = 256

// TitleSource says where a session's title came from.
type TitleSource int

const (
	TitleNone     TitleSource = iota // no title yet; the slot has no "source"
	TitleAuto                        // generated; "auto" on disk
	TitleManual                      // chosen by a person; "user" on disk
	TitleSubagent                    // a subagent transcript; never written in a slot
)

// String returns the API name of the source.
func (s TitleSource) String() string {
	switch s {
	case TitleAuto:
		return "auto"
	case TitleManual:
		return "manual"
	case TitleSubagent:
		return "subagent"
	}
	return ""
}

// wire returns the value omp accepts on disk, or "" when the key is omitted.
func (s TitleSource) wire() string {
	switch s {
	case TitleAuto:
		return "auto"
	case TitleManual:
		return "user"
	}
	return ""
}

// ParseTitleSource reads a source as found in a slot, a header or a
// title_change entry. It accepts omp's "auto" and "user" and the design's
// "manual" and "subagent".
func ParseTitleSource(s string) (TitleSource, bool) {
	switch s {
	case "":
		return TitleNone, true
	case "auto":
		return TitleAuto, true
	case "user", "manual":
		return TitleManual, true
	case "subagent":
		return TitleSubagent, true
	}
	return TitleNone, false
}

// TitleSlot is the decoded line 1 of a session file.
type TitleSlot struct {
	Title     string
	Source    TitleSource
	UpdatedAt string
	// OmpAccepts reports whether omp 18.2.3 would accept the line as a slot.
	// A slot xdev reads but omp rejects (source "manual" or "subagent", no
	// pad) makes omp refuse to resume the file.
	OmpAccepts bool
}

// titleSlotWire is the slot in omp's field order.
type titleSlotWire struct {
	Type      string `json:"type"`
	V         int    `json:"v"`
	Title     string `json:"title"`
	Source    string `json:"source,omitempty"`
	UpdatedAt string `json:"updatedAt"`
	Pad       string `json:"pad"`
}

// MarshalTitleSlot returns line 1 for the given title: exactly
// TitleSlotWidth bytes including the newline, padded with spaces. A title too
// long to fit is shortened one rune at a time (measured on its escaped UTF-8
// form) until the line fits. TitleSubagent is written without a source, as
// omp writes subagent slots.
func MarshalTitleSlot(title string, source TitleSource, updatedAt string) ([]byte, error) {
	w := titleSlotWire{Type: "title", V: 1, Source: source.wire(), UpdatedAt: updatedAt}
	// The code points' ends, a lone surrogate one code point as in omp.
	title = jsonx.WellFormed(title)
	ends := []int{0}
	for i := 0; i < len(title); {
		_, size := jsonx.DecodeRuneInString(title[i:])
		i += size
		ends = append(ends, i)
	}
	fits := func(n int) ([]byte, bool) {
		w.Title = title[:ends[n]]
		w.Pad = ""
		line, err := jsonx.Marshal(w)
		return line, err == nil && len(line)+1 <= TitleSlotWidth
	}
	// The longest prefix that fits: binary search, as the line grows with n.
	lo, hi := 0, len(ends)-1
	if _, ok := fits(0); !ok {
		return nil, fmt.Errorf("title slot: updatedAt %q leaves no room for a title", updatedAt)
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if _, ok := fits(mid); ok {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	line, _ := fits(lo)
	w.Pad = strings.Repeat(" ", TitleSlotWidth-1-len(line))
	out, err := jsonx.Marshal(w)
	if err != nil {
		return nil, err
	}
	out = append(out, '\n')
	if len(out) != TitleSlotWidth {
		return nil, fmt.Errorf("title slot: encoded %d bytes, want %d", len(out), TitleSlotWidth)
	}
	return out, nil
}

// ParseTitleSlot decodes line 1 (with or without its newline) as a
// title slot. It returns ok=false when the line is not a slot at all (a
// header, an entry, garbage): the slot is optional, and a file without one
// still loads.
//
// Any JSON object with "type":"title" and a string title is read as a slot,
// also one omp refuses (a source other than auto or user, a null source, a
// "v" other than 1, no pad or updatedAt): omp then fails to resume the file,
// but the slot is only a cached title, so xdev reads the session and says
// so through OmpAccepts, which verify reports. A source xdev does not know
// reads as TitleNone. Text is decoded as omp's TextDecoder decodes the file.
func ParseTitleSlot(line []byte) (slot TitleSlot, ok bool) {
	line = bytes.TrimRight(line, "\r\n")
	v, err := jsonx.Parse(line)
	if err != nil || !v.Get("type").Is("title") {
		return TitleSlot{}, false
	}
	title, ok := v.Get("title").Text()
	if !ok {
		return TitleSlot{}, false
	}
	slot.Title = title
	slot.UpdatedAt, _ = v.Get("updatedAt").Text()
	_, hasUpdated := v.Get("updatedAt").Text()
	_, hasPad := v.Get("pad").Text()
	v1, _ := v.Get("v").Float()
	srcOK := true
	if src := v.Get("source"); src.Defined() {
		s, _ := src.Text()
		slot.Source, _ = ParseTitleSource(s)
		srcOK = src.Is("auto") || src.Is("user")
	}
	slot.OmpAccepts = srcOK && v.Get("v").Kind() == jsonx.Number && v1 == 1 && hasUpdated && hasPad
	return slot, true
}

// SlotLine returns b, a file's first line with its newline, if it is a
// title slot that can be rewritten in place: exactly TitleSlotWidth bytes,
// its only newline the last, read by ParseTitleSlot. Else nil.
func SlotLine(b []byte) []byte {
	if len(b) != TitleSlotWidth || b[TitleSlotWidth-1] != '\n' || bytes.IndexByte(b[:TitleSlotWidth-1], '\n') >= 0 {
		return nil
	}
	if _, ok := ParseTitleSlot(b); !ok {
		return nil
	}
	return b
}

// ReadSlotLine returns the first line of f (size bytes long) when it is a
// title slot (SlotLine), nil otherwise.
func ReadSlotLine(f io.ReaderAt, size int64) ([]byte, error) {
	if size < TitleSlotWidth {
		return nil, nil
	}
	b := make([]byte, TitleSlotWidth)
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, err
	}
	return SlotLine(b), nil
}

// SlotWrittenAfter reports whether slot line a was written after slot line
// b, by their updatedAt: of two copies of a session retitled in two
// places, the later title wins. A slot whose time does not parse loses to
// one whose time does.
func SlotWrittenAfter(a, b []byte) bool {
	sa, _ := ParseTitleSlot(a)
	sb, _ := ParseTitleSlot(b)
	ta, errA := ParseTime(sa.UpdatedAt)
	tb, errB := ParseTime(sb.UpdatedAt)
	if errA != nil || errB != nil {
		return errB != nil && errA == nil
	}
	return ta.After(tb)
}

// CleanTitle normalizes a title the way omp does before storing it: control
// characters become spaces, runs of spaces collapse, the ends are trimmed.
// A lone surrogate (held as WTF-8) is kept, as a JavaScript string keeps
// it; other invalid UTF-8 becomes U+FFFD as TextDecoder decodes it.
func CleanTitle(title string) string {
	title = jsonx.WellFormed(title)
	var sb strings.Builder
	space := false
	for i := 0; i < len(title); {
		r, size := jsonx.DecodeRuneInString(title[i:])
		if unicode.IsControl(r) || r == ' ' {
			space = true
			i += size
			continue
		}
		if space && sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		space = false
		sb.WriteString(title[i : i+size])
		i += size
	}
	return sb.String()
}

// ErrEmptyTitle is returned for a title that is empty after cleaning.
var ErrEmptyTitle = errors.New("title is empty")

// SetTitle retitles the session the way omp does: it appends a
// title_change entry, then overwrites the 256-byte slot at offset 0 in
// place; no other byte of the file moves. A file without a slot, or whose
// line 1 is a slot of another width (CRLF line endings, another writer's
// narrow slot), or that starts with a byte order mark, gets a new slot by
// an atomic rewrite that keeps every other byte and adds the entry. An
// automatic title never replaces a manual one (it reports false). A title
// too long for the slot is cut there (Title returns what was kept); the
// title_change entry keeps it whole. A session whose last entry has no id
// is refused (ErrLeafWithoutID).
//
// Either both the entry and the slot are written or neither: a slot write
// that fails takes the entry back out.
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
	changed := false
	e := &Entry{Type: TypeTitleChange}
	var slot []byte
	// prepare runs once the store has taken in the file's current state,
	// so the manual-title rule and previousTitle see the latest title.
	prepare := func() error {
		prev, prevSource := s.titleLocked()
		if source == TitleAuto && prevSource == TitleManual {
			return nil
		}
		if s.leafWithoutID() {
			return fmt.Errorf("%s: %w", s.path, ErrLeafWithoutID)
		}
		now := Now()
		var err error
		if slot, err = MarshalTitleSlot(title, source, now); err != nil {
			return err
		}
		e.ID, e.ParentID, e.Timestamp = s.freshID(nil), s.leaf, now
		e.Body = &TitleChange{Title: title, Source: source.wire(), PreviousTitle: prev}
		if e.raw, err = encodeEntry(e); err != nil {
			return err
		}
		changed = true
		return nil
	}
	setSlot := func() {
		s.slot, _ = ParseTitleSlot(slot)
		s.hasSlot = true
	}
	if s.memoryOnly {
		if err := prepare(); err != nil || !changed {
			return false, err
		}
		if err := s.commit([]*Entry{e}, func() error { return nil }); err != nil {
			return false, err
		}
		setSlot()
		return true, nil
	}
	err := s.lockedWrite(func() error {
		if err := prepare(); err != nil || !changed {
			return err
		}
		inPlace, old, replace, err := s.slotPlan()
		if err != nil {
			return err
		}
		if !inPlace {
			return s.rewriteWithSlot(slot, replace, e)
		}
		size, lines, torn := s.size, s.lines, s.tornTail
		if err := s.appendLines(e.raw); err != nil {
			return err
		}
		if err := s.writeSlotInPlace(slot, old); err != nil {
			return errors.Join(err, s.truncateBack(size, lines))
		}
		e.line = s.lines
		s.took([]*Entry{e}, torn)
		return nil
	})
	if err != nil || !changed {
		return false, err
	}
	setSlot()
	return true, nil
}

// slotPlan reads line 1 and says how a new slot goes in: in place over a
// 256-byte slot (old is its bytes, to put back should the write fail), or
// by a rewrite, which replaces the first replace bytes of the file: none
// when the file has no slot, a byte order mark, or line 1 when it is a
// slot of another width (a CRLF file's, a narrow one another writer
// made), which overwriting 256 bytes in place would damage. It runs
// inside lockedWrite.
func (s *Store) slotPlan() (inPlace bool, old []byte, replace int64, err error) {
	buf := make([]byte, 4096)
	n, err := s.w.f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return false, nil, 0, fmt.Errorf("%s: reading the slot: %w", s.path, err)
	}
	buf = buf[:n]
	width := bytes.IndexByte(buf, '\n') + 1
	if width == TitleSlotWidth {
		if _, ok := ParseTitleSlot(buf[:width]); ok {
			return true, buf[:width], 0, nil
		}
	}
	if !s.hasSlot {
		// A byte order mark belongs before line 1, which is now the slot:
		// it goes, as omp's own rewrite (from what its TextDecoder read)
		// drops it.
		if bytes.HasPrefix(buf, utf8BOM) {
			return false, nil, int64(len(utf8BOM)), nil
		}
		return false, nil, 0, nil
	}
	if width == 0 {
		return false, nil, 0, fmt.Errorf("%s: line 1 is a title slot longer than 4 KiB; nothing was changed. 'xdev verify --repair %s' writes a repaired copy", s.path, s.path)
	}
	return false, nil, int64(width), nil
}

// writeSlotInPlace overwrites line 1 with slot through a descriptor of its
// own (the append descriptor is O_APPEND, which makes Linux's pwrite
// append). A failed write puts old back. It runs inside lockedWrite.
func (s *Store) writeSlotInPlace(slot, old []byte) error {
	f, err := os.OpenFile(s.path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := diskWriteAt(f, slot, 0); err != nil {
		// Put the old slot back, so a failed write leaves line 1 as it was
		// rather than half new.
		if _, rerr := diskWriteAt(f, old, 0); rerr != nil {
			err = errors.Join(err, fmt.Errorf("restoring the old slot: %w", rerr))
		}
		return fmt.Errorf("%s: writing the slot: %w", s.path, err)
	}
	return nil
}

// rewriteWithSlot replaces the file by one with slot in front, the
// file's bytes after the first skip (a byte order mark, or a slot that
// cannot be rewritten in place), then e: one atomic step, so a failure
// changes nothing. It runs inside lockedWrite.
func (s *Store) rewriteWithSlot(slot []byte, skip int64, e *Entry) error {
	f := s.w.f
	size := s.size
	// Asked before the copy, so a refusal costs nothing, and again just
	// before the rename: a writer that opened the file while it was
	// copied and synced would otherwise go on writing into the old,
	// unlinked file.
	if err := refuseOpenWriters(s.path, f); err != nil {
		return err
	}
	newline := int64(0) // after a torn last line
	if size > 0 && s.tornTail {
		newline = 1
	}
	err := replaceFileIf(s.path, func(w io.Writer) error {
		if _, err := w.Write(slot); err != nil {
			return err
		}
		if _, err := io.Copy(w, io.NewSectionReader(f, skip, size-skip)); err != nil {
			return err
		}
		if newline > 0 {
			if _, err := w.Write([]byte{'\n'}); err != nil {
				return err
			}
		}
		_, err := w.Write(append(e.raw, '\n'))
		return err
	}, func() error { return refuseOpenWriters(s.path, f) })
	if err != nil {
		return err
	}
	// Bytes another writer appended to the old file while it was copied
	// (one that ignores the lockfile) are carried over, not lost.
	carried, err := carryOver(f, size, s.path)
	f.Close()
	s.w = nil
	if err != nil {
		return err
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		return err
	}
	s.ino = fi.Sys().(*syscall.Stat_t).Ino
	s.size = size - skip + newline + int64(len(slot)) + int64(len(e.raw)) + 1
	if !s.hasSlot {
		s.headerLine++
		s.lines++
	}
	s.lines++ // e
	s.entriesOff += int64(len(slot)) - skip
	s.tornTail = false
	e.line = s.lines
	s.addAll([]*Entry{e})
	if carried > 0 {
		return s.reload()
	}
	// The next write opens the new file; nothing else changed it.
	return nil
}

// ErrOpenElsewhere is returned by a write that must rewrite a session
// file (a retitle of a file without a title slot) while another process
// holds it open for writing without omp's lockfile: what that process
// writes next would go to the old file, unlinked by the rewrite, and be
// lost. Nothing is changed; try again once it is done.
var ErrOpenElsewhere = errors.New("another process holds the file open for writing")

// refuseOpenWriters fails with ErrOpenElsewhere when a process other than
// this one holds the file f (of path) open for writing.
func refuseOpenWriters(path string, f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	pids := otherWriters(fi)
	if len(pids) == 0 {
		return nil
	}
	var who []string
	for _, p := range pids[:min(len(pids), 5)] {
		who = append(who, strings.TrimSpace(fmt.Sprintf("%d %s", p, processName(p))))
	}
	return fmt.Errorf("%s: %w (pid %s): the file has no title slot, so a retitle rewrites it, and that process's next writes would go to the old file; nothing was changed, try again once it is done",
		path, ErrOpenElsewhere, strings.Join(who, ", pid "))
}

// carryOver appends to the file at path what was appended to old (the
// file it replaced, still open) past size, until old stops growing, and
// returns how many bytes it carried.
func carryOver(old *os.File, size int64, path string) (int64, error) {
	var carried int64
	for range 100 {
		fi, err := old.Stat()
		if err != nil {
			return carried, err
		}
		if fi.Size() <= size {
			return carried, nil
		}
		dst, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return carried, err
		}
		n, err := io.Copy(dst, io.NewSectionReader(old, size, fi.Size()-size))
		carried += n
		size += n
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return carried, fmt.Errorf("%s: carrying over what was appended during the rewrite: %w", path, err)
		}
	}
	return carried, nil
}
