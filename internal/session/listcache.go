package session

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/regularfile"
)

// A list cache is what List read of each session file's head and tail
// the last time, kept so that the next listing of a data dir stats the
// files and reads only those that changed: at 10,000 sessions, opening
// and reading each is most of a listing's time (five system calls a
// file), while a stat is one.
//
// An entry is trusted only for the file it describes, unchanged: the same
// path, size, inode, modification and change times (a rename over the
// file changes the inode, an append the size, an edit in place such as
// omp's retitle of the slot the times, a chmod the change time). A file
// changed within a second before the listing read it is not kept
// (racyWindow): a second change in the same tick of the clock would look
// like none. Entries for files List could not read are never kept, so an
// error is always the file's current one.
//
// The cache file is one per sessions directory, in ListOptions.Cache,
// named by a hash of the directory's path. It carries a checksum of
// itself and a format number; a torn, damaged or older one is ignored and
// replaced. It holds every entry a listing saw and the entries of projects
// (or subagents) it did not look at, so a listing of one project does not
// cost the next listing of all.
const listCacheFormat = 2

const listCacheMagic = "xdev list cache\n"

// racyWindow is how recently before a listing a file may have changed and
// still have its entry kept.
const racyWindow = time.Second

// listCacheNow is when a listing begins (a variable for the tests, which
// list files they have only just written as if they were older).
var listCacheNow = time.Now

// listCacheMaxBytes bounds the cache file a listing reads (about 300
// bytes a session): past it, the file is ignored and listing reads heads.
const listCacheMaxBytes = 256 << 20

// fileStamp is what says a file has not changed since it was read.
type fileStamp struct {
	size, mtime, ctime int64
	ino                uint64
}

func stampOf(st *syscall.Stat_t) fileStamp {
	return fileStamp{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: st.Ino}
}

// listCacheEntry is one file's entry.
type listCacheEntry struct {
	stamp      fileStamp
	withStatus bool // the tail was read (SessionInfo.Status is known)
	info       SessionInfo
}

// listCache is a cache file as read, and what a listing adds to it. The
// file's records are decoded only when looked up, in place: a listing
// holds the file's bytes and an index of them, not a second copy of every
// session's description; and a record that is kept is written again as
// the bytes it was read as.
type listCache struct {
	path  string
	start time.Time
	raw   []byte            // the file's records
	body  string            // raw as a string, sharing its bytes: the records' strings are its substrings
	index map[string][2]int // a path's record: where it starts and ends in raw
	// fresh are the entries of the files this listing read, seen every
	// path it looked up or read; changed says the file must be written
	// again.
	fresh   map[string]*listCacheEntry
	seen    map[string]bool
	changed bool
}

// listCachePath is where the list cache of the sessions directory root
// lives in dir.
func listCachePath(dir, root string) string {
	sum := sha256.Sum256([]byte(absPath(root)))
	return filepath.Join(dir, hex.EncodeToString(sum[:12])+".list")
}

// openListCache reads the list cache of root kept in dir; a missing,
// unreadable or damaged one is an empty cache. dir "" keeps none (nil).
func openListCache(dir, root string) *listCache {
	if dir == "" {
		return nil
	}
	c := &listCache{path: listCachePath(dir, root), start: listCacheNow(), fresh: map[string]*listCacheEntry{}, seen: map[string]bool{}}
	if b := readListCache(c.path); b != nil {
		c.raw, c.body, c.index, _ = indexListCache(b)
	}
	return c
}

// readListCache reads the cache file at path, nil if there is none it can
// read.
func readListCache(path string) []byte {
	f, fi, err := regularfile.OpenRaw(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi.Size() > listCacheMaxBytes {
		return nil
	}
	b := make([]byte, fi.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil
	}
	return b
}

// indexListCache checks a cache file's bytes b (whole: its checksum; of
// this format) and indexes its records; ok is false, and nothing is
// indexed, otherwise.
func indexListCache(b []byte) (raw []byte, body string, index map[string][2]int, ok bool) {
	if len(b) < len(listCacheMagic)+4 || string(b[:len(listCacheMagic)]) != listCacheMagic {
		return nil, "", nil, false
	}
	raw = b[len(listCacheMagic)+4:]
	if crc32.Checksum(raw, castagnoli) != binary.LittleEndian.Uint32(b[len(listCacheMagic):]) {
		return nil, "", nil, false
	}
	// The records' strings are substrings of body, which shares raw's
	// bytes: nothing writes to them after this (as strings.Builder does).
	body = unsafe.String(unsafe.SliceData(raw), len(raw))
	d := newListCacheDecoder(raw, body)
	if d.uvarint() != listCacheFormat {
		return nil, "", nil, false
	}
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) { // every record takes more than a byte
		return nil, "", nil, false
	}
	index = make(map[string][2]int, n)
	for range n {
		p := d.str()
		at := len(raw) - len(d.b)
		d.skipRecord()
		if d.err != nil {
			return nil, "", nil, false
		}
		index[p] = [2]int{at, len(raw) - len(d.b)}
	}
	if len(d.b) != 0 {
		return nil, "", nil, false
	}
	return raw, body, index, true
}

// lookup returns the entry kept for cand's file when the file has not
// changed since it was read, stat'ing it (never opening it).
func (c *listCache) lookup(cand candidate) (SessionInfo, bool) {
	span, ok := c.index[cand.path]
	if !ok {
		return SessionInfo{}, false
	}
	d := newListCacheDecoder(c.raw[span[0]:span[1]], c.body[span[0]:span[1]])
	e, ok := d.record()
	if !ok || (cand.status && !e.withStatus) {
		return SessionInfo{}, false
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(cand.path, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return SessionInfo{}, false
	}
	if stampOf(&st) != e.stamp {
		return SessionInfo{}, false
	}
	e.info.Path = cand.path
	if !cand.status {
		e.info.Status = "" // as a listing that did not read the tail
	}
	return e.info, true
}

// racy says a file last changed at ctime (ns) may change again unseen.
func (c *listCache) racy(ctime int64) bool {
	return ctime > c.start.Add(-racyWindow).UnixNano()
}

// update records what this listing found of the candidates: infos[k] is
// cands[k]'s, fresh[k] its new entry when the file was read (nil when the
// cache's entry stood). Entries of the scope listed (dirs, with or without
// subagents) that were not seen are gone from disk and dropped.
func (c *listCache) update(root string, dirs []string, subagents bool, cands []candidate, infos []SessionInfo, fresh []*listCacheEntry) {
	for k, cand := range cands {
		c.seen[cand.path] = true
		e := fresh[k]
		if e == nil {
			if _, kept := c.index[cand.path]; kept && (cand.symlink || cand.irregular) {
				delete(c.index, cand.path) // a file that became a link or a FIFO
				c.changed = true
			}
			continue
		}
		c.changed = true
		delete(c.index, cand.path)
		if infos[k].Err != nil || c.racy(e.stamp.ctime) {
			continue
		}
		e.info = infos[k]
		e.info.Path = ""
		c.fresh[cand.path] = e
	}
	listed := make(map[string]bool, len(dirs))
	for _, d := range dirs {
		listed[filepath.Clean(d)] = true
	}
	for p := range c.index {
		if c.seen[p] {
			continue
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			continue
		}
		project, rest, _ := strings.Cut(rel, string(filepath.Separator))
		if !listed[filepath.Join(root, project)] || (strings.Contains(rest, string(filepath.Separator)) && !subagents) {
			continue // not in what was listed: kept as it is
		}
		delete(c.index, p)
		c.changed = true
	}
}

// save writes the cache when the listing changed it. A cache that cannot
// be written is not an error of the listing: the next one reads heads.
func (c *listCache) save() {
	if c == nil || !c.changed {
		return
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return
	}
	b := c.encode()
	atomicfile.ReplaceCache(c.path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// encode encodes the cache: the magic, a CRC-32C of the rest, the format,
// the count, then each record: its path, then the kept record's bytes or
// the fresh entry's encoding.
func (c *listCache) encode() []byte {
	b := make([]byte, 0, 64+len(c.raw)+300*len(c.fresh))
	b = append(b, listCacheMagic...)
	b = append(b, 0, 0, 0, 0)
	body := len(b)
	b = binary.AppendUvarint(b, listCacheFormat)
	b = binary.AppendUvarint(b, uint64(len(c.index)+len(c.fresh)))
	for p, span := range c.index {
		b = appendString(b, p)
		b = append(b, c.raw[span[0]:span[1]]...)
	}
	for p, e := range c.fresh {
		b = appendString(b, p)
		b = appendListRecord(b, e)
	}
	binary.LittleEndian.PutUint32(b[body-4:], crc32.Checksum(b[body:], castagnoli))
	return b
}

// appendListRecord appends e's record: its stamp, flags, title source,
// strings and format version.
func appendListRecord(b []byte, e *listCacheEntry) []byte {
	i := &e.info
	b = binary.AppendVarint(b, e.stamp.size)
	b = binary.AppendVarint(b, e.stamp.mtime)
	b = binary.AppendVarint(b, e.stamp.ctime)
	b = binary.AppendUvarint(b, e.stamp.ino)
	var flags byte
	for bit, set := range []bool{e.withStatus, i.Subagent, i.hasSlot} {
		if set {
			flags |= 1 << bit
		}
	}
	b = append(b, flags, byte(i.TitleSource))
	created := ""
	if !i.Created.IsZero() {
		created = i.Created.Format(time.RFC3339Nano)
	}
	for _, s := range [listStrings]string{i.ID, i.Cwd, i.Title, created, i.ParentSession, i.FirstMessage, i.ShortSummary, string(i.Status)} {
		b = appendString(b, s)
	}
	return binary.AppendVarint(b, int64(i.Version))
}

// listStrings is how many strings a record has.
const listStrings = 8

// listCacheDecoder reads a cache file's fields: the checkpoint's decoder
// (the same varints), its strings substrings of s, the string of the
// bytes it reads.
type listCacheDecoder struct {
	ckDecoder
	s string
}

func newListCacheDecoder(b []byte, s string) *listCacheDecoder {
	return &listCacheDecoder{ckDecoder{b: b}, s}
}

// str is a string field, a substring of d.s (no copy).
func (d *listCacheDecoder) str() string {
	b := d.bytes()
	if d.err != nil {
		return ""
	}
	start := len(d.s) - len(d.b) - len(b)
	return d.s[start : start+len(b)]
}

// record decodes what appendListRecord wrote.
func (d *listCacheDecoder) record() (listCacheEntry, bool) {
	var e listCacheEntry
	e.stamp = fileStamp{size: d.varint(), mtime: d.varint(), ctime: d.varint(), ino: d.uvarint()}
	flags, source := d.byte(), d.byte()
	i := &e.info
	e.withStatus, i.Subagent, i.hasSlot = flags&1 != 0, flags&2 != 0, flags&4 != 0
	i.TitleSource = TitleSource(source)
	var created string
	i.ID, i.Cwd, i.Title, created = d.str(), d.str(), d.str(), d.str()
	i.ParentSession, i.FirstMessage, i.ShortSummary, i.Status = d.str(), d.str(), d.str(), Status(d.str())
	i.Version = int(d.varint())
	if created != "" {
		t, err := time.Parse(time.RFC3339Nano, created)
		if err != nil {
			return e, false
		}
		i.Created = t
	}
	i.Size, i.Modified = e.stamp.size, time.Unix(0, e.stamp.mtime)
	return e, d.err == nil && len(d.b) == 0
}

// skipRecord passes over a record.
func (d *listCacheDecoder) skipRecord() {
	d.varint()
	d.varint()
	d.varint()
	d.uvarint()
	d.byte()
	d.byte()
	for range listStrings {
		d.str()
	}
	d.varint()
}
