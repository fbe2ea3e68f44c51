package usagecache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/xdev/xdev/internal/regularfile"
)

// The journal. A server keeps the cache whole (Cache.Whole) so that a
// ledger in a terminal can take every session from it, and a running
// agent changes a session every few seconds: rewriting the whole file
// for each (57 MB at 25,000 sessions) cost the server 300 ms of CPU and
// 57 MB of writes a change. So the entries read anew are appended to a
// journal beside the file (<path>.journal), while it stays small beside
// the file (journalShare); past that, or when sessions are gone, the
// file is written anew with them and the journal removed.
//
// The journal begins with journalMagic and the id of the file it goes
// with (a new file has a new id, so a journal a crash left beside
// another file is ignored), then records, each its length, its bytes and
// their CRC-32, written with one append each (two writers' records do
// not interleave). A record holds entries whole (head and calls, as
// encodeSession writes them), the requests each holds (which replace
// the file's pairs of the same entries), and the entries they made
// share a request with another (their flag set). A torn or damaged
// record ends what is read, and makes the next save rewrite the file.

const journalMagic = "xdev usage journal 1\n"

// journalShare bounds the journal: at most the file's size over it.
const journalShare = 8

// noJournal makes every save write the whole file: a test's oracle.
var noJournal = false

// journalState is what the journal said, as Open read it.
type journalState struct {
	size int64
	// replaced are the owners of the entries the journal holds: the
	// file's pairs of them are void.
	replaced map[uint64]bool
	pairs    []pair // the journal's entries' requests, sorted
	// stale: the journal is of another file, or damaged; the next save
	// writes the file anew.
	stale bool
}

func (c *Cache) journalPath() string { return c.path + ".journal" }

// journalHeader is how the journal of the file read begins.
func (c *Cache) journalHeader() []byte {
	return append([]byte(journalMagic), c.baseID[:]...)
}

// readJournal takes the entries of the journal of the file read into
// Old.
func (c *Cache) readJournal() {
	data, err := regularfile.ReadFile(c.journalPath(), c.baseSize/journalShare+1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	head := c.journalHeader()
	if err != nil || !bytes.HasPrefix(data, head) {
		c.journal.stale = true
		return
	}
	c.journal.size = int64(len(data))
	body := string(data[len(head):]) // records are substrings of it
	owned := map[uint64][]uint64{}
	marks := map[uint64]bool{}
	for len(body) > 0 {
		if len(body) < 4 {
			c.journal.stale = true
			break
		}
		n := int(binary.LittleEndian.Uint32([]byte(body[:4])))
		if n > len(body)-8 {
			c.journal.stale = true
			break
		}
		rec := body[4 : 4+n]
		if crc32.ChecksumIEEE([]byte(rec)) != binary.LittleEndian.Uint32([]byte(body[4+n:8+n])) {
			c.journal.stale = true
			break
		}
		body = body[8+n:]
		j, ok := decodeJournalRecord(rec)
		if !ok {
			c.journal.stale = true
			break
		}
		if c.journal.replaced == nil {
			c.journal.replaced = map[uint64]bool{}
		}
		for _, e := range j.entries {
			c.Old[e.key] = e.Entry
			o := OwnerOf(e.key)
			c.journal.replaced[o] = true
			owned[o] = nil // an earlier record's requests of it are void
		}
		for _, p := range j.pairs {
			owned[p.owner] = append(owned[p.owner], p.req)
		}
		for _, o := range j.marks {
			marks[o] = true
		}
	}
	for o, reqs := range owned {
		for _, r := range reqs {
			c.journal.pairs = append(c.journal.pairs, pair{r, o})
		}
	}
	slices.SortFunc(c.journal.pairs, comparePairs)
	if len(marks) > 0 {
		for key, e := range c.Old {
			if !e.shared && marks[OwnerOf(key)] {
				e.shared = true
				c.Old[key] = e
			}
		}
	}
}

// journalRecord is one record of the journal, decoded.
type journalRecord struct {
	entries []keyedEntry
	pairs   []pair
	marks   []uint64
}

type keyedEntry struct {
	key string
	Entry
}

func decodeJournalRecord(b string) (journalRecord, bool) {
	r := &usageReader{b: b}
	var j journalRecord
	j.entries = make([]keyedEntry, r.countOf(4))
	for k := range j.entries {
		e := &j.entries[k]
		e.key, e.Entry = r.entry()
		e.record = r.str()
		if _, _, ok := splitRecord(e.record); !ok {
			r.fail()
		}
	}
	j.pairs = make([]pair, r.countOf(16))
	for k := range j.pairs {
		j.pairs[k] = pair{r.fixed64(), r.fixed64()}
	}
	j.marks = make([]uint64, r.countOf(8))
	for k := range j.marks {
		j.marks[k] = r.fixed64()
	}
	return j, !r.bad && len(r.b) == 0
}

// OpenForJournal reads of the cache file at path what a writer of its
// journal needs alone: its id and size (its trailer) and its journal,
// not its entries (a read of every byte, the file's checksum: 80 ms of a
// server's recount at 25,000 sessions). The entries put in it can only
// be appended to the journal (AppendJournal), and are taken to share no
// request with the file's, which it does not hold: what a server's
// recount of sessions counted alone puts (internal/catalog). ok is false
// where there is no file of this version to go with.
func OpenForJournal(path string) (c *Cache, ok bool) {
	c = &Cache{path: path, Old: map[string]Entry{}, now: map[string]Entry{}, fresh: map[uint64][]uint64{}, started: time.Now(), journalOnly: true}
	f, fi, err := regularfile.Open(path, 0)
	if err != nil {
		return c, false
	}
	defer f.Close()
	size := fi.Size()
	head := make([]byte, len(usageCacheMagic))
	var trailer [trailerBytes]byte
	if size > maxUsageCache || size < int64(len(head))+trailerBytes {
		return c, false
	}
	if _, err := io.ReadFull(f, head); err != nil || string(head) != usageCacheMagic {
		return c, false
	}
	if _, err := f.ReadAt(trailer[:], size-trailerBytes); err != nil {
		return c, false
	}
	copy(c.baseID[:], trailer[:16])
	c.baseSize = size
	c.readJournal()
	return c, !c.journal.stale
}

// AppendJournal appends the entries put to the journal of a cache
// opened for it (OpenForJournal), and reports whether it did: not where
// the journal would grow past its share, or the file is not the one
// read; then the cache is to be opened whole and saved.
func (c *Cache) AppendJournal() bool {
	return c.journalOnly && len(c.fresh) > 0 && c.appendJournal()
}

// appendJournal appends the entries read anew to the journal, and
// reports whether it did: not when there is no file to go with, the
// journal is stale or would grow past its share, or the file on disk is
// no longer the one read (another process wrote it since).
func (c *Cache) appendJournal() bool {
	if c.file == nil && !c.journalOnly || c.journal.stale || noJournal {
		return false
	}
	var rec []byte
	var keys []string
	for key := range c.now {
		if _, ok := c.fresh[OwnerOf(key)]; ok {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	// Which entries the new ones share a request with: another new one,
	// or one the file or the journal holds.
	shared := map[uint64]bool{}
	var pairs []pair
	holder := map[uint64]uint64{} // a request to a new entry holding it
	for _, key := range keys {
		o := OwnerOf(key)
		for _, r := range c.fresh[o] {
			pairs = append(pairs, pair{r, o})
			if h, ok := holder[r]; ok && h != o {
				shared[o], shared[h] = true, true
			}
			holder[r] = o
			for _, x := range c.Sharers(r) {
				if x != o {
					shared[o], shared[x] = true, true
				}
			}
		}
	}
	slices.SortFunc(pairs, comparePairs)
	pairs = slices.Compact(pairs)
	rec = binary.AppendUvarint(rec, uint64(len(keys)))
	for _, key := range keys {
		record, ok := c.recordOf(c.now[key])
		if !ok {
			return false
		}
		rec = appendEntry(rec, key, c.now[key], shared[OwnerOf(key)])
		rec = appendString(rec, record)
	}
	rec = binary.AppendUvarint(rec, uint64(len(pairs)))
	for _, p := range pairs {
		rec = binary.LittleEndian.AppendUint64(rec, p.req)
		rec = binary.LittleEndian.AppendUint64(rec, p.owner)
	}
	var marks []uint64
	for o := range shared {
		if _, ok := c.fresh[o]; !ok {
			marks = append(marks, o)
		}
	}
	slices.Sort(marks)
	rec = binary.AppendUvarint(rec, uint64(len(marks)))
	for _, o := range marks {
		rec = binary.LittleEndian.AppendUint64(rec, o)
	}
	framed := binary.LittleEndian.AppendUint32(nil, uint32(len(rec)))
	framed = append(framed, rec...)
	framed = binary.LittleEndian.AppendUint32(framed, crc32.ChecksumIEEE(rec))
	if c.journal.size+int64(len(framed)) > c.baseSize/journalShare || !c.sameFile() {
		return false
	}
	// The first record comes with the header, in one write to a file
	// made for it; a later one is appended to a journal of this file.
	if f, err := os.OpenFile(c.journalPath(), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		_, err = f.Write(append(c.journalHeader(), framed...))
		f.Close()
		return err == nil
	}
	f, err := os.OpenFile(c.journalPath(), os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	head := c.journalHeader()
	got := make([]byte, len(head))
	if _, err := f.ReadAt(got, 0); err != nil || !bytes.Equal(got, head) {
		return false
	}
	_, err = f.Write(framed)
	return err == nil
}

// sameFile reports whether the cache file on disk is still the one read.
func (c *Cache) sameFile() bool {
	fi, err := os.Stat(c.path)
	if err != nil || fi.Size() != c.baseSize {
		return false
	}
	f, _, err := regularfile.Open(c.path, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	var id [16]byte
	if _, err := f.ReadAt(id[:], c.baseSize-trailerBytes); err != nil {
		return false
	}
	return id == c.baseID
}
