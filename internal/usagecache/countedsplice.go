package usagecache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/usage"
)

// The splice. ReplaceCounted wrote the counted file anew from its groups
// decoded four times over (the status made of them, the models numbered,
// the tables of sessions collected and written): at 25,001 sessions 170
// ms of a server's recount of one session, and 25 MB allocated. But a
// recount changes a few sessions' groups and sums, and nothing else of
// the file: the other sessions' table entries, groups and pages of sums
// are the same bytes. So where it may, it splices: it walks the groups
// part once (no group kept but the recent ones), and writes the file of
// the old one's bytes with the recounts' in their places:
//
//   - the head's numbers anew, its models with the recounts' new ones
//     after the old (whose numbers the groups keep);
//   - the sums' pages as they were, but the pages of the recounts' names,
//     their sums replaced (a session's place among the status's sessions
//     is where its groups first are, which a recount does not move) and
//     the new sessions' put after (theirs are the last places);
//   - the status anew: its span from now, the latest call's sum (of the
//     old latest and the recounts'), the pages' lengths and checksums,
//     and the recent groups, found in the walk;
//   - the groups part: the table of sessions with the recounts' entries
//     written anew and the new sessions' after, and the groups with each
//     recount's in place of its old ones, the new sessions' after.
//
// What a reader reads of it is what it reads of the file written whole:
// the same head (but the models' order), groups, status and sums. Where
// the splice cannot say as much (the pages would be others for the
// sessions' count, a recount's session changed its id or lost its
// groups, or the old latest call's session was recounted to an earlier
// one), the file is written whole.

// errNotSpliced is spliceCounted's: the file is to be written whole.
var errNotSpliced = errors.New("not spliced")

// noSplice has every counted file written whole: a test's oracle;
// splices counts the files spliced.
var (
	noSplice = false
	splices  atomic.Int64
)

// A spliceRef is a session of a spliced file: an entry of the old
// table where it is 0 or more, else the recount -1-ref's session.
type spliceRef int

// A splicedGroup is a group of a spliced file's recent groups: its
// session's and rollup's, and its bucket.
type splicedGroup struct {
	s, r spliceRef
	b    usage.Bucket
}

// spliceCounted is ReplaceCounted's splice of the counted file at path,
// opened as f, of parts p, whose head is old (its models models) and
// groups part body; rs are the recounts, checked as ReplaceCounted
// checks them (the error says why not). It is errNotSpliced where the
// file is to be written whole; then nothing was written.
func spliceCounted(path string, f io.ReaderAt, p countedParts, old Counted, models []usage.ModelRef, body []byte, k Counted, rs []Recount) (Counted, error) {
	since := float64(countedNow().Add(-RecentSpan).UnixMilli())
	// The recounts by path, and each one's place in the old table.
	byPath := map[string][]int{}
	for i := range rs {
		rs[i].Was = nil
		byPath[rs[i].Session.Path] = append(byPath[rs[i].Session.Path], i)
	}
	at := make([]int, len(rs))
	for i := range at {
		at[i] = -1
	}
	was := make([]*usage.Session, len(rs)) // the old table's session of each
	r := &usageReader{b: unsafeString(body)}
	nt := r.countOf(10)
	entry := make([]int32, nt+1) // where each entry of the table begins
	var scratch usage.Session
	var origin usage.Origin
	for i := range nt {
		entry[i] = int32(len(body) - len(r.b))
		scratch = usage.Session{}
		if r.session(&scratch, &origin); r.bad {
			return Counted{}, errNotCounted
		}
		for _, j := range byPath[scratch.Path] {
			if rs[j].Session.Harness != scratch.Harness {
				continue
			}
			if at[j] >= 0 {
				return Counted{}, fmt.Errorf("two sessions of %s", scratch.Path)
			}
			at[j] = i
			s := scratch
			for _, x := range []*string{&s.Harness, &s.Path, &s.ID, &s.Parent, &s.Project, &s.Title} {
				*x = strings.Clone(*x)
			}
			if s.ImportOf != nil {
				o := usage.Origin{Harness: strings.Clone(origin.Harness), ID: strings.Clone(origin.ID)}
				s.ImportOf = &o
			}
			was[j] = &s
		}
	}
	entry[nt] = int32(len(body) - len(r.b))
	// The recounts' checks (ReplaceCounted's), the head's numbers, and
	// the new sessions, those of groups given the table's next places.
	recountAt := map[int]int{} // a table place recounted: its recount
	skipped, sessionsN := old.Skipped, old.Sessions
	var added []int // the recounts of no groups in the file, in rs's order
	addedAt := make([]int, len(rs))
	for j := range rs {
		rc := &rs[j]
		switch {
		case at[j] >= 0 && rc.New:
			return Counted{}, fmt.Errorf("%s counted already", rc.Session.Path)
		case at[j] < 0 && !rc.Ungrouped:
			return Counted{}, fmt.Errorf("no groups of %s", rc.Session.Path)
		case at[j] < 0:
			if slices.ContainsFunc(added, func(a int) bool {
				return rs[a].Session.Harness == rc.Session.Harness && rs[a].Session.Path == rc.Session.Path
			}) {
				return Counted{}, fmt.Errorf("%s recounted twice", rc.Session.Path)
			}
			added = append(added, j)
			skipped += rc.Session.Skipped - rc.WasSkipped
			if rc.New {
				sessionsN++
			}
			continue
		}
		if _, ok := recountAt[at[j]]; ok {
			return Counted{}, fmt.Errorf("%s recounted twice", rc.Session.Path)
		}
		recountAt[at[j]] = j
		skipped += rc.Session.Skipped - was[j].Skipped
		if len(rc.Digest) == 0 || rc.Session.ID != was[j].ID {
			return Counted{}, errNotSpliced // it would leave the table, or its pages
		}
	}
	nextPlace := nt
	for _, j := range added {
		addedAt[j] = -1
		if len(rs[j].Digest) > 0 {
			addedAt[j] = nextPlace
			nextPlace++
		}
	}
	// The groups, walked once: each recount's span (its groups
	// together), its groups before, the rollups' places among the
	// status's sessions, and the recent groups in the new order.
	ng := r.countOf(2 + bucketMinBytes)
	groupsFrom := len(body) - len(r.b) // the first group
	span := make([][2]int, len(rs))
	statusK := make([]int32, nt)
	for i := range statusK {
		statusK[i] = -1
	}
	nk := int32(0)
	var recent []splicedGroup
	var g usage.Bucket
	prev := -1
	for range ng {
		from := len(body) - len(r.b)
		place, rollup := r.uvarint(), r.uvarint()
		m := r.bucket(&g)
		if r.bad || place >= uint64(nt) || rollup >= uint64(nt) || m >= uint64(len(models)) {
			return Counted{}, errNotCounted
		}
		g.Model = models[m]
		if statusK[rollup] < 0 {
			statusK[rollup] = nk
			nk++
		}
		j, recounted := recountAt[int(place)]
		if !recounted {
			if _, ok := recountAt[int(rollup)]; ok {
				return Counted{}, errors.New("a session recounted is another's rollup")
			}
			if g.Last >= since {
				recent = append(recent, splicedGroup{s: spliceRef(place), r: spliceRef(rollup), b: g})
			}
			prev = int(place)
			continue
		}
		if rollup != place {
			return Counted{}, errors.New("a session recounted rolls up to another")
		}
		b := g
		rs[j].Was = append(rs[j].Was, usage.Group{Session: was[j], Rollup: was[j], Bucket: &b})
		to := len(body) - len(r.b)
		if span[j] != [2]int{} {
			if prev != int(place) {
				return Counted{}, errors.New("the groups of a session recounted are not together")
			}
			span[j][1] = to
			continue
		}
		span[j] = [2]int{from, to}
		for _, d := range rs[j].Digest {
			if d.Last >= since {
				recent = append(recent, splicedGroup{s: spliceRef(-1 - j), r: spliceRef(-1 - j), b: d})
			}
		}
		prev = int(place)
	}
	if len(r.b) != 0 {
		return Counted{}, errNotCounted
	}
	for j := range rs {
		if at[j] >= 0 && span[j] == [2]int{} {
			return Counted{}, errNotCounted // in the table, of no group
		}
	}
	for _, j := range added {
		for _, d := range rs[j].Digest {
			if d.Last >= since {
				recent = append(recent, splicedGroup{s: spliceRef(-1 - j), r: spliceRef(-1 - j), b: d})
			}
		}
	}
	// The old status: its sessions' count, the latest call's sum, and
	// its pages.
	statusBytes, err := readPart(f, p.status.off, p.status.n, p.status.crc)
	if err != nil {
		return Counted{}, err
	}
	sr := &usageReader{b: unsafeString(statusBytes)}
	sr.num()
	oldN := sr.uvarint()
	var latest countedSum
	if oldN > 0 {
		latest = sr.sum()
	}
	pageLen := make([]int64, sr.countOf(1+4))
	pageCRC := make([]uint32, len(pageLen))
	pageOff := make([]int64, len(pageLen)+1)
	for i := range pageLen {
		pageLen[i], pageCRC[i] = int64(sr.uvarint()), sr.fixed32()
		pageOff[i+1] = pageOff[i] + pageLen[i]
	}
	if sr.bad || oldN != uint64(nk) || pageOff[len(pageLen)] != p.sums.n || oldN > 0 && latest.k >= oldN {
		return Counted{}, errNotCounted
	}
	newN := int(nk) + nextPlace - nt
	if pagesFor(newN) != len(pageLen) {
		return Counted{}, errNotSpliced // every session in other pages
	}
	// The models: the old ones' numbers kept, the recounts' new ones
	// after.
	number := make(map[usage.ModelRef]uint64, len(models))
	for i, m := range models {
		number[m] = uint64(i)
	}
	newModels := slices.Clone(models)
	modelAt := func(m usage.ModelRef) uint64 {
		n, ok := number[m]
		if !ok {
			n = uint64(len(newModels))
			number[m] = n
			newModels = append(newModels, m)
		}
		return n
	}
	// Each recount's sum, as a status would make it, in its place.
	type sum struct {
		k      uint64
		ph, ih uint64
		b      usage.Bucket
	}
	sums := map[uint64]sum{}
	var placed []uint64 // the places of sums, in rs's order
	for j := range rs {
		var kk uint64
		switch {
		case at[j] >= 0:
			kk = uint64(statusK[at[j]])
		case addedAt[j] >= 0:
			kk = uint64(int(nk) + addedAt[j] - nt)
		default:
			continue // no groups, no sum
		}
		s := rs[j].Session
		gs := make([]usage.Group, len(rs[j].Digest))
		for i := range gs {
			gs[i] = usage.Group{Session: s, Rollup: s, Bucket: &rs[j].Digest[i]}
		}
		st := usage.NewStatus(gs, math.Inf(1))
		sums[kk] = sum{k: kk, ph: hashName(s.Path), ih: hashName(s.ID), b: *st.Sessions[0].Bucket}
		placed = append(placed, kk)
	}
	var rec []byte
	appendSum := func(b []byte, s sum) []byte {
		rec = appendBucket(rec[:0], &s.b, modelAt(s.b.Model))
		return appendCountedSum(b, s.k, s.ph, s.ih, s.b.Last, rec)
	}
	// The latest call's sum: the old one, or a recount's.
	var latestRec []byte
	if newN > 0 {
		best, bestLast := latest.k, latest.last
		if oldN == 0 {
			best, bestLast = math.MaxUint64, math.Inf(-1)
		}
		if s, ok := sums[latest.k]; ok && oldN > 0 {
			if s.b.Last < latest.last {
				return Counted{}, errNotSpliced // another session may be the latest now
			}
			bestLast = s.b.Last
		}
		for _, kk := range placed {
			if s := sums[kk]; s.b.Last > bestLast || s.b.Last == bestLast && kk < best {
				best, bestLast = kk, s.b.Last
			}
		}
		if s, ok := sums[best]; ok {
			latestRec = appendSum(nil, s)
		} else {
			latestRec = appendCountedSum(nil, latest.k, latest.ph, latest.ih, latest.last, []byte(latest.rec))
		}
	}
	// The pages of the recounts' names, their sums in place, the new
	// sessions' after.
	pages := len(pageLen)
	pagesOf := func(s sum) []int {
		var out []int
		if s.ph != 0 {
			out = append(out, pageOf(s.ph, pages))
		}
		if s.ih != 0 && (s.ph == 0 || pageOf(s.ih, pages) != pageOf(s.ph, pages)) {
			out = append(out, pageOf(s.ih, pages))
		}
		return out
	}
	inPage := map[int][]uint64{} // the sums of recounts in each page
	for _, kk := range placed {
		for _, pg := range pagesOf(sums[kk]) {
			inPage[pg] = append(inPage[pg], kk)
		}
	}
	newPage := map[int][]byte{}
	for pg, ks := range inPage {
		b, err := readPart(f, p.sums.off+pageOff[pg], pageLen[pg], pageCRC[pg])
		if err != nil {
			return Counted{}, err
		}
		pr := &usageReader{b: unsafeString(b)}
		var out []byte
		done := map[uint64]bool{}
		for len(pr.b) > 0 {
			from := len(b) - len(pr.b)
			s := pr.sum()
			if pr.bad || s.k >= oldN {
				return Counted{}, errNotCounted
			}
			if slices.Contains(ks, s.k) {
				out = appendSum(out, sums[s.k])
				done[s.k] = true
				continue
			}
			out = append(out, b[from:len(b)-len(pr.b)]...)
		}
		slices.Sort(ks)
		for _, kk := range ks {
			if !done[kk] {
				if kk < oldN {
					return Counted{}, errNotCounted // a session's sum not in its page
				}
				out = appendSum(out, sums[kk])
			}
		}
		newPage[pg] = out
		pageLen[pg], pageCRC[pg] = int64(len(out)), crc32.ChecksumIEEE(out)
	}
	// The groups part: pieces of the old one's bytes, and the recounts'.
	var pieces [][]byte
	piece := func(b []byte) { pieces = append(pieces, b) }
	piece(binary.AppendUvarint(nil, uint64(nextPlace)))
	run := int32(-1) // where the run of old entries copied began
	for i := range nt {
		j, recounted := recountAt[i]
		if !recounted {
			if run < 0 {
				run = entry[i]
			}
			continue
		}
		if run >= 0 {
			piece(body[run:entry[i]])
			run = -1
		}
		s := *rs[j].Session
		s.Calls = nil
		piece(appendCountedSession(nil, &s))
	}
	if run >= 0 {
		piece(body[run:entry[nt]])
	}
	groupsN := ng
	for j := range rs {
		if at[j] >= 0 {
			groupsN += len(rs[j].Digest) - len(rs[j].Was)
		} else if addedAt[j] >= 0 {
			groupsN += len(rs[j].Digest)
		}
	}
	var tail []byte // the new sessions' entries, then the groups' count
	for _, j := range added {
		if addedAt[j] >= 0 {
			s := *rs[j].Session
			s.Calls = nil
			tail = appendCountedSession(tail, &s)
		}
	}
	piece(binary.AppendUvarint(tail, uint64(groupsN)))
	digestGroups := func(b []byte, place int, d []usage.Bucket) []byte {
		for i := range d {
			b = binary.AppendUvarint(b, uint64(place))
			b = binary.AppendUvarint(b, uint64(place))
			b = appendBucket(b, &d[i], modelAt(d[i].Model))
		}
		return b
	}
	order := slices.Collect(func(yield func(int) bool) {
		for j := range rs {
			if at[j] >= 0 && !yield(j) {
				return
			}
		}
	})
	slices.SortFunc(order, func(a, b int) int { return span[a][0] - span[b][0] })
	from := groupsFrom
	for _, j := range order {
		piece(body[from:span[j][0]])
		piece(digestGroups(nil, at[j], rs[j].Digest))
		from = span[j][1]
	}
	piece(body[from:])
	var last []byte
	for _, j := range added {
		if addedAt[j] >= 0 {
			last = digestGroups(last, addedAt[j], rs[j].Digest)
		}
	}
	piece(last)
	// The status: the recent groups, as writeCounted's grouped writes
	// them (a table of their sessions, the groups).
	status := appendNum(nil, since)
	status = binary.AppendUvarint(status, uint64(newN))
	status = append(status, latestRec...)
	status = binary.AppendUvarint(status, uint64(pages))
	for i := range pageLen {
		status = binary.AppendUvarint(status, uint64(pageLen[i]))
		status = binary.LittleEndian.AppendUint32(status, pageCRC[i])
	}
	sessionAt := map[spliceRef]uint64{}
	var refs []spliceRef
	lastRef := spliceRef(math.MinInt)
	add := func(s spliceRef) {
		if s == lastRef {
			return
		}
		if _, ok := sessionAt[s]; !ok {
			sessionAt[s] = uint64(len(refs))
			refs = append(refs, s)
		}
	}
	for _, g := range recent {
		add(g.s)
		add(g.r)
		lastRef = g.s
	}
	status = binary.AppendUvarint(status, uint64(len(refs)))
	for _, s := range refs {
		if s >= 0 {
			status = append(status, body[entry[s]:entry[s+1]]...)
			continue
		}
		ns := *rs[-1-s].Session
		ns.Calls = nil
		status = appendCountedSession(status, &ns)
	}
	status = binary.AppendUvarint(status, uint64(len(recent)))
	for i := range recent {
		g := &recent[i]
		status = binary.AppendUvarint(status, sessionAt[g.s])
		status = binary.AppendUvarint(status, sessionAt[g.r])
		status = appendBucket(status, &g.b, modelAt(g.b.Model))
	}
	// The head last: the models the parts above named.
	head := Counted{Files: k.Files, Racy: k.Racy, Server: k.Server, Sessions: sessionsN, Skipped: skipped}
	hb := appendCountedHead(nil, head, newModels)
	err = atomicfile.ReplaceCache(path, func(w io.Writer) error {
		if _, err := w.Write(hb); err != nil {
			return err
		}
		sumsAt := int64(len(hb))
		for pg := 0; pg < pages; {
			if b, ok := newPage[pg]; ok {
				if _, err := w.Write(b); err != nil {
					return err
				}
				pg++
				continue
			}
			end := pg
			for end < pages && newPage[end] == nil {
				end++
			}
			n := pageOff[end] - pageOff[pg]
			if _, err := io.Copy(w, io.NewSectionReader(f, p.sums.off+pageOff[pg], n)); err != nil {
				return err
			}
			pg = end
		}
		var sumsN int64
		for _, n := range pageLen {
			sumsN += n
		}
		statusAt := sumsAt + sumsN
		if _, err := w.Write(status); err != nil {
			return err
		}
		groupsAt := statusAt + int64(len(status))
		crc := uint32(0)
		for _, b := range pieces {
			crc = crc32.Update(crc, crc32.IEEETable, b)
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		_, err := w.Write(countedTrailerOf(countedParts{
			head:   countedPart{crc: crc32.ChecksumIEEE(hb)},
			sums:   countedPart{off: sumsAt},
			status: countedPart{off: statusAt, crc: crc32.ChecksumIEEE(status)},
			groups: countedPart{off: groupsAt, crc: crc},
		}))
		return err
	})
	if err != nil {
		return Counted{}, err
	}
	splices.Add(1)
	return head, nil
}

// readPart reads n bytes at off of r, checked against crc.
func readPart(r io.ReaderAt, off, n int64, crc uint32) ([]byte, error) {
	b := make([]byte, n)
	if _, err := r.ReadAt(b, off); err != nil {
		return nil, err
	}
	if crc32.ChecksumIEEE(b) != crc {
		return nil, errNotCounted
	}
	return b, nil
}
