package session

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"syscall"

	"github.com/xdev/xdev/internal/jsonx"
)

// errNotStrictJSON sends a windowed load to a full one: a kept line that
// the envelope pass accepted is not JSON by JSON.parse's rules.
var errNotStrictJSON = errors.New("a kept line is not strict JSON")

// ErrNoHeader is returned (wrapped, naming the file and line) when a file's
// first line is neither a title slot nor a session header, or the file holds
// no header at all. Such a file is never written to.
var ErrNoHeader = errors.New("no session header")

// OpenOptions tune Open. The zero value is ready to use.
type OpenOptions struct {
	// MaxLineBytes bounds the size of one line; longer lines are skipped and
	// counted as malformed. Zero means DefaultMaxLineBytes.
	MaxLineBytes int
	// Full disables windowing: every entry of the file is kept in memory.
	Full bool
	// Blobs resolves image blob references in the context. Nil means the
	// blob store beside the file's sessions directory, when there is one.
	Blobs *BlobStore
	// Lock tunes the lockfile the store's writes take.
	Lock LockOptions
	// MaxWindowBytes, when positive, bounds what Open holds: a session
	// whose window (the lines a context build reads) is larger fails with
	// ErrWindowTooLarge before any of it is decoded. ReadContext reads
	// such a session's context a message at a time instead.
	MaxWindowBytes int64
	// Checkpoints, when set, is the directory where the windowed load
	// keeps what it read of a file of 8 MiB or more, so that
	// the next load of the same file reads only the lines appended since
	// (see checkpoint.go). It is a cache: anything there may be removed.
	Checkpoints string

	// skipLine1: read the file as if line 1 were blank (Verify reads past a
	// slot neither program accepts).
	skipLine1 bool
}

// BadLine describes a line Open skipped.
type BadLine struct {
	Line   int
	Kind   BadKind
	Reason string // what the parser said, for a person
}

// BadKind says why a line was skipped.
type BadKind string

// The kinds of BadLine.
const (
	BadNotJSON BadKind = "not-json" // JSON.parse refuses it: a torn write, garbage
	BadNull    BadKind = "null"     // JSON null: omp's loader throws on it (see ompfault.go)
	BadTooLong BadKind = "too-long" // longer than OpenOptions.MaxLineBytes; never read whole
)

// lineError is the BadLine of a line whose envelope scan (or decode)
// failed with err.
func lineError(line int, err error) BadLine {
	kind := BadNotJSON
	if errors.Is(err, errNullLine) {
		kind = BadNull
	}
	return BadLine{Line: line, Kind: kind, Reason: err.Error()}
}

// lineTooLong is the BadLine of a line longer than max bytes.
func lineTooLong(line, max int) BadLine {
	return BadLine{Line: line, Kind: BadTooLong, Reason: tooLongReason(max)}
}

// WindowStats says how much of a file Open kept in memory.
type WindowStats struct {
	Seen     int  // entries in the file
	Retained int  // entries kept in memory
	Engaged  bool // some entries were dropped because no context can read them
	// Backward: the file was read from the end, holding only the window.
	// False for Full loads, v1 files (windowed by the forward pass instead),
	// and files whose parent links do not all point back in the file or
	// whose context reads before the window (these are kept whole).
	Backward bool
	// Checkpoint: the backward load read only the lines after a
	// checkpoint (OpenOptions.Checkpoints), taking the rest from it.
	Checkpoint bool
}

// record is the index Open keeps for every entry while it streams the file:
// where the line is and how it hangs in the tree, not its content.
type record struct {
	off      int64
	size     int32 // line length without newline
	line     int32
	id       string
	parentID string
	rare     *recordRare // what few entries have; nil for most
	typ      uint8       // the type's code (typeNames); 0 with rare.typ
	fault    uint8       // what omp's loader throws on in it (ompFaults)
	bogus    bool        // see envelope.bogus
	// assistant marks assistant messages: before an explicit model change,
	// the latest one names the model.
	assistant bool
	notes     bool // see envelope.notes
	readsBack bool // see envelope.readsBack
}

// recordRare is what a compaction, a model change or an entry of a type
// xdev does not know adds to its record: held apart, so that the records
// of a long chain of messages (an Index holds one an entry) stay small.
type recordRare struct {
	typ       string // a type without a code
	kept      string // compaction: firstKeptEntryId (resolved for v1)
	modelRole string // see envelope.modelRole
}

// newRecord is the record of the entry at off whose envelope is env.
// near is an id read just before (the previous entry's id reading
// forward, the next entry's parent reading backward), which an entry's
// parentId or id usually equals: the string is then shared, not held
// twice.
func newRecord(off int64, size, line int, env *envelope, near string) record {
	r := record{off: off, size: int32(size), line: int32(line), id: env.id, parentID: env.parentID,
		typ: typeCodes[env.typ], fault: faultCode(env.fault), bogus: env.bogus,
		assistant: env.assistant, notes: env.notes, readsBack: env.readsBack}
	if unknown := r.typ == 0 && env.typ != ""; unknown || env.firstKept != "" || env.modelRole != "" {
		r.rare = &recordRare{kept: env.firstKept, modelRole: env.modelRole}
		if unknown {
			r.rare.typ = env.typ
		}
	}
	switch near {
	case r.parentID:
		r.parentID = near
	case r.id:
		r.id = near
	}
	return r
}

// typeName is the entry's type.
func (r *record) typeName() string {
	if r.typ == 0 && r.rare != nil {
		return r.rare.typ
	}
	return typeNames[r.typ]
}

func (r *record) kept() string {
	if r.rare == nil {
		return ""
	}
	return r.rare.kept
}

func (r *record) modelRole() string {
	if r.rare == nil {
		return ""
	}
	return r.rare.modelRole
}

// Open reads the session file at path. It never writes to the file.
//
// Open reads the file once from the end, parsing only the envelope of each
// line (type, id, parentId). The last entry is the leaf, so reading
// backward walks the leaf's path as it goes, and Open keeps in memory only
// what the context build at the leaf reads: the path's entries from the
// governing compaction's kept entry (or the latest reset) to the leaf,
// plus the few settings entries on the path before it (model, thinking
// level, ...). Entries of other branches are counted and dropped. The kept
// lines are then decoded in full. A path without a boundary is kept whole.
// v1 files are windowed by a forward pass (their ids come from positions);
// files whose parent links do not all point back in the file, or whose
// governing compaction reads before its window, are loaded in full (see
// WindowStats). For every entry of a file, use OpenOptions.Full or an Index.
//
// Malformed lines (torn writes, garbage, lines longer than MaxLineBytes) are
// skipped and counted; see Store.Malformed. A file whose first line is
// neither a title slot nor a header fails with ErrNoHeader.
func Open(path string, opts *OpenOptions) (*Store, error) {
	f, fi, err := openRegular(path, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return openAt(path, f, file{size: fi.Size(), ino: fi.Sys().(*syscall.Stat_t).Ino, mtime: fi.ModTime().UnixNano()}, opts)
}

// ErrReadOnly is returned by the writes of a Store that OpenReader made:
// what it read is not a file a lockfile guards.
var ErrReadOnly = errors.New("session is read-only: not opened from a file")

// OpenReader reads a session of size bytes from r as Open reads a file,
// by the same rules and with the same bounded memory: backward from the
// end, holding only the window. name names the session in errors and is
// what Store.Path returns. It is how a session stored elsewhere than in a
// file (a database row per line) is opened without copying it out: r
// need only serve the ranges asked for. The Store's writes fail with
// ErrReadOnly.
func OpenReader(name string, r io.ReaderAt, size int64, opts *OpenOptions) (*Store, error) {
	s, err := openAt(name, r, file{size: size}, opts)
	if s != nil {
		s.readOnly = true
	}
	return s, err
}

// openAt is Open over r, the file fi says (its inode 0 for no file).
func openAt(path string, r io.ReaderAt, fi file, opts *OpenOptions) (*Store, error) {
	if opts == nil {
		opts = &OpenOptions{}
	}
	size := fi.size
	s := &Store{path: path, file: fi, opts: *opts}
	if !opts.Full {
		ok, err := s.openBackward(r, size)
		switch {
		case err == nil && ok:
			s.stats.Backward = true
			return s, nil
		case errors.Is(err, errNotStrictJSON):
			full := *opts
			full.Full = true
			return openAt(path, r, fi, &full)
		case err != nil:
			return nil, err
		}
		s = &Store{path: path, file: fi, opts: *opts}
	}
	recs, err := s.scanFile(io.NewSectionReader(r, 0, size))
	if err != nil {
		return nil, err
	}
	keep := s.chooseWindow(recs)
	if err := s.checkWindow(recs, keep); err != nil {
		return nil, err
	}
	if err := s.decodeRecords(r, recs, keep); err != nil {
		if errors.Is(err, errNotStrictJSON) {
			full := *opts
			full.Full = true
			return openAt(path, r, fi, &full)
		}
		return nil, err
	}
	return s, nil
}

// scanFile reads the slot, the header and the envelope of every entry.
func (s *Store) scanFile(f io.Reader) ([]record, error) {
	var recs []record
	err := s.scanEach(f, func(_ rawLine, rec *record) error {
		recs = append(recs, *rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.stats.Seen = len(recs)
	return recs, nil
}

// scanEach is scanFile handing each entry's line and record to fn as it
// is read, keeping none; fn's error stops it.
func (s *Store) scanEach(f io.Reader, fn func(l rawLine, rec *record) error) error {
	lr := newLineReader(f, 0, s.opts.MaxLineBytes)
	defer lr.release()
	fw := &forward{path: s.path, opts: &s.opts, max: lr.max, skip: s.skip, rewrite: s.noteRewrite}
	for {
		l, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: line %d: %w", s.path, lr.lineNum+1, err)
		}
		if !l.eol {
			s.tornTail = true
		}
		rec, ok, err := fw.step(l)
		if err != nil {
			return err
		}
		if ok {
			if err := fn(l, &rec); err != nil {
				return err
			}
		}
	}
	if fw.cur.Version == 0 {
		return noHeaderError(s.path, s.badLines)
	}
	s.slot, s.hasSlot = fw.slot, fw.hasSlot
	s.header, s.headerLine, s.version = fw.cur.Header, fw.cur.HeaderLine, fw.cur.Version
	s.lines = lr.lineNum
	return nil
}

func (s *Store) skip(b BadLine) {
	s.malformed++
	if b.Kind == BadNull {
		if s.nullLines == 0 {
			s.firstNull = b.Line
		}
		s.nullLines++
	}
	if len(s.badLines) < maxBadLines {
		s.badLines = append(s.badLines, b)
	}
}

const maxBadLines = 100

// noteRewrite counts a line that makes omp rewrite the file (see
// forward.rewrite), keeping the first maxBadLines line numbers of each
// reason.
func (s *Store) noteRewrite(line int, why rewriteReason) {
	n := &s.rewrites[why]
	if len(n.lines) < maxBadLines {
		n.lines = append(n.lines, line)
	}
	n.count++
}

// chooseWindow decides which records to keep and returns their indexes in
// file order.
func (s *Store) chooseWindow(recs []record) []int {
	if len(recs) == 0 {
		return nil
	}
	if s.opts.Full || s.version >= 2 {
		// From v2 on, the windowed load is openBackward; a file that comes
		// here declined it (a parent after its child, a duplicate or cyclic
		// id) and is kept whole, the one reading that is surely omp's.
		return allRecords(len(recs))
	}
	byID := make(map[string]int32, len(recs))
	for i := range recs {
		byID[recs[i].id] = int32(i) // a duplicate id: the later entry wins, as in omp
	}
	// The path from the leaf (the last entry) to its root, stopping at a
	// dangling parent or a cycle.
	var path []int32
	seen := make(map[int32]bool)
	for i, ok := int32(len(recs)-1), true; ok && !seen[i]; i, ok = byID[recs[i].parentID] {
		seen[i] = true
		path = append(path, i)
		if recs[i].parentID == "" {
			break
		}
	}
	slices.Reverse(path)

	// The governing boundary is the later of the last compaction and the
	// last reset on the path (omp's rule); the window starts at its kept
	// entry, or at the boundary itself.
	start := -1 // position on the path
	for p := len(path) - 1; p >= 0; p-- {
		r := &recs[path[p]]
		if r.typeName() == TypeResetBoundary {
			start = p
			break
		}
		if r.typeName() == TypeCompaction {
			if r.readsBack {
				return allRecords(len(recs))
			}
			start = p
			for q := 0; q < p; q++ {
				if recs[path[q]].id == r.kept() {
					start = q
					break
				}
			}
			break
		}
	}
	if start <= 0 {
		return allRecords(len(recs))
	}
	first := int(path[start]) // the window's first entry in file order
	// What the context still reads from the path before the window (see
	// keep.go), met latest first.
	var prefix []int32
	var keeper prefixKeeper
	for p := start - 1; p >= 0; p-- {
		if i := path[p]; keeper.keeps(&recs[i]) {
			prefix = append(prefix, i)
		}
	}
	pos := make(map[int32]int, start)
	for p, i := range path[:start] {
		pos[i] = p
	}
	slices.SortFunc(prefix, func(a, b int32) int { return pos[a] - pos[b] })
	// prefix is in path order. Entries before the window in the file are
	// kept only for it; entries inside the window may be in it too.
	s.windowRoot = recs[path[start]].id
	s.prefixAt = prefix
	inPrefix := make(map[int32]bool, len(prefix))
	for _, i := range prefix {
		inPrefix[i] = true
	}
	keep := make([]int, 0, len(prefix)+len(recs)-first)
	for i := range first {
		if inPrefix[int32(i)] {
			keep = append(keep, i)
		}
	}
	for i := first; i < len(recs); i++ {
		keep = append(keep, i)
	}
	s.stats.Engaged = len(keep) < len(recs)
	return keep
}

// isStrictJSON reports whether line is JSON by JSON.parse's rules: the
// one rule every reader skips a line by, since it is the one a body is
// decoded by. (The envelope scan checks it as it reads; the listing's
// lenient head pass asks here.)
func isStrictJSON(line []byte) bool { return jsonx.Valid(line) }

// ErrWindowTooLarge is Open's error, with OpenOptions.MaxWindowBytes set,
// for a session whose window holds more bytes of lines than that: a long
// session that was never compacted, whose context is the whole file.
var ErrWindowTooLarge = errors.New("the session's context window is larger than the bound")

// checkWindow applies OpenOptions.MaxWindowBytes to the records to keep.
func (s *Store) checkWindow(recs []record, keep []int) error {
	if s.opts.MaxWindowBytes <= 0 {
		return nil
	}
	var n int64
	for _, i := range keep {
		if n += int64(recs[i].size); n > s.opts.MaxWindowBytes {
			return fmt.Errorf("%s: %w (%d bytes)", s.path, ErrWindowTooLarge, s.opts.MaxWindowBytes)
		}
	}
	return nil
}

// allRecords keeps every record: no window.
func allRecords(n int) []int {
	keep := make([]int, n)
	for i := range keep {
		keep[i] = i
	}
	return keep
}

// decodeRecords reads the kept lines back and decodes them in full.
func (s *Store) decodeRecords(f io.ReaderAt, recs []record, keep []int) error {
	s.entries = make([]*Entry, 0, len(keep))
	s.byID = make(map[string]*Entry, len(keep))
	var buf []byte
	first := 0 // the window's first record; records before it are prefix
	if s.windowRoot != "" {
		for _, i := range keep {
			if recs[i].id == s.windowRoot {
				first = i
			}
		}
	}
	byRec := make(map[int]*Entry, len(s.prefixAt))
	// The parsed lines are kept for the first context build only when
	// they are few: the values of a window of tens of MB (a session never
	// compacted) would double what the load holds.
	var windowBytes int64
	for _, i := range keep {
		windowBytes += int64(recs[i].size)
	}
	s.keepParsed = !s.opts.Full && windowBytes <= keepParsedBytes
	for _, i := range keep {
		r := &recs[i]
		if cap(buf) < int(r.size) {
			buf = make([]byte, r.size)
		}
		line := buf[:r.size]
		if _, err := f.ReadAt(line, r.off); err != nil {
			return fmt.Errorf("%s: line %d: %w", s.path, r.line, err)
		}
		e := &Entry{
			Type: r.typeName(), ID: r.id, ParentID: r.parentID,
			raw: append([]byte(nil), line...), line: int(r.line),
		}
		if err := s.decodeEntry(e, r.kept()); err != nil {
			// Bodies decode whatever JSON.parse accepts, so this line is not
			// JSON by its rules, though fastjson's lenient envelope pass took
			// it (raw control characters, unknown escapes): omp skips it. A
			// windowed load may have walked through it: load in full.
			if !s.opts.Full {
				return errNotStrictJSON
			}
			s.skip(lineError(int(r.line), err))
			s.stats.Seen--
			continue
		}
		s.entries = append(s.entries, e)
		byRec[i] = e
		if i < first {
			// Settings from before the window are reached only through the
			// window's root, never by id.
			continue
		}
		s.byID[e.ID] = e
	}
	for _, i := range s.prefixAt {
		if e := byRec[int(i)]; e != nil {
			s.prefix = append(s.prefix, e)
		}
	}
	s.stats.Retained = len(s.entries)
	if len(s.entries) > 0 {
		s.leaf = s.entries[len(s.entries)-1].ID
	}
	s.prefixAt = nil
	return nil
}
