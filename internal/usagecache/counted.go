package usagecache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"iter"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/usage"
)

// Counted is what a complete ledger of a set of places counted: its
// groups (usage.Ledger.Groups), every call once along the session tree,
// and the files it read, by their stamps. It is kept beside the cache of
// those places (CountedPath), so that a report of a ledger nothing
// changed in since reads the groups, one file, with no ledger built: no
// session's digest decoded, no lineage walked, no call compared.
//
// A ledger's groups are the same whatever the order its sessions were
// read in, so the files are known by the sum of their stamps (Files), and
// a walk that finds every file as the sum says (and none too new to
// trust, Stamp.Fresh) may take the groups as they are. A running xdev
// serve, which watches the places, writes it with every ledger it
// builds, before it vouches for the cache (internal/live): a process it
// vouches to takes the groups with no walk at all.
type Counted struct {
	Groups []usage.Group
	// Files are the files the ledger read.
	Files StampSum
	// Sessions and Skipped are the ledger's UsageStats: the sessions in
	// it, and what could not be read of them.
	Sessions, Skipped int
	// Racy is how many of the files were written too recently to be
	// known by their stamps (Stamp.Fresh) when the ledger read them: the
	// groups are only to be taken on a server's word, never by a walk.
	Racy int
	// Server is the pid of the xdev serve that wrote the file, 0 for
	// another process: a reader a server vouched to (live.Vouching) takes
	// the groups only from the file that server wrote.
	Server int
	// Status is the groups' status (ReadCountedStatus), read instead of
	// them.
	Status usage.Status
}

// A StampSum is the sum of a set of files' keys and stamps, in any
// order: two sets with the same sum are the same set, but by a chance of
// 2⁻¹²⁸.
type StampSum struct {
	N      int
	Lo, Hi uint64
}

// Add adds a file's key and stamp to the sum.
func (s *StampSum) Add(key string, st Stamp) {
	h := fnv.New128a()
	h.Write([]byte(key))
	var b [24]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(st.Size))
	binary.LittleEndian.PutUint64(b[8:], uint64(st.ModTime))
	binary.LittleEndian.PutUint64(b[16:], st.Ino)
	h.Write(b[:])
	var sum [16]byte
	h.Sum(sum[:0])
	s.N++
	s.Lo += binary.LittleEndian.Uint64(sum[:8])
	s.Hi += binary.LittleEndian.Uint64(sum[8:])
}

// Remove takes a file's key and stamp out of the sum, where Add put them
// in.
func (s *StampSum) Remove(key string, st Stamp) {
	var one StampSum
	one.Add(key, st)
	s.N -= one.N
	s.Lo -= one.Lo
	s.Hi -= one.Hi
}

// Merge adds the files of o to the sum.
func (s *StampSum) Merge(o StampSum) {
	s.N += o.N
	s.Lo += o.Lo
	s.Hi += o.Hi
}

// CountedPath is where the groups of the ledgers whose cache is the file
// at cache are kept.
func CountedPath(cache string) string { return cache + ".counted" }

// RecentSpan is how far back from its writing a counted file's status
// keeps the groups (usage.Status.Recent): a day, which holds today's
// calls and the last blocks' wherever the reader's day begins.
const RecentSpan = 24 * time.Hour

const countedMagic = "xdev usage counted 3\n"

// countedNow is the clock a counted file's status is written by (a test
// stops it, to compare two files byte for byte).
var countedNow = time.Now

// maxCounted bounds the file read: past it, it is not read (and a
// ledger is built). A file is about 400 bytes a session (10 MB at
// 25,000): this is six times the largest archive reported.
const maxCounted = 64 << 20

// countedTrailer is the size of the trailer: where the sums, the status
// and the groups begin (8 bytes each), and the CRC-32 of the head, the
// status and the groups (4 each).
const countedTrailer = 3*8 + 3*4

// The bytes of a counted file: its magic, four parts, and a trailer.
// The parts are in varints but where said, and each is checksummed, so
// that a status line reads the head, the status and a page or two of
// the sums, and a report the head and the groups:
//
//   - the head: Racy, Server, Sessions, Skipped; the files' sum (N, then
//     Lo and Hi in 8 bytes each); the models (a count, then three
//     strings each: provider, model, API);
//   - the sums (usage.Status.Sessions), in pages by the hashes of the
//     sessions' names (hashName of the path, then of the id; pageOf): a
//     session is in the page of each of its names, so that a reader
//     looking for one reads the pages of the names it is given and
//     decodes nothing else. A sum is its place among the status's
//     sessions, the hashes of its path and id and its last call's time
//     (8 bytes each), and its bucket as a string. Each page is
//     checksummed on its own (the status says how);
//   - the status: Since; the count of sums, and the latest call's
//     (usage.Status.Latest) as a sum is written; the pages (a count, then
//     each one's length and CRC-32, 4 bytes); a table of sessions, and
//     the recent groups (a count, then each one's session and rollup, as
//     their places in the table, and its bucket);
//   - the groups: a table of sessions, and the groups, as the recent
//     ones.
//
// A table of sessions is a count, then each one's harness, path, id,
// parent, project, title, import origin's harness and id, flags (1: a
// subagent's; 2: an import) and Skipped. A bucket is as the usage cache
// writes a digest's, its model a place in the head's models. A string
// is its length, then its bytes. The trailer is where the sums, the
// status and the groups begin (8 bytes each, little-endian), and the
// CRC-32 of the head (magic included), the status and the groups (4
// bytes each).

// pagesFor is how many pages the sums of n sessions are in: about √n·4,
// so that the status's list of them and a page (of about √n/2 sessions,
// each in one page or two) are a few KB each at any n.
func pagesFor(n int) int { return max(1, int(math.Sqrt(float64(n))*4)) }

// pageOf is the page of pages that a name of hash h is in.
func pageOf(h uint64, pages int) int { return int((h >> 1) % uint64(pages)) }

// WriteCounted writes c to the file at path, atomically: a reader finds
// the old file or the new one whole. Its status is made from its groups
// (those since RecentSpan ago recent).
func WriteCounted(path string, c Counted) error {
	return writeCounted(path, c, groupsOf(c.Groups), func() error { return nil })
}

// groupsOf hands out the groups of a slice.
func groupsOf(groups []usage.Group) iter.Seq[*usage.Group] {
	return func(yield func(*usage.Group) bool) {
		for k := range groups {
			if !yield(&groups[k]) {
				return
			}
		}
	}
}

// writeCounted is WriteCounted of the groups that groups hands out (not
// c.Groups): it asks for them four times, and is handed the same groups
// in the same order each time, their sessions the same *usage.Session;
// a group and its Bucket need last only until the next is asked for, so
// that the groups of a counted file read again need never be held
// (ReplaceCounted). failed says, before the file is whole, whether
// handing them out failed: then nothing is written.
func writeCounted(path string, c Counted, groups iter.Seq[*usage.Group], failed func() error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	status := usage.StatusOf(groups, float64(countedNow().Add(-RecentSpan).UnixMilli()))
	if err := failed(); err != nil {
		return err
	}
	// The models, numbered as the groups name them: a ModelRef is a small
	// number (usage's table of models), so their numbers are a slice.
	var numbers []int32 // by ModelRef, -1 for none yet
	var models []usage.ModelRef
	for _, gs := range []iter.Seq[*usage.Group]{groups, groupsOf(status.Sessions)} {
		for g := range gs {
			for int(g.Model) >= len(numbers) {
				numbers = append(numbers, -1)
			}
			if numbers[g.Model] < 0 {
				numbers[g.Model] = int32(len(models))
				models = append(models, g.Model)
			}
		}
	}
	modelAt := func(m usage.ModelRef) uint64 { return uint64(numbers[m]) }
	// Each session's names' hashes, its path's and its id's.
	names := make([][2]uint64, len(status.Sessions))
	for k, g := range status.Sessions {
		names[k] = [2]uint64{hashName(g.Rollup.Path), hashName(g.Rollup.ID)}
	}
	// appendSum encodes the k'th session's sum.
	var rec []byte
	appendSum := func(b []byte, k int) []byte {
		g := status.Sessions[k]
		rec = appendBucket(rec[:0], g.Bucket, modelAt(g.Model))
		return appendCountedSum(b, uint64(k), names[k][0], names[k][1], g.Last, rec)
	}
	// The sessions in each page, in their order: each in the page of each
	// of its names (pageSessions[pageStart[p]:pageStart[p+1]]).
	pages := pagesFor(len(status.Sessions))
	pagesOf := func(k int) (a, b int) {
		a, b = -1, -1
		if h := names[k][0]; h != 0 {
			a = pageOf(h, pages)
		}
		if h := names[k][1]; h != 0 && pageOf(h, pages) != a {
			b = pageOf(h, pages)
		}
		return a, b
	}
	// A counting sort: pageStart[p+2] counts page p's, then sums them,
	// then is where page p's next goes, which leaves page p from
	// pageStart[p] to pageStart[p+1].
	pageStart := make([]int, pages+2)
	for k := range status.Sessions {
		a, b := pagesOf(k)
		for _, p := range [2]int{a, b} {
			if p >= 0 {
				pageStart[p+2]++
			}
		}
	}
	for p := 2; p < len(pageStart); p++ {
		pageStart[p] += pageStart[p-1]
	}
	pageSessions := make([]int32, pageStart[pages+1])
	for k := range status.Sessions {
		a, b := pagesOf(k)
		for _, p := range [2]int{a, b} {
			if p >= 0 {
				pageSessions[pageStart[p+1]] = int32(k)
				pageStart[p+1]++
			}
		}
	}
	return atomicfile.ReplaceCache(path, func(w io.Writer) error {
		var at int64
		var crc uint32 // of the part being written
		var b []byte
		flush := func() error {
			crc = crc32.Update(crc, crc32.IEEETable, b)
			n, err := w.Write(b)
			at += int64(n)
			b = b[:0]
			return err
		}
		// end ends a part: its CRC-32, and where the next begins.
		end := func() (uint32, int64, error) {
			err := flush()
			sum := crc
			crc = 0
			return sum, at, err
		}
		// grouped writes a table of the groups' sessions, and the groups.
		grouped := func(gs iter.Seq[*usage.Group]) error {
			sessionAt := map[*usage.Session]uint64{}
			var sessions []*usage.Session
			var last *usage.Session // a session's groups come together
			add := func(s *usage.Session) {
				if s == last {
					return
				}
				if _, ok := sessionAt[s]; !ok {
					sessionAt[s] = uint64(len(sessions))
					sessions = append(sessions, s)
				}
			}
			n := 0
			for g := range gs {
				add(g.Session)
				add(g.Rollup)
				last = g.Session
				n++
			}
			b = binary.AppendUvarint(b, uint64(len(sessions)))
			for _, s := range sessions {
				b = appendCountedSession(b, s)
				if len(b) >= 64<<10 {
					if err := flush(); err != nil {
						return err
					}
				}
			}
			b = binary.AppendUvarint(b, uint64(n))
			last = nil
			var place uint64 // last's
			for g := range gs {
				if g.Session != last {
					last, place = g.Session, sessionAt[g.Session]
				}
				rollup := place
				if g.Rollup != g.Session {
					rollup = sessionAt[g.Rollup]
				}
				b = binary.AppendUvarint(b, place)
				b = binary.AppendUvarint(b, rollup)
				b = appendBucket(b, g.Bucket, modelAt(g.Model))
				if len(b) >= 64<<10 {
					if err := flush(); err != nil {
						return err
					}
				}
			}
			return nil
		}
		b = appendCountedHead(b, c, models)
		headCRC, sumsAt, err := end()
		if err != nil {
			return err
		}
		// The sums, page by page: each page's length and CRC-32 for the
		// status.
		type page struct {
			n   int64
			crc uint32
		}
		dir := make([]page, pages)
		for p := range dir {
			from := at
			for _, k := range pageSessions[pageStart[p]:pageStart[p+1]] {
				b = appendSum(b, int(k))
			}
			crc, to, err := end()
			if err != nil {
				return err
			}
			dir[p] = page{to - from, crc}
		}
		// A page no name falls in is empty, its CRC-32 that of no bytes, 0.
		statusAt := at
		b = appendNum(b, status.Since)
		b = binary.AppendUvarint(b, uint64(len(status.Sessions)))
		latest := status.Latest()
		for k := range status.Sessions {
			if &status.Sessions[k] == latest {
				b = appendSum(b, k)
			}
		}
		b = binary.AppendUvarint(b, uint64(len(dir)))
		for _, p := range dir {
			b = binary.AppendUvarint(b, uint64(p.n))
			b = binary.LittleEndian.AppendUint32(b, p.crc)
		}
		if err := grouped(groupsOf(status.Recent)); err != nil {
			return err
		}
		statusCRC, groupsAt, err := end()
		if err != nil {
			return err
		}
		if err := grouped(groups); err != nil {
			return err
		}
		groupsCRC, _, err := end()
		if err != nil {
			return err
		}
		if err := failed(); err != nil {
			return err
		}
		_, err = w.Write(countedTrailerOf(countedParts{
			head:   countedPart{crc: headCRC},
			sums:   countedPart{off: sumsAt},
			status: countedPart{off: statusAt, crc: statusCRC},
			groups: countedPart{off: groupsAt, crc: groupsCRC},
		}))
		return err
	})
}

// appendCountedHead encodes a counted file's head, its magic first: c's
// numbers and the models its buckets name by their places.
func appendCountedHead(b []byte, c Counted, models []usage.ModelRef) []byte {
	b = append(b, countedMagic...)
	for _, n := range []int{c.Racy, c.Server, c.Sessions, c.Skipped, c.Files.N} {
		b = binary.AppendUvarint(b, uint64(n))
	}
	b = binary.LittleEndian.AppendUint64(b, c.Files.Lo)
	b = binary.LittleEndian.AppendUint64(b, c.Files.Hi)
	b = binary.AppendUvarint(b, uint64(len(models)))
	for _, m := range models {
		n := m.Name()
		b = appendString(appendString(appendString(b, n.Provider), n.Model), n.API)
	}
	return b
}

// appendCountedSum encodes a session's sum of the status's pages: its
// place among the status's sessions, its path's and id's hashes, its
// last call's time, and its bucket's bytes (rec) as a string.
func appendCountedSum(b []byte, k, ph, ih uint64, last float64, rec []byte) []byte {
	b = binary.AppendUvarint(b, k)
	b = binary.LittleEndian.AppendUint64(b, ph)
	b = binary.LittleEndian.AppendUint64(b, ih)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(last))
	b = binary.AppendUvarint(b, uint64(len(rec)))
	return append(b, rec...)
}

// appendCountedSession encodes a session of a table.
func appendCountedSession(b []byte, s *usage.Session) []byte {
	var origin usage.Origin
	flags := uint64(0)
	if s.Subagent {
		flags |= 1
	}
	if s.ImportOf != nil {
		flags |= 2
		origin = *s.ImportOf
	}
	for _, x := range []string{s.Harness, s.Path, s.ID, s.Parent, s.Project, s.Title, origin.Harness, origin.ID} {
		b = appendString(b, x)
	}
	b = binary.AppendUvarint(b, flags)
	return binary.AppendUvarint(b, uint64(s.Skipped))
}

// ErrNoCounted is ReadCounted's error when there is no file.
var ErrNoCounted = errors.New("no counted usage")

// ReadCounted reads the groups WriteCounted wrote at path (and its head;
// not its status). A file that is not one whole (torn, damaged, of
// another version, or larger than any it writes) is an error naming it;
// none is ErrNoCounted. The groups' sessions' strings are substrings of
// the file's bytes, read once.
func ReadCounted(path string) (Counted, error) { return readCounted(path, countedRead{}) }

// ReadCountedHead reads the head of the counted file at path alone: its
// numbers and Files, with no groups and no status (a few hundred bytes,
// where the groups are about 400 a session).
func ReadCountedHead(path string) (Counted, error) {
	c, err := readCounted(path, countedRead{accept: func(Counted) bool { return false }})
	if errors.Is(err, ErrNotTaken) {
		return c, nil
	}
	return c, err
}

// A StatusQuery names the sessions a status is read for: by their
// files' paths (as a walk names them: absolute, clean) or id.
type StatusQuery struct {
	Paths []string
	ID    string
}

// ReadCountedStatus reads the status WriteCounted wrote at path (and its
// head; not its groups), as ReadCounted reads them: its recent groups,
// and of its sessions' sums those q names and that of the latest call.
func ReadCountedStatus(path string, q StatusQuery) (Counted, error) {
	return readCounted(path, countedRead{q: &q})
}

// hashName is the hash a counted file's status knows a session's path or
// id by.
func hashName(s string) uint64 {
	if s == "" {
		return 0
	}
	// FNV-1a, 64 bits, by hand: hash/fnv's would take a copy of s.
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h | 1
}

// errNotCounted is what a file that is not one whole counted file of
// this version is, read.
var errNotCounted = errors.New("not a whole counted usage file of this version")

// readCounted reads the head of the counted file at path and what how
// asks for (readCountedAt).
func readCounted(path string, how countedRead) (Counted, error) {
	f, fi, err := regularfile.OpenRaw(path)
	if errors.Is(err, os.ErrNotExist) {
		return Counted{}, ErrNoCounted
	}
	if err != nil {
		return Counted{}, err
	}
	defer f.Close()
	c, err := readCountedAt(f, fi.Size(), how)
	if err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// decodeCountedFile reads a whole counted file's bytes as readCountedAt
// does; ok is false where it is not one.
func decodeCountedFile(b []byte, q *StatusQuery) (Counted, bool) {
	c, err := readCountedAt(bytes.NewReader(b), int64(len(b)), countedRead{q: q})
	return c, err == nil
}

// countedRead says what readCountedAt reads of a counted file: its
// groups; with q, its status; with each, its groups one at a time, once
// accept (where set) took its head.
type countedRead struct {
	q      *StatusQuery
	accept func(Counted) bool
	each   func(*usage.Group)
}

// readCountedAt reads a counted file of size bytes from r: its head and
// what how asks for. It reads the trailer, then the parts it needs, each
// checked against its CRC-32 before it is decoded; for a status, the
// pages of the sums that hold q's names. The sessions' strings are
// substrings of what it read, once.
func readCountedAt(r io.ReaderAt, size int64, how countedRead) (Counted, error) {
	if size > maxCounted || size < int64(len(countedMagic))+countedTrailer {
		return Counted{}, errNotCounted
	}
	read := func(off, n int64, crc uint32) ([]byte, error) {
		b := make([]byte, n)
		if _, err := r.ReadAt(b, off); err != nil {
			return nil, err
		}
		if crc32.ChecksumIEEE(b) != crc {
			return nil, errNotCounted
		}
		return b, nil
	}
	var t [countedTrailer]byte
	if _, err := r.ReadAt(t[:], size-countedTrailer); err != nil {
		return Counted{}, err
	}
	p, ok := partsOf(t[:], size)
	if !ok {
		return Counted{}, errNotCounted
	}
	head, err := read(p.head.off, p.head.n, p.head.crc)
	if err != nil {
		return Counted{}, err
	}
	c, models, ok := decodeCountedHead(head)
	if !ok {
		return Counted{}, errNotCounted
	}
	if how.accept != nil && !how.accept(c) {
		return c, ErrNotTaken
	}
	q := how.q
	if q == nil {
		body, err := read(p.groups.off, p.groups.n, p.groups.crc)
		if err != nil {
			return Counted{}, err
		}
		r := &usageReader{b: unsafeString(body)}
		if how.each != nil {
			r.eachGroup(models, how.each)
		} else {
			c.Groups = r.grouped(models)
		}
		if r.bad || len(r.b) != 0 {
			return Counted{}, errNotCounted
		}
		return c, nil
	}
	body, err := read(p.status.off, p.status.n, p.status.crc)
	if err != nil {
		return Counted{}, err
	}
	page := func(off, n int64, crc uint32) ([]byte, error) { return read(p.sums.off+off, n, crc) }
	if c.Status, err = readStatus(body, p.sums.n, models, q, page); err != nil {
		return Counted{}, err
	}
	return c, nil
}

// countedParts are where a counted file's parts are, and their
// checksums (the sums' are the status's to give, page by page).
type countedParts struct {
	head, sums, status, groups countedPart
}

// A countedPart is where a part of a counted file is, and its checksum.
type countedPart struct {
	off, n int64
	crc    uint32
}

// countedTrailerOf is the trailer of a file of parts p: where the sums,
// the status and the groups begin, and the head's, the status's and the
// groups' CRC-32 (partsOf reads it).
func countedTrailerOf(p countedParts) []byte {
	t := make([]byte, 0, countedTrailer)
	for _, off := range []int64{p.sums.off, p.status.off, p.groups.off} {
		t = binary.LittleEndian.AppendUint64(t, uint64(off))
	}
	for _, crc := range []uint32{p.head.crc, p.status.crc, p.groups.crc} {
		t = binary.LittleEndian.AppendUint32(t, crc)
	}
	return t
}

// partsOf are the parts of a counted file of size bytes that ends in
// trailer t; ok is false where they do not fit in it.
func partsOf(t []byte, size int64) (p countedParts, ok bool) {
	sums, status, groups := int64(binary.LittleEndian.Uint64(t[0:])), int64(binary.LittleEndian.Uint64(t[8:])), int64(binary.LittleEndian.Uint64(t[16:]))
	end := size - countedTrailer
	if sums < int64(len(countedMagic)) || sums > status || status > groups || groups > end {
		return p, false
	}
	return countedParts{
		head:   countedPart{0, sums, binary.LittleEndian.Uint32(t[24:])},
		sums:   countedPart{sums, status - sums, 0},
		status: countedPart{status, groups - status, binary.LittleEndian.Uint32(t[28:])},
		groups: countedPart{groups, end - groups, binary.LittleEndian.Uint32(t[32:])},
	}, true
}

// decodeCountedHead reads a counted file's head (its magic first): the
// head's numbers, and the models the buckets name by place.
func decodeCountedHead(b []byte) (Counted, []usage.ModelRef, bool) {
	if len(b) < len(countedMagic) || string(b[:len(countedMagic)]) != countedMagic {
		return Counted{}, nil, false
	}
	r := &usageReader{b: unsafeString(b[len(countedMagic):])}
	var c Counted
	for _, n := range []*int{&c.Racy, &c.Server, &c.Sessions, &c.Skipped, &c.Files.N} {
		*n = int(r.uvarint())
	}
	c.Files.Lo, c.Files.Hi = r.fixed64(), r.fixed64()
	models := make([]usage.ModelRef, r.countOf(3))
	for k := range models {
		models[k] = usage.RefModel(r.str(), r.str(), r.str())
	}
	if r.bad || len(r.b) != 0 {
		return Counted{}, nil, false
	}
	return c, models, true
}

// A countedSum is a session's sum as the status's pages hold it: its
// place among the status's sessions, its names' hashes, its last call's
// time, and its bucket, not yet decoded.
type countedSum struct {
	k      uint64
	ph, ih uint64
	last   float64
	rec    string
}

// sum reads a countedSum.
func (r *usageReader) sum() countedSum {
	return countedSum{k: r.uvarint(), ph: r.fixed64(), ih: r.fixed64(), last: math.Float64frombits(r.fixed64()), rec: r.str()}
}

// readStatus reads a counted file's status from its status part (body)
// and the pages of its sums (sumsBytes long, read by page) that hold
// the names q gives: the recent groups, and the sums of the sessions q
// names and of the latest call's, in the status's order (as
// usage.Status.Latest takes the first of those tied), decoding no other.
// One q names has the name q gives it (its Path or ID), the latest none.
func readStatus(body []byte, sumsBytes int64, models []usage.ModelRef, q *StatusQuery, page func(off, n int64, crc uint32) ([]byte, error)) (usage.Status, error) {
	r := &usageReader{b: unsafeString(body)}
	var st usage.Status
	st.Since = r.num()
	n := r.uvarint()
	var latest countedSum
	if n > 0 {
		latest = r.sum()
	}
	offs := make([]int64, r.countOf(1+4)+1)
	crcs := make([]uint32, len(offs)-1)
	for i := range crcs {
		// Each page within the sums: a length past them, or that wraps
		// the sum of those before it, is damage.
		if n := r.uvarint(); n <= uint64(sumsBytes-offs[i]) {
			offs[i+1] = offs[i] + int64(n)
		} else {
			r.fail()
			break
		}
		crcs[i] = r.fixed32()
	}
	st.Recent = r.grouped(models)
	if r.bad || len(r.b) != 0 || len(crcs) == 0 || offs[len(offs)-1] != sumsBytes || n > 0 && latest.k >= n {
		return usage.Status{}, errNotCounted
	}
	// The sums q names, by place, from the pages of its names.
	found := map[uint64]countedSum{}
	names := map[uint64]usage.Session{} // the names q gives them, by place
	id := hashName(q.ID)
	paths := map[uint64]string{}
	hashes := []uint64{id}
	for _, p := range q.Paths {
		h := hashName(p)
		paths[h] = p
		hashes = append(hashes, h)
	}
	read := map[int]bool{}
	for _, h := range hashes {
		i := pageOf(h, len(crcs))
		if h == 0 || read[i] {
			continue
		}
		read[i] = true
		b, err := page(offs[i], offs[i+1]-offs[i], crcs[i])
		if err != nil {
			return usage.Status{}, err
		}
		pr := &usageReader{b: unsafeString(b)}
		for len(pr.b) > 0 {
			s := pr.sum()
			if pr.bad || s.k >= n {
				return usage.Status{}, errNotCounted
			}
			path, byPath := paths[s.ph]
			byID := id != 0 && s.ih == id
			if !byPath && !byID {
				continue
			}
			name := usage.Session{Path: path}
			if byID {
				name.ID = q.ID
			}
			found[s.k], names[s.k] = s, name
		}
	}
	if n > 0 {
		if _, ok := found[latest.k]; !ok {
			found[latest.k] = latest
		}
	}
	places := slices.Sorted(maps.Keys(found))
	st.Sessions = make([]usage.Group, 0, len(places))
	for _, k := range places {
		rr := &usageReader{b: found[k].rec}
		s, b := new(usage.Session), &usage.Bucket{}
		*s = names[k]
		m := rr.bucket(b)
		if rr.bad || len(rr.b) != 0 || m >= uint64(len(models)) {
			return usage.Status{}, errNotCounted
		}
		b.Model = models[m]
		st.Sessions = append(st.Sessions, usage.Group{Session: s, Rollup: s, Bucket: b})
	}
	return st, nil
}

// session reads a session of a table into s, its import's origin into
// origin.
func (r *usageReader) session(s *usage.Session, origin *usage.Origin) {
	s.Harness, s.Path, s.ID, s.Parent, s.Project, s.Title = r.str(), r.str(), r.str(), r.str(), r.str(), r.str()
	*origin = usage.Origin{Harness: r.str(), ID: r.str()}
	flags := r.uvarint()
	s.Subagent = flags&1 != 0
	if flags&2 != 0 {
		s.ImportOf = origin
	}
	s.Skipped = int(r.uvarint())
}

// table reads a table of sessions.
func (r *usageReader) table() []usage.Session {
	// 10 bytes: the least a session takes, a length for each string and
	// its two numbers.
	sessions := make([]usage.Session, r.countOf(10))
	origins := make([]usage.Origin, len(sessions))
	for k := range sessions {
		r.session(&sessions[k], &origins[k])
	}
	return sessions
}

// group reads a group of the sessions of a table into g, its bucket
// into g.Bucket.
func (r *usageReader) group(sessions []usage.Session, models []usage.ModelRef, g *usage.Group) {
	session := func() *usage.Session {
		k := r.uvarint()
		if k >= uint64(len(sessions)) {
			r.fail()
			return nil
		}
		return &sessions[k]
	}
	g.Session, g.Rollup = session(), session()
	m := r.bucket(g.Bucket)
	if m >= uint64(len(models)) {
		r.fail()
		return
	}
	g.Model = models[m]
}

// grouped reads a table of sessions and the groups after it.
func (r *usageReader) grouped(models []usage.ModelRef) []usage.Group {
	sessions := r.table()
	buckets := make([]usage.Bucket, r.countOf(2+bucketMinBytes))
	groups := make([]usage.Group, len(buckets))
	for k := range groups {
		groups[k].Bucket = &buckets[k]
		if r.group(sessions, models, &groups[k]); r.bad {
			return nil
		}
	}
	return groups
}

// eachGroup reads a table of sessions and the groups after it as
// grouped does, handing each to each, in one Bucket.
func (r *usageReader) eachGroup(models []usage.ModelRef, each func(*usage.Group)) {
	sessions := r.table()
	n := r.countOf(2 + bucketMinBytes)
	g := usage.Group{Bucket: new(usage.Bucket)}
	for range n {
		if r.group(sessions, models, &g); r.bad {
			return
		}
		each(&g)
	}
}

// ErrNotTaken is EachCounted's error when its accept does not take the
// file's head.
var ErrNotTaken = errors.New("counted usage not taken")

// EachCounted reads the groups WriteCounted wrote at path one at a time,
// as ReadCounted reads them, and hands each to each, holding none: the
// group and its Bucket are each's only until it returns (the next is
// read into them; its sessions are kept). accept is handed the file's
// head (Counted with no groups) first: where it does not take it, no
// group is read, and the error is ErrNotTaken (errors.Is). The groups are checked
// against their CRC-32 before the first is handed, but damage the
// checksum missed may end the read with an error after some were: a
// caller then drops what it was handed.
func EachCounted(path string, accept func(Counted) bool, each func(*usage.Group)) (Counted, error) {
	return readCounted(path, countedRead{accept: accept, each: each})
}

// ClaimCounted rewrites the counted file at path as one the server of
// pid wrote (Counted.Server): its head written anew, its sums, status
// and groups copied as they are, never decoded (a server starting on
// another server's groups vouches for them with no second copy of them
// in memory). Atomic, as WriteCounted.
func ClaimCounted(path string, pid int) error {
	f, fi, err := regularfile.OpenRaw(path)
	if err != nil {
		return err
	}
	defer f.Close()
	size := fi.Size()
	bad := fmt.Errorf("%s: %w", path, errNotCounted)
	if size > maxCounted || size < int64(len(countedMagic))+countedTrailer {
		return bad
	}
	var t [countedTrailer]byte
	if _, err := f.ReadAt(t[:], size-countedTrailer); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	p, ok := partsOf(t[:], size)
	if !ok {
		return bad
	}
	head := make([]byte, p.head.n)
	if _, err := f.ReadAt(head, 0); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if crc32.ChecksumIEEE(head) != p.head.crc || string(head[:min(len(head), len(countedMagic))]) != countedMagic {
		return bad
	}
	// Racy, then Server: the second number after the magic.
	r := &usageReader{b: unsafeString(head[len(countedMagic):])}
	racy := r.uvarint()
	r.uvarint()
	if r.bad {
		return bad
	}
	next := append([]byte(countedMagic), binary.AppendUvarint(nil, racy)...)
	next = binary.AppendUvarint(next, uint64(pid))
	next = append(next, r.b...)
	rest := size - countedTrailer - p.sums.off // the sums, the status and the groups
	return atomicfile.ReplaceCache(path, func(w io.Writer) error {
		if _, err := w.Write(next); err != nil {
			return err
		}
		n, err := io.Copy(w, io.NewSectionReader(f, p.sums.off, rest))
		if err != nil {
			return err
		}
		if n != rest {
			return io.ErrUnexpectedEOF
		}
		moved := int64(len(next)) - p.sums.off
		q := p
		q.head.crc = crc32.ChecksumIEEE(next)
		q.sums.off, q.status.off, q.groups.off = p.sums.off+moved, p.status.off+moved, p.groups.off+moved
		_, err = w.Write(countedTrailerOf(q))
		return err
	})
}
