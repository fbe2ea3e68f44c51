package usagecache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
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

const countedMagic = "xdev usage counted 2\n"

// maxCounted bounds the file read: past it, it is not read (and a
// ledger is built). A file is about 250 bytes a session (6 MB at
// 25,000): this is ten times the largest archive reported.
const maxCounted = 64 << 20

// countedTrailer is the size of the trailer: where the status and the
// groups begin (8 bytes each), and the CRC-32 of each part (4 each).
const countedTrailer = 8 + 8 + 3*4

// The bytes of a counted file: its magic, three parts, and a trailer.
// The parts are in varints but where said, and each is checksummed on
// its own, so that a status line reads the first two and a report the
// first and the last:
//
//   - the head: Racy, Server, Sessions, Skipped; the files' sum (N, then
//     Lo and Hi in 8 bytes each); the models (a count, then three
//     strings each: provider, model, API);
//   - the status (usage.Status): Since; the sessions' sums (a count,
//     then for each the hashes of its path and id (hashName) and its last
//     call's time, 8 bytes each, and its sum's bucket as a string), which
//     a reader looking for one session steps over by their lengths,
//     decoding none but it; a table
//     of sessions, and the recent groups (a count, then each one's
//     session and rollup, as their places in the table, and its bucket);
//   - the groups: a table of sessions, and the groups, as the recent
//     ones.
//
// A table of sessions is a count, then each one's harness, path, id,
// parent, project, title, import origin's harness and id, flags (1: a
// subagent's; 2: an import) and Skipped. A bucket is as the usage cache
// writes a digest's, its model a place in the head's models. A string
// is its length, then its bytes. The trailer is where the status and the
// groups begin (8 bytes each, little-endian), and the CRC-32 of the head
// (magic included), the status and the groups (4 bytes each).

// WriteCounted writes c to the file at path, atomically: a reader finds
// the old file or the new one whole. Its status is made from its groups
// (those since RecentSpan ago recent).
func WriteCounted(path string, c Counted) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	status := usage.NewStatus(c.Groups, float64(time.Now().Add(-RecentSpan).UnixMilli()))
	// The models, numbered as the groups name them: a ModelRef is a small
	// number (usage's table of models), so their numbers are a slice.
	var numbers []int32 // by ModelRef, -1 for none yet
	var models []usage.ModelRef
	for _, gs := range [][]usage.Group{c.Groups, status.Sessions} {
		for _, g := range gs {
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
	return atomicfile.ReplaceCache(path, func(w io.Writer) error {
		var at int64
		var crcs [3]uint32
		var offs [2]int64
		part := 0
		var b []byte
		flush := func() error {
			crcs[part] = crc32.Update(crcs[part], crc32.IEEETable, b)
			n, err := w.Write(b)
			at += int64(n)
			b = b[:0]
			return err
		}
		// grouped writes a table of the groups' sessions, and the groups.
		grouped := func(gs []usage.Group) error {
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
			for _, g := range gs {
				add(g.Session)
				add(g.Rollup)
				last = g.Session
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
			b = binary.AppendUvarint(b, uint64(len(gs)))
			last = nil
			var place uint64 // last's
			for _, g := range gs {
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
		if err := flush(); err != nil {
			return err
		}
		part, offs[0] = 1, at
		b = appendNum(b, status.Since)
		b = binary.AppendUvarint(b, uint64(len(status.Sessions)))
		var rec []byte
		for _, g := range status.Sessions {
			b = binary.LittleEndian.AppendUint64(b, hashName(g.Rollup.Path))
			b = binary.LittleEndian.AppendUint64(b, hashName(g.Rollup.ID))
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(g.Last))
			rec = appendBucket(rec[:0], g.Bucket, modelAt(g.Model))
			b = binary.AppendUvarint(b, uint64(len(rec)))
			b = append(b, rec...)
			if len(b) >= 64<<10 {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := grouped(status.Recent); err != nil {
			return err
		}
		if err := flush(); err != nil {
			return err
		}
		part, offs[1] = 2, at
		if err := grouped(c.Groups); err != nil {
			return err
		}
		if err := flush(); err != nil {
			return err
		}
		t := binary.LittleEndian.AppendUint64(nil, uint64(offs[0]))
		t = binary.LittleEndian.AppendUint64(t, uint64(offs[1]))
		for _, crc := range crcs {
			t = binary.LittleEndian.AppendUint32(t, crc)
		}
		_, err := w.Write(t)
		return err
	})
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
func ReadCounted(path string) (Counted, error) { return readCounted(path, nil) }

// A StatusQuery names the sessions a status is read for: by their
// files' paths (as a walk names them: absolute, clean) or id.
type StatusQuery struct {
	Paths []string
	ID    string
}

// ReadCountedStatus reads the status WriteCounted wrote at path (and its
// head; not its groups), as ReadCounted reads them: its recent groups,
// and of its sessions' sums those q names and that of the latest call.
func ReadCountedStatus(path string, q StatusQuery) (Counted, error) { return readCounted(path, &q) }

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

// readCounted reads the head and groups of the counted file at path, or
// with q its head and status.
func readCounted(path string, q *StatusQuery) (Counted, error) {
	status := q != nil
	f, fi, err := regularfile.Open(path, 0)
	if errors.Is(err, os.ErrNotExist) {
		return Counted{}, ErrNoCounted
	}
	if err != nil {
		return Counted{}, err
	}
	defer f.Close()
	size := fi.Size()
	bad := fmt.Errorf("%s: not a whole counted usage file of this version", path)
	if size > maxCounted || size < int64(len(countedMagic))+countedTrailer {
		return Counted{}, bad
	}
	var t [countedTrailer]byte
	if _, err := f.ReadAt(t[:], size-countedTrailer); err != nil {
		return Counted{}, fmt.Errorf("%s: %w", path, err)
	}
	p := partsOf(t[:], size)
	if p == nil {
		return Counted{}, bad
	}
	k := 2
	if status {
		k = 1
	}
	head := make([]byte, p[0].n)
	body := make([]byte, p[k].n)
	if _, err := f.ReadAt(head, p[0].off); err != nil {
		return Counted{}, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := f.ReadAt(body, p[k].off); err != nil {
		return Counted{}, fmt.Errorf("%s: %w", path, err)
	}
	if crc32.ChecksumIEEE(head) != p[0].crc || crc32.ChecksumIEEE(body) != p[k].crc {
		return Counted{}, bad
	}
	c, ok := decodeCounted(head, body, q)
	if !ok {
		return Counted{}, bad
	}
	return c, nil
}

// A countedPart is where a part of a counted file is, and its checksum.
type countedPart struct {
	off, n int64
	crc    uint32
}

// partsOf are the parts of a counted file of size bytes that ends in
// trailer t, nil where they do not fit in it.
func partsOf(t []byte, size int64) []countedPart {
	status, groups := int64(binary.LittleEndian.Uint64(t[0:])), int64(binary.LittleEndian.Uint64(t[8:]))
	end := size - countedTrailer
	if status < int64(len(countedMagic)) || status > groups || groups > end {
		return nil
	}
	return []countedPart{
		{0, status, binary.LittleEndian.Uint32(t[16:])},
		{status, groups - status, binary.LittleEndian.Uint32(t[20:])},
		{groups, end - groups, binary.LittleEndian.Uint32(t[24:])},
	}
}

// decodeCountedFile reads a whole counted file's bytes: its head and its
// groups, or with q its status (ReadCountedStatus). The sessions' strings
// are substrings of b from then on (the caller must not change it); ok
// is false where b is not one whole file of this version.
func decodeCountedFile(b []byte, q *StatusQuery) (Counted, bool) {
	status := q != nil
	if len(b) < len(countedMagic)+countedTrailer {
		return Counted{}, false
	}
	size := int64(len(b))
	p := partsOf(b[size-countedTrailer:], size)
	if p == nil {
		return Counted{}, false
	}
	k := 2
	if status {
		k = 1
	}
	part := func(p countedPart) []byte { return b[p.off : p.off+p.n] }
	if crc32.ChecksumIEEE(part(p[0])) != p[0].crc || crc32.ChecksumIEEE(part(p[k])) != p[k].crc {
		return Counted{}, false
	}
	return decodeCounted(part(p[0]), part(p[k]), q)
}

// decodeCounted reads a counted file's head (its magic first) and its
// groups, or with q its status.
func decodeCounted(headBytes, body []byte, q *StatusQuery) (Counted, bool) {
	if len(headBytes) < len(countedMagic) || string(headBytes[:len(countedMagic)]) != countedMagic {
		return Counted{}, false
	}
	r := &usageReader{b: unsafeString(headBytes[len(countedMagic):])}
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
		return Counted{}, false
	}
	r = &usageReader{b: unsafeString(body)}
	if q != nil {
		c.Status.Since = r.num()
		c.Status.Sessions = r.sums(models, q)
		c.Status.Recent = r.grouped(models)
	} else {
		c.Groups = r.grouped(models)
	}
	if r.bad || len(r.b) != 0 {
		return Counted{}, false
	}
	return c, true
}

// sums reads a status's sessions' sums, keeping those q names and that
// of the latest call (the first of them, as usage.Status.Latest finds
// it), in the file's order, decoding no other. The file knows a session by the hashes of its
// names: one q names has the name q gives it (its Path or ID), the
// latest none.
func (r *usageReader) sums(models []usage.ModelRef, q *StatusQuery) []usage.Group {
	want := map[uint64]string{}
	for _, p := range q.Paths {
		want[hashName(p)] = p
	}
	id := hashName(q.ID)
	type sum struct {
		k    int
		rec  string
		name usage.Session
	}
	var recs []sum
	var latest sum
	last := 0.0
	for k := range r.countOf(3*8 + 1) {
		ph, ih, l := r.fixed64(), r.fixed64(), math.Float64frombits(r.fixed64())
		rec := r.str()
		path, ok := want[ph]
		if ok || id != 0 && ih == id {
			s := usage.Session{Path: path}
			if id != 0 && ih == id {
				s.ID = q.ID
			}
			recs = append(recs, sum{k, rec, s})
		}
		if k == 0 || l > last {
			latest, last = sum{k: k, rec: rec}, l
		}
	}
	if latest.rec != "" && !slices.ContainsFunc(recs, func(s sum) bool { return s.k == latest.k }) {
		// In the file's order, as Status.Latest takes the first of those
		// tied.
		i, _ := slices.BinarySearchFunc(recs, latest.k, func(s sum, k int) int { return s.k - k })
		recs = slices.Insert(recs, i, latest)
	}
	out := make([]usage.Group, 0, len(recs))
	for _, rec := range recs {
		rr := &usageReader{b: rec.rec}
		s, b := &rec.name, &usage.Bucket{}
		m := rr.bucket(b)
		if rr.bad || len(rr.b) != 0 || m >= uint64(len(models)) {
			r.fail()
			return nil
		}
		b.Model = models[m]
		out = append(out, usage.Group{Session: s, Rollup: s, Bucket: b})
	}
	return out
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

// grouped reads a table of sessions and the groups after it.
func (r *usageReader) grouped(models []usage.ModelRef) []usage.Group {
	// 10 bytes: the least a session takes, a length for each string and
	// its two numbers.
	sessions := make([]usage.Session, r.countOf(10))
	origins := make([]usage.Origin, len(sessions))
	for k := range sessions {
		r.session(&sessions[k], &origins[k])
	}
	session := func() *usage.Session {
		k := r.uvarint()
		if k >= uint64(len(sessions)) {
			r.fail()
			return nil
		}
		return &sessions[k]
	}
	buckets := make([]usage.Bucket, r.countOf(2+bucketMinBytes))
	groups := make([]usage.Group, len(buckets))
	for k := range buckets {
		g := &groups[k]
		g.Session, g.Rollup = session(), session()
		g.Bucket = &buckets[k]
		m := r.bucket(g.Bucket)
		if m >= uint64(len(models)) {
			r.fail()
			return nil
		}
		g.Model = models[m]
	}
	return groups
}

// ClaimCounted rewrites the counted file at path as one the server of
// pid wrote (Counted.Server): its head written anew, its status and
// groups copied as they are, never decoded (a server starting on another
// server's groups vouches for them with no second copy of them in
// memory). Atomic, as WriteCounted.
func ClaimCounted(path string, pid int) error {
	f, fi, err := regularfile.Open(path, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	size := fi.Size()
	bad := fmt.Errorf("%s: not a whole counted usage file of this version", path)
	if size > maxCounted || size < int64(len(countedMagic))+countedTrailer {
		return bad
	}
	var t [countedTrailer]byte
	if _, err := f.ReadAt(t[:], size-countedTrailer); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	p := partsOf(t[:], size)
	if p == nil {
		return bad
	}
	head := make([]byte, p[0].n)
	if _, err := f.ReadAt(head, 0); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if crc32.ChecksumIEEE(head) != p[0].crc || string(head[:min(len(head), len(countedMagic))]) != countedMagic {
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
	return atomicfile.ReplaceCache(path, func(w io.Writer) error {
		if _, err := w.Write(next); err != nil {
			return err
		}
		n, err := io.Copy(w, io.NewSectionReader(f, p[1].off, p[1].n+p[2].n))
		if err != nil {
			return err
		}
		if n != p[1].n+p[2].n {
			return io.ErrUnexpectedEOF
		}
		status := int64(len(next))
		nt := binary.LittleEndian.AppendUint64(nil, uint64(status))
		nt = binary.LittleEndian.AppendUint64(nt, uint64(status+p[1].n))
		nt = binary.LittleEndian.AppendUint32(nt, crc32.ChecksumIEEE(next))
		nt = binary.LittleEndian.AppendUint32(nt, p[1].crc)
		nt = binary.LittleEndian.AppendUint32(nt, p[2].crc)
		_, err = w.Write(nt)
		return err
	})
}
