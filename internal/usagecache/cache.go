package usagecache

import (
	"cmp"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"hash/fnv"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/usage"
)

// A usageCache keeps what a ledger read of each session file, by the
// file's stamp, in one file per set of places under the cache dir (the
// bytes are in codec.go): each session's header, digest and calls,
// and an index of every session's requests, sorted, which says which
// sessions share a request with another (they are counted call by call),
// and which sessions a session read anew shares one with. A 10,000-session
// Claude Code dir of 250,000 calls takes about 16 MB. What is held in
// memory is the head of every entry (its header and digest) and the
// index; an entry's calls are read from the file when they are asked for
// (through the file as it was opened, whoever replaced it since), and
// copied from it to the next one. At 25,000 sessions (57 MB) a warm
// ledger had held the whole file.
//
// A file that is torn, damaged or of another version is ignored and
// written again; an entry whose file changed, or changed too recently to
// be sure of (usageStamp.fresh), is read again. Entries of files no
// longer there are dropped when the cache is written, which is only when
// something changed.
type Cache struct {
	path    string
	started time.Time
	// whole: every change is written, and every session read is kept,
	// those too recent to trust as racy (UsageOptions.Vouching).
	Whole bool

	Old      map[string]Entry
	oldIndex string // the requests: (key, owner) pairs of 16 bytes, by key
	// file is the cache file read, open for the calls of Old's entries
	// for as long as a ledger may ask for them: closed by its finalizer
	// once nothing refers to the cache.
	file *os.File
	// The file's id and size, and what its journal (journal.go) said
	// beside it.
	baseID   [16]byte
	baseSize int64
	journal  journalState
	// journalOnly: opened for its journal alone (OpenForJournal).
	journalOnly bool

	mu sync.Mutex
	// now are the entries read anew (Put), and once Save rewrites the
	// file, the old ones it carries over.
	now map[string]Entry
	// spool holds the calls of the entries read anew, written as they are
	// read (Put), at spoolAt: a first ledger of 25,000 sessions held every
	// session's calls in memory until the cache was written (195 MiB). It
	// is a file with no name (atomicfile.Scratch), so that nothing is left
	// of it whatever happens; closed, as the file read is, when nothing
	// refers to it.
	spool     *os.File
	spoolAt   int64
	spoolFail bool
	fresh     map[uint64][]uint64 // the requests of the entries read anew, by owner
	freshSize int64               // the bytes read of their files
	Racy      int                 // of them, those kept racy
}

type Entry struct {
	Stamp  Stamp
	shared bool
	// racy: the file changed within a second of being read, so that its
	// stamp may not tell a later change (usageStamp.fresh); the entry is
	// only a base to read on from, where the file grew.
	Racy   bool
	ID     string // the session's id (its header's, which its file's name need not say)
	Parent string // its Parent
	// tail is the hash of the file's last bytes when it was read, ending
	// in a newline (TailHash); 0 when it is not to be read on from there.
	tail uint64
	// record is the encoding of what was read anew (encodeSession); an
	// entry of the file read has its head instead (a substring of it),
	// and calls, where its calls are in the file; an entry read anew whose
	// calls went to the spool has its head, and calls where they are
	// there (spooled).
	record  string
	head    string
	calls   span
	spooled bool
}

// span is where an entry's calls are in the cache file read.
type span struct{ off, n int64 }

// decode is what the cache holds of e: its record, or its head with its
// calls read on demand.
func (c *Cache) decode(e Entry) (Decoded, bool) {
	if e.record != "" || e.head == "" {
		return Decode(e.record)
	}
	return decodeStored(e.head, func() (string, bool) { return c.callsOf(e) })
}

// callsFile is the file that holds the calls of e, an entry without a
// record: the spool or the file read.
func (c *Cache) callsFile(e Entry) *os.File {
	if e.spooled {
		return c.spool
	}
	return c.file
}

// tailBytes is how much of a file's end TailHash reads.
const tailBytes = 4096

// TailHash is the hash of the up to tailBytes bytes of the file at path
// that end at offset size, if they end a line (a writer's torn last line
// is read whole next time, not from its middle); else 0. A file whose
// bytes there hash the same later, at the same inode and a larger size,
// only grew: what came before is what was read.
func TailHash(path string, size int64) uint64 {
	if size <= 0 {
		return 0
	}
	f, _, err := regularfile.Open(path, 0)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := min(size, tailBytes)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, size-n); err != nil || b[n-1] != '\n' {
		return 0
	}
	h := fnv.New64a()
	h.Write(b)
	return max(h.Sum64(), 1)
}

const usageCacheMagic = "xdev usage cache 11\n" // 11: a journal beside it

// trailerBytes is the size of the file's trailer: its id (which its
// journal names), where the head begins, and the checksum.
const trailerBytes = 16 + 8 + 4

// maxUsageCache bounds the cache file read: past it, it is rebuilt.
const maxUsageCache = 1 << 30

// ownerOf is the hash an entry's key is known by in the index.
func OwnerOf(key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64()
}

// Open reads the cache file at path (Catalog.UsageCacheFile; "" for
// none): the whole file is checksummed as it streams by, and its head
// kept.
func Open(path string) *Cache {
	c := &Cache{path: path, now: map[string]Entry{}, fresh: map[uint64][]uint64{}, started: time.Now()}
	f, fi, err := regularfile.Open(c.path, 0)
	if err != nil {
		return c
	}
	keep := false
	defer func() {
		if !keep {
			f.Close()
		}
	}()
	size := fi.Size()
	magic := int64(len(usageCacheMagic))
	if size > maxUsageCache || size < magic+trailerBytes {
		return c
	}
	head := make([]byte, magic)
	if _, err := io.ReadFull(f, head); err != nil || string(head) != usageCacheMagic {
		return c
	}
	var trailer [trailerBytes]byte
	if _, err := f.ReadAt(trailer[:], size-trailerBytes); err != nil {
		return c
	}
	headAt := int64(binary.LittleEndian.Uint64(trailer[16:24]))
	if headAt < magic || headAt > size-trailerBytes {
		return c
	}
	// The calls are checksummed, not kept; the head is read into a
	// string as it is checksummed, with no copy of it: every name and
	// head read is a substring of it.
	crc := crc32.NewIEEE()
	if _, err := io.Copy(crc, io.NewSectionReader(f, magic, headAt-magic)); err != nil {
		return c
	}
	var body strings.Builder
	body.Grow(int(size - trailerBytes - headAt))
	if _, err := io.Copy(&body, io.TeeReader(io.NewSectionReader(f, headAt, size-trailerBytes-headAt), crc)); err != nil ||
		int64(body.Len()) != size-trailerBytes-headAt {
		return c
	}
	crc.Write(trailer[:24])
	if crc.Sum32() != binary.LittleEndian.Uint32(trailer[24:]) {
		return c
	}
	r := &usageReader{b: body.String()}
	n := r.countOf(4)
	old := make(map[string]Entry, n)
	for range n {
		key, e := r.entry()
		e.head = r.str()
		off, size := r.uvarint(), r.uvarint()
		if off > uint64(headAt-magic) || size > uint64(headAt-magic)-off || e.head == "" {
			r.fail()
		}
		e.calls = span{magic + int64(off), int64(size)}
		old[key] = e
	}
	pairs := r.countOf(16)
	if r.bad || len(r.b) != 16*pairs {
		return c
	}
	c.Old, c.oldIndex, c.file, keep = old, r.b, f, true
	copy(c.baseID[:], trailer[:16])
	c.baseSize = size
	c.readJournal()
	return c
}

// get is the session the cache holds for key at stamp (its header and
// digest read, its calls on demand), and whether it shares a request
// with another entry.
func (c *Cache) Get(key string, stamp Stamp) (Decoded, bool, bool) {
	if key == "" {
		return Decoded{}, false, false
	}
	e, ok := c.Old[key]
	if !ok || e.Racy || e.Stamp != stamp || stamp.Fresh(c.started) {
		return Decoded{}, false, false
	}
	d, ok := c.decode(e)
	if !ok {
		return Decoded{}, false, false
	}
	// Not put in c.now: Save carries over every entry whose file is as it
	// was, and only when it rewrites the file (a map of 25,000 entries,
	// 4.8 MB, held to the ledger's end for nothing where it does not).
	return d, e.shared, true
}

// grown is the session the cache holds for key when its file (at path)
// has only grown since (the same inode, a larger size, and the bytes
// before the old end as they were), and where it ended then.
func (c *Cache) Grown(key, path string, stamp Stamp) (Decoded, int64, bool) {
	e, ok := c.Old[key]
	if !ok || key == "" || e.tail == 0 || e.Stamp.Ino != stamp.Ino || stamp.Size <= e.Stamp.Size || TailHash(path, e.Stamp.Size) != e.tail {
		return Decoded{}, 0, false
	}
	d, ok := c.decode(e)
	return d, e.Stamp.Size, ok
}

// callsOf is the encoding of e's calls, from its record, the spool or the
// file read.
func (c *Cache) callsOf(e Entry) (string, bool) {
	if e.record != "" {
		_, calls, ok := splitRecord(e.record)
		return calls, ok
	}
	b := make([]byte, e.calls.n)
	if _, err := c.callsFile(e).ReadAt(b, e.calls.off); err != nil {
		return "", false
	}
	return string(b), true
}

// recordOf is e's whole record (encodeSession's), as a journal keeps it.
func (c *Cache) recordOf(e Entry) (string, bool) {
	if e.record != "" {
		return e.record, true
	}
	calls, ok := c.callsOf(e)
	if !ok {
		return "", false
	}
	return string(appendString([]byte(e.head), calls)), true
}

// spoolCalls writes calls at the spool's end and returns where they
// are; ok false when there is no spool (it could not be made), and the
// entry keeps its record. The caller holds c.mu.
func (c *Cache) spoolCalls(calls string) (span, bool) {
	if c.spool == nil && !c.spoolFail {
		c.spool, _ = atomicfile.Scratch()
		c.spoolFail = c.spool == nil
	}
	if c.spool == nil {
		return span{}, false
	}
	if _, err := c.spool.WriteAt([]byte(calls), c.spoolAt); err != nil {
		return span{}, false
	}
	at := span{c.spoolAt, int64(len(calls))}
	c.spoolAt += at.n
	return at, true
}

// Put keeps what was read of key at stamp: s and its digest, and
// (incremental) the hash of its file's end, when it may be read on from
// there. reqs are the keys of s's calls (CallKeys), which the cache keeps
// as they are: the caller may hold the same slice. It returns the session
// as the cache keeps it (its calls read back when asked for), ok false
// when it keeps none.
func (c *Cache) Put(key string, stamp Stamp, s *usage.Session, digest []usage.Bucket, reqs []uint64, file string, incremental bool, read int64) (Decoded, bool) {
	racy := stamp.Fresh(c.started)
	if key == "" || c.path == "" || racy && !incremental && !c.Whole {
		return Decoded{}, false
	}
	var tail uint64
	if incremental {
		tail = TailHash(file, stamp.Size)
	}
	if racy && tail == 0 && !c.Whole {
		return Decoded{}, false
	}
	rec := string(encodeSession(s, digest))
	c.mu.Lock()
	defer c.mu.Unlock()
	e := Entry{Stamp: stamp, Racy: racy, ID: s.ID, Parent: s.Parent, tail: tail, record: rec}
	if head, calls, ok := splitRecord(rec); ok {
		if at, ok := c.spoolCalls(calls); ok {
			// The head is copied: a substring would hold the whole record.
			e.record, e.head, e.calls, e.spooled = "", strings.Clone(head), at, true
		}
	}
	c.now[key] = e
	c.fresh[OwnerOf(key)] = reqs
	c.freshSize += read
	if racy {
		c.Racy++
	}
	return c.decode(e)
}

// callKeys are the keys of calls (appendKeys).
func CallKeys(calls []usage.Call) []uint64 {
	var keys []uint64
	for _, call := range calls {
		keys = appendKeys(keys, call)
	}
	return keys
}

// appendKeys appends the keys a call is known by in the index: its
// request's and its entry's, either of which another session's copy of it
// holds.
func appendKeys(keys []uint64, c usage.Call) []uint64 {
	if c.Request != 0 {
		keys = append(keys, c.Request)
	}
	if c.Entry != 0 {
		keys = append(keys, c.Entry)
	}
	return keys
}

// Sharers are the owners (entry key hashes) of the entries that hold
// request r: in the file's index (but of the entries the journal
// replaced), and in the journal's.
func (c *Cache) Sharers(r uint64) []uint64 {
	n := len(c.oldIndex) / 16
	at := func(i int) uint64 { return (&usageReader{b: c.oldIndex[i:]}).fixed64() }
	i := sort.Search(n, func(i int) bool { return at(16*i) >= r })
	var out []uint64
	for ; i < n && at(16*i) == r; i++ {
		if o := at(16*i + 8); !c.journal.replaced[o] {
			out = append(out, o)
		}
	}
	j := c.journal.pairs
	for k, _ := slices.BinarySearchFunc(j, r, func(p pair, r uint64) int { return cmp.Compare(p.req, r) }); k < len(j) && j[k].req == r; k++ {
		out = append(out, j[k].owner)
	}
	return out
}

// Requests are the keys of the requests the cache's index holds (the
// file's and the journal's) and those of the entries put since: of every
// session it holds, and of some it holds no longer (an entry replaced,
// a file gone), which a set asked whether it may hold a key can hold.
func (c *Cache) Requests() KeySet {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.oldIndex)/16 + len(c.journal.pairs)
	for _, rs := range c.fresh {
		n += len(rs)
	}
	keys := make([]uint64, 0, n)
	for i := 0; i+16 <= len(c.oldIndex); i += 16 {
		keys = append(keys, (&usageReader{b: c.oldIndex[i:]}).fixed64())
	}
	for _, p := range c.journal.pairs {
		keys = append(keys, p.req)
	}
	for _, rs := range c.fresh {
		keys = append(keys, rs...)
	}
	return NewKeySet(keys)
}

// pair is a request's key and the owner of an entry holding it.
type pair struct{ req, owner uint64 }

func comparePairs(a, b pair) int {
	return cmp.Or(cmp.Compare(a.req, b.req), cmp.Compare(a.owner, b.owner))
}

// saveAtLeast is how much must have been read anew (or how many files)
// for the cache to be written: rewriting a cache of 10,000 sessions for
// the one a running agent appends to would cost more than reading that
// one again next time.
var (
	saveAtLeastBytes int64 = 8 << 20
	saveAtLeastFiles       = 32
)

// SaveAlways makes every Save write what changed, however little, until
// restore is called: for a test that reads each ledger's cache back.
func SaveAlways() (restore func()) {
	b, f := saveAtLeastBytes, saveAtLeastFiles
	saveAtLeastBytes, saveAtLeastFiles = 0, 0
	return func() { saveAtLeastBytes, saveAtLeastFiles = b, f }
}

// save writes the cache if enough in it changed (saveAtLeast; anything,
// when it is whole), or entries are gone: the entries of the files keys and stamps name (the
// ledger's jobs), those read as they were or carried over from the old
// file where unchanged, and the index: the old one's pairs of the entries
// kept, and the new entries'. An entry shares a request when the index
// holds it under two owners. A cache that cannot be written is no error
// (the next ledger reads the files again).
func (c *Cache) Save(keys []string, stamps []Stamp) {
	if c.path == "" || c.journalOnly {
		return // none, or one that holds none of the file's entries
	}
	// An old entry is kept where it was read again, or its file is as it
	// was (left out of this ledger, not gone); gone where neither. They
	// are counted first, and put in c.now only for a write: a ledger of
	// a span reads a few of 25,000 sessions, and writes nothing.
	kept := 0
	for k, key := range keys {
		if e, ok := c.Old[key]; ok && key != "" {
			if _, read := c.now[key]; read || e.Stamp == stamps[k] {
				kept++
			}
		}
	}
	gone := kept < len(c.Old)
	if len(c.fresh) == 0 && !gone || !c.Whole && len(c.fresh) < saveAtLeastFiles && c.freshSize < saveAtLeastBytes && !gone && len(c.Old) > 0 {
		return
	}
	if !gone && c.appendJournal() {
		return
	}
	for k, key := range keys {
		if _, ok := c.now[key]; ok || key == "" {
			continue
		}
		if e, ok := c.Old[key]; ok && e.Stamp == stamps[k] {
			c.now[key] = e
		}
	}
	c.rewrite()
}

// SaveChanged writes the entries Put, every other entry kept as it is:
// Save for a writer that knows no other file changed or went since the
// cache was written (a server told every change by its watcher), which
// names no file but those it read again.
func (c *Cache) SaveChanged() {
	if c.path == "" || len(c.fresh) == 0 || c.journalOnly {
		return
	}
	if c.appendJournal() {
		return
	}
	for key, e := range c.Old {
		if _, ok := c.now[key]; !ok {
			c.now[key] = e
		}
	}
	c.rewrite()
}

// rewrite writes the cache file anew, with a new id, and drops the
// journal: what the journal said is in it.
func (c *Cache) rewrite() {
	kept := make(map[uint64]bool, len(c.now))
	for key := range c.now {
		o := OwnerOf(key)
		if _, ok := c.fresh[o]; !ok {
			kept[o] = true
		}
	}
	var fresh []pair
	for o, reqs := range c.fresh {
		for _, r := range reqs {
			fresh = append(fresh, pair{r, o})
		}
	}
	slices.SortFunc(fresh, comparePairs)
	index := make([]byte, 0, len(c.oldIndex)+16*len(fresh))
	shared := map[uint64]bool{}
	var last pair
	add := func(p pair) {
		if len(index) > 0 && p.req == last.req && p.owner != last.owner {
			shared[p.owner], shared[last.owner] = true, true
		}
		index = binary.LittleEndian.AppendUint64(index, p.req)
		index = binary.LittleEndian.AppendUint64(index, p.owner)
		last = p
	}
	// Three runs merged, each by key: the file's pairs of the entries
	// kept as they were there, the journal's of those kept from it, and
	// the new entries'.
	old, journal := c.oldIndex, c.journal.pairs
	next := func() (pair, bool) {
		for len(old) >= 16 {
			r := &usageReader{b: old}
			p := pair{r.fixed64(), r.fixed64()}
			if kept[p.owner] && !c.journal.replaced[p.owner] {
				return p, true
			}
			old = old[16:]
		}
		return pair{}, false
	}
	nextJournal := func() (pair, bool) {
		for len(journal) > 0 {
			if kept[journal[0].owner] {
				return journal[0], true
			}
			journal = journal[1:]
		}
		return pair{}, false
	}
merge:
	for {
		p, ok := next()
		q, okj := nextJournal()
		switch {
		case ok && (!okj || comparePairs(p, q) <= 0) && (len(fresh) == 0 || comparePairs(p, fresh[0]) <= 0):
			add(p)
			old = old[16:]
		case okj && (len(fresh) == 0 || comparePairs(q, fresh[0]) <= 0):
			add(q)
			journal = journal[1:]
		case len(fresh) > 0:
			add(fresh[0])
			fresh = fresh[1:]
		default:
			break merge
		}
	}
	var id [16]byte
	rand.Read(id[:])
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return
	}
	// Written as it is encoded, an entry at a time, the calls first
	// (those of the entries carried over copied from the old file), the
	// heads then, with where each entry's calls went, and the checksum
	// last: a cache of 25,000 sessions is tens of MB, never held.
	order := slices.Sorted(maps.Keys(c.now))
	err := atomicfile.ReplaceCache(c.path, func(w io.Writer) error {
		if _, err := io.WriteString(w, usageCacheMagic); err != nil {
			return err
		}
		crc := crc32.NewIEEE()
		out := io.MultiWriter(w, crc)
		heads := make([]string, len(order))
		spans := make([]span, len(order))
		var at int64
		var buf []byte // io.Copy's, made once: it would make one an entry
		for k, key := range order {
			e := c.now[key]
			var n int64
			if e.record != "" {
				head, calls, ok := splitRecord(e.record)
				if !ok {
					return errors.New("a record does not read") // never: it was just encoded
				}
				heads[k] = head
				m, err := io.WriteString(out, calls)
				if err != nil {
					return err
				}
				n = int64(m)
			} else {
				heads[k] = e.head
				if buf == nil {
					buf = make([]byte, 32<<10)
				}
				m, err := io.CopyBuffer(out, io.NewSectionReader(c.callsFile(e), e.calls.off, e.calls.n), buf)
				if err != nil {
					return err
				}
				if m != e.calls.n {
					return io.ErrUnexpectedEOF
				}
				n = m
			}
			spans[k] = span{at, n}
			at += n
		}
		var b []byte
		flush := func() error {
			_, err := out.Write(b)
			b = b[:0]
			return err
		}
		b = binary.AppendUvarint(b, uint64(len(order)))
		for k, key := range order {
			b = appendEntry(b, key, c.now[key], shared[OwnerOf(key)])
			b = appendString(b, heads[k])
			b = binary.AppendUvarint(b, uint64(spans[k].off))
			b = binary.AppendUvarint(b, uint64(spans[k].n))
			if err := flush(); err != nil {
				return err
			}
		}
		b = binary.AppendUvarint(b, uint64(len(index)/16))
		if err := flush(); err != nil {
			return err
		}
		if _, err := out.Write(index); err != nil {
			return err
		}
		trailer := append(id[:], binary.LittleEndian.AppendUint64(nil, uint64(int64(len(usageCacheMagic))+at))...)
		crc.Write(trailer)
		_, err := w.Write(binary.LittleEndian.AppendUint32(trailer, crc.Sum32()))
		return err
	})
	if err == nil {
		// A journal left by a crash here names the old id, and is
		// ignored.
		os.Remove(c.journalPath())
	}
}
