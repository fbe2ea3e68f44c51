package session

import (
	"fmt"
	"hash/maphash"
	"io"
	"runtime"
	"slices"
	"sync"
)

// openBackward is the windowed load. It reads the file from the end, so
// it meets the leaf first and walks the leaf's path as it goes. It keeps
// the path's entries (as offsets, not copies) until it has found the start
// of the window: the governing boundary, then the compaction's kept entry.
// From there on it keeps only the settings entries of the path (model,
// thinking level, ...). Entries off the path are counted, never kept.
// Memory therefore follows the window of the path, not the file.
//
// It returns ok=false when the file needs the forward index instead: a v1
// file (whose ids come from line positions), or a path that does not run
// strictly backward through the file (a parent that appears after its
// child, a duplicate or cyclic id, a window start whose parent is missing),
// where omp's id-map semantics must be followed exactly.
func (s *Store) openBackward(f io.ReaderAt, size int64) (ok bool, err error) {
	pre, err := readPreamble(io.NewSectionReader(f, 0, size), s.path, s.opts.MaxLineBytes)
	if err != nil {
		return false, err
	}
	s.preamble = pre
	s.version = pre.header.FormatVersion()
	if s.version < 2 {
		return false, nil
	}
	end := size
	if size > pre.entriesOff {
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err != nil {
			return false, fmt.Errorf("%s: %w", s.path, err)
		}
		if last[0] == '\n' {
			end--
		} else {
			s.tornTail = true
		}
	}
	w := walk{seen: newIDSet()}
	// With a checkpoint, only the lines after it are read from the file;
	// its own lines follow, as they would in the file (checkpoint.go).
	lo := pre.entriesOff
	ck := s.loadCheckpoint(f, pre, size)
	if ck != nil {
		lo = ck.end
	}
	// The lines are recorded for the next checkpoint when the file is
	// long enough to be worth one and ends in a whole line.
	var record lineRecord
	recording := s.opts.Checkpoints != "" && s.file.ino != 0 && size >= checkpointMinBytes && !s.tornTail
	limit := checkpointLimit(size)
	near := ""
	take := func(l *walkLine) bool {
		if recording {
			if record.add(l); record.n > limit {
				recording, record = false, lineRecord{}
			}
		}
		return w.take(l, &near)
	}
	if lo < end {
		rl := newRevLines(f, lo, end, s.opts.MaxLineBytes)
		batches, stop := readAhead(rl)
		defer stop()
		var ep envelopeParser
		var wl walkLine
		for b := range batches {
			if b.err != nil && b.err != io.EOF {
				return false, fmt.Errorf("%s: reading backward from offset %d: %w", s.path, rl.lo, b.err)
			}
			lines := b.lines
			envs := ep.parse(lines)
			for i := range lines {
				l, env := &lines[i], &envs[i]
				if l.blanks > 0 {
					wl = walkLine{kind: ckBlank}
					for range l.blanks {
						if !take(&wl) {
							return false, nil
						}
					}
					continue
				}
				switch {
				case l.tooLong:
					wl = walkLine{kind: ckBad, bad: lineTooLong(0, rl.max)}
				case env.blank:
					wl = walkLine{kind: ckBlank}
				case env.err != nil:
					wl = walkLine{kind: ckBad, bad: lineError(0, env.err)}
				default:
					wl = walkLine{kind: ckEntry, off: l.off, size: len(env.entryBytes(l.data)), env: env.envelope}
				}
				if !take(&wl) {
					return false, nil
				}
			}
			b.done()
		}
	}
	if ck != nil {
		if recording {
			if record.addEncoded(ck.lines); record.n > limit {
				recording, record = false, lineRecord{}
			}
		}
		d := ckDecoder{b: ck.lines}
		var wl walkLine
		for len(d.b) > 0 {
			if !d.line(&wl) {
				// Damaged past its checksum's reach: load the file whole.
				s.opts.Checkpoints = ""
				return s.openBackward(f, size)
			}
			if !w.take(&wl, &near) { // recorded already, with the rest of ck.lines
				return false, nil
			}
		}
	}
	recs, ok := w.finish()
	if !ok {
		return false, nil
	}
	// Line numbers were counted from the end.
	num := func(k int32) int32 { return int32(s.headerLine+w.lines) - k }
	for i := range recs {
		recs[i].line = num(recs[i].line)
	}
	for i := len(w.badLines) - 1; i >= 0; i-- {
		b := w.badLines[i]
		b.Line = int(num(int32(b.Line)))
		s.badLines = append(s.badLines, b)
	}
	s.malformed = w.malformed
	for _, b := range pre.bad {
		s.skip(b)
	}
	s.lines = s.headerLine + w.lines
	s.stats.Seen = w.entries
	s.stats.Engaged = len(recs) < w.entries
	keep := allRecords(len(recs))
	if err := s.checkWindow(recs, keep); err != nil {
		return false, err
	}
	if w.startIdx >= 0 && w.phase == phasePrefix {
		s.windowRoot = w.tail[w.startIdx].id
		s.prefixAt = make([]int32, len(w.prefix))
		for i := range s.prefixAt {
			s.prefixAt[i] = int32(i)
		}
	}
	if err := s.decodeRecords(f, recs, keep); err != nil {
		return false, err
	}
	s.stats.Checkpoint = ck != nil
	if recording && (ck == nil || ck.end < size) {
		s.saveCheckpoint(f, pre, size, &record)
	}
	return true, nil
}

// take is the walk's step over one line l (going backward): a blank line
// is counted, a bad one counted and kept for the report, an entry
// stepped to. near is the id the last entry's record shares. It returns
// false when the file needs the forward index.
func (w *walk) take(l *walkLine, near *string) bool {
	k := w.lines
	w.lines++
	switch l.kind {
	case ckBlank:
		return true
	case ckBad:
		b := l.bad
		b.Line = k
		w.bad(b)
		return true
	}
	r := newRecord(l.off, l.size, k, &l.env, *near)
	*near = r.parentID
	return w.step(&r)
}

// The phases of the backward walk.
const (
	phaseCollect  = iota // keeping every line; no boundary on the path yet
	phaseSeekKept        // past a compaction; looking for its kept entry
	phasePrefix          // window found; keeping only the path's settings
	phaseAll             // the window starts at the root: keep everything
)

// walk is the state of the backward walk.
type walk struct {
	phase      int
	wanted     string // the next entry on the leaf's path
	haveLeaf   bool
	keptWanted string
	compIdx    int      // index in tail of the governing compaction
	pathIdx    []int    // phaseSeekKept: indexes in tail of path entries before the compaction
	startIdx   int      // index in tail of the window's first entry
	prefixHops int      // path entries found after the window start
	tail       []record // kept records, last first
	prefix     []record // settings before the window, leaf side first
	keeper     prefixKeeper
	seen       *idSet

	lines, entries, malformed int
	badLines                  []BadLine // the latest maxBadLines met, i.e. the first in the file
}

// bad records a skipped line; b.Line counts from the end until finish.
func (w *walk) bad(b BadLine) {
	w.malformed++
	if len(w.badLines) == maxBadLines {
		copy(w.badLines, w.badLines[1:])
		w.badLines = w.badLines[:maxBadLines-1]
	}
	w.badLines = append(w.badLines, b)
}

// step takes the next record (going backward). It returns false when the
// file needs the forward index.
func (w *walk) step(r *record) bool {
	w.entries++
	if !w.haveLeaf {
		if r.id == "" {
			// An id-less last line is omp's leaf all the same, reached by
			// position, not by id: the forward load follows that.
			return false
		}
		w.haveLeaf, w.wanted, w.startIdx = true, r.id, -1
	}
	onPath := w.wanted != "" && r.id == w.wanted
	if onPath && w.phase != phasePrefix {
		// Only the leaf's path: entries of other branches, however close,
		// are never read by the context at the leaf.
		w.tail = append(w.tail, *r)
	}
	if onPath {
		switch w.phase {
		case phaseCollect:
			switch r.typeName() {
			case TypeResetBoundary:
				w.startWindow(len(w.tail) - 1)
			case TypeCompaction:
				if r.readsBack {
					return false // its context reads before the window: load in full
				}
				w.compIdx = len(w.tail) - 1
				if r.kept() == "" {
					w.startWindow(w.compIdx)
				} else {
					w.keptWanted, w.phase = r.kept(), phaseSeekKept
				}
			}
		case phaseSeekKept:
			if r.id == w.keptWanted {
				w.startWindow(len(w.tail) - 1)
			} else {
				w.pathIdx = append(w.pathIdx, len(w.tail)-1)
			}
		case phasePrefix:
			w.prefixHops++
			w.considerPrefix(r)
		}
		// A parent met already lies after its child in the file (or is a
		// duplicate, or the child itself): only the forward index follows
		// omp's id map there.
		if r.parentID != "" && (r.parentID == r.id || w.seen.has(r.parentID)) {
			return false
		}
		w.wanted = r.parentID
		if w.wanted == "" && w.phase == phaseSeekKept {
			// The compaction's kept entry is not on the path: the window
			// starts at the compaction, and the path entries before it were
			// all met already.
			w.startWindow(w.compIdx)
			if w.phase == phasePrefix {
				for _, i := range w.pathIdx {
					w.considerPrefix(&w.tail[i])
				}
				w.prefixHops = len(w.pathIdx)
				w.tail = w.tail[:w.compIdx+1]
			}
		}
	}
	w.seen.add(r.id)
	return true
}

// startWindow makes tail[i] the window's first entry. A window that starts
// at the path's root is no window: everything is kept.
func (w *walk) startWindow(i int) {
	w.startIdx = i
	if w.tail[i].parentID == "" {
		w.phase = phaseAll
		return
	}
	w.phase = phasePrefix
}

// considerPrefix keeps r if the context still reads it (see keep.go).
func (w *walk) considerPrefix(r *record) {
	if w.keeper.keeps(r) {
		w.prefix = append(w.prefix, *r)
	}
}

// finish returns the kept records in file order: the prefix, then the
// window. ok=false sends the file to the forward index.
func (w *walk) finish() ([]record, bool) {
	switch {
	case w.phase == phaseSeekKept && w.wanted != "":
		// The path ended at a missing parent before the kept entry was found.
		return nil, false
	case w.phase == phasePrefix && w.prefixHops == 0 && w.wanted != "":
		// The window's first entry has a missing parent: it is the path's
		// root, and omp's rule then keeps everything.
		return nil, false
	}
	if w.phase == phasePrefix {
		w.tail = w.tail[:w.startIdx+1]
	} else {
		w.prefix = nil
	}
	recs := make([]record, 0, len(w.prefix)+len(w.tail))
	for i := len(w.prefix) - 1; i >= 0; i-- {
		recs = append(recs, w.prefix[i])
	}
	for i := len(w.tail) - 1; i >= 0; i-- {
		recs = append(recs, w.tail[i])
	}
	return recs, true
}

// idSet is a set of entry ids held as 64-bit hashes (two halves: one
// picks the slot, both must match) in an open-addressed table at most 3/4
// full, 11 to 21 bytes an entry: the only part of the walk that grows with
// the whole file (1 MiB at 77,000 entries). A hash collision can only send
// the file to the full load, never change a result.
type idSet struct {
	slots []uint32 // fingerprints; 0 is empty
	homes []uint32 // the high hash half of each slot's id, to rehash on growth
	n     int
}

var idSeed = maphash.MakeSeed()

func newIDSet() *idSet {
	return &idSet{slots: make([]uint32, 1024), homes: make([]uint32, 1024)}
}

// idHash returns an id's home (for the slot) and its fingerprint.
func idHash(id string) (home, fp uint32) {
	h := maphash.String(idSeed, id)
	fp = uint32(h)
	if fp == 0 {
		fp = 1
	}
	return uint32(h >> 32), fp
}

func (s *idSet) has(id string) bool {
	home, fp := idHash(id)
	mask := uint32(len(s.slots) - 1)
	for i := home & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case 0:
			return false
		case fp:
			if s.homes[i] == home {
				return true
			}
		}
	}
}

func (s *idSet) add(id string) {
	if 4*(s.n+1) > 3*len(s.slots) {
		oldSlots, oldHomes := s.slots, s.homes
		s.slots = make([]uint32, 2*len(oldSlots))
		s.homes = make([]uint32, 2*len(oldSlots))
		s.n = 0
		for i, fp := range oldSlots {
			if fp != 0 {
				s.insert(oldHomes[i], fp)
			}
		}
	}
	s.insert(idHash(id))
}

func (s *idSet) insert(home, fp uint32) {
	mask := uint32(len(s.slots) - 1)
	for i := home & mask; ; i = (i + 1) & mask {
		switch {
		case s.slots[i] == 0:
			s.slots[i], s.homes[i] = fp, home
			s.n++
			return
		case s.slots[i] == fp && s.homes[i] == home:
			return
		}
	}
}

// parsedLine is the envelope of one line, or why it has none.
type parsedLine struct {
	envelope
	blank bool
	err   error
}

// envelopeParser parses the envelopes of a batch of lines on all CPUs: it
// is most of the work of a load, and lines parse independently. The walk
// over the results stays sequential.
type envelopeParser struct {
	scanners []scanner
	out      []parsedLine
}

func (p *envelopeParser) parse(lines []revLine) []parsedLine {
	p.out = slices.Grow(p.out[:0], len(lines))[:len(lines)]
	workers := runtime.GOMAXPROCS(0)
	total := 0
	for i := range lines {
		total += len(lines[i].data)
	}
	if workers < 2 || total < 256<<10 {
		workers = 1
	}
	if len(p.scanners) < workers {
		p.scanners = make([]scanner, workers)
	}
	// Split by bytes, not lines: one tool output can outweigh a hundred
	// messages.
	var wg sync.WaitGroup
	from, acc, w := 0, 0, 0
	for i := range lines {
		acc += len(lines[i].data)
		if (w < workers-1 && acc*workers >= total*(w+1)) || i == len(lines)-1 {
			sc, a, b := &p.scanners[w], from, i+1
			wg.Go(func() {
				for j := a; j < b; j++ {
					p.out[j] = parseLine(sc, &lines[j])
				}
			})
			from, w = i+1, w+1
		}
	}
	wg.Wait()
	return p.out
}

func parseLine(sc *scanner, l *revLine) parsedLine {
	if l.tooLong {
		return parsedLine{}
	}
	if blank(l.data) {
		return parsedLine{blank: true}
	}
	env, err := sc.scan(l.data)
	return parsedLine{envelope: env, err: err}
}

// readAhead reads batches on its own goroutine, one block ahead of the
// parsing, in two buffers that take turns. stop ends it early.
func readAhead(rl *revLines) (<-chan *readBatch, func()) {
	out := make(chan *readBatch)
	free := make(chan *readBatch, 2)
	quit := make(chan struct{})
	for range 2 {
		free <- &readBatch{free: free}
	}
	go func() {
		defer close(out)
		for {
			var b *readBatch
			select {
			case b = <-free:
			case <-quit:
				return
			}
			b.err = rl.batch(&b.lineBatch)
			if b.err == io.EOF {
				return
			}
			select {
			case out <- b:
			case <-quit:
				return
			}
			if b.err != nil {
				return
			}
		}
	}()
	var once sync.Once
	return out, func() {
		once.Do(func() { close(quit) })
		for range out { // let the reader finish before the file is closed
		}
	}
}

// readBatch is a lineBatch that goes back to its pool when parsed.
type readBatch struct {
	lineBatch
	free chan *readBatch
}

func (b *readBatch) done() { b.free <- b }
