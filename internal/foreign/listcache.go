package foreign

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/regularfile"
)

// A list cache keeps what a listing read of each transcript's own bytes
// (its head and tail: the cwd, the first prompt, the titles), so that the
// next listing of the same harness's sessions stats each file and reads
// only those that changed. At 10,000 Claude Code transcripts, reading two
// 64 KiB pieces of each was most of every listing's time, and listings
// are everywhere: list, a search's look for projects and its mirror's
// refresh, resolving a name, serve.
//
// It follows the data dir's list cache (session/listcache.go) rule for
// rule: an entry is trusted only for the file it describes, unchanged
// (the same path, size, inode, modification and change times); a file
// changed within racyWindow before the listing began is not kept; an
// error reading a file is never kept. What comes from the harness's own
// indexes (Claude Code's history.jsonl, Codex's session_index.jsonl) is
// not in it: those are read at every listing, as they change without
// the transcripts changing.
//
// One file per harness and root, in the catalog's list cache directory,
// named by a hash of the root. Its bytes: a magic, the CRC-32C of the
// rest, the format, the root, the count, then each file's record, by its
// path: the path, the stamp, flags (1: listed, 2: a subagent's), the birth
// time's bits, and the facts' strings (listCacheStrings, each its length
// then its bytes). A file that is torn, damaged or of another format is an
// empty cache, and is replaced. A listing indexes the records by path and
// decodes only those it looks up; those it keeps without looking at them
// are copied as they are. (It was a JSON map, decoded whole: at 10,168
// Claude Code sessions, 5 MB of JSON and about 20 MB of garbage a
// listing.)
const listCacheFormat = 2

const listCacheMagic = "xdev harness list cache\n"

// listCacheNow is when a listing begins (a variable for the tests, which
// list files they have only just written as if they were older).
var listCacheNow = time.Now

// listCacheMaxBytes bounds the cache file a listing reads.
const listCacheMaxBytes = 64 << 20

// fileFacts is what a listing reads of one transcript's own bytes. Each
// harness uses the fields it has.
type fileFacts struct {
	Listed   bool // the file is one of the harness's sessions (Codex: a session_meta naming a cwd)
	ID       string
	Cwd      string
	First    string
	Summary  string
	Custom   string
	AI       string
	Err      string // not the harness's format: what the listing says
	Parent   string
	Subagent bool
	Created  float64
}

// listCacheEntry is one file's facts and the stamp they are true of.
type listCacheEntry struct {
	Size  int64
	Mtime int64
	Ctime int64
	Ino   uint64
	Facts fileFacts
}

// listCache is a cache file as read and the entries of this listing.
type listCache struct {
	path  string
	start time.Time
	// raw is the file read, after its magic and checksum, and body the
	// same bytes as a string, which the entries' strings are substrings
	// of; index is where each path's record is in them.
	raw   []byte
	body  string
	index map[string][2]int
	// mu guards seen and changed: a listing reads its files in
	// parallel (forEach).
	mu      sync.Mutex
	seen    map[string]listCacheEntry
	changed bool
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// listCachePath is the cache file of harness's sessions under root, in
// dir.
func listCachePath(dir, harness, root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dir, harness+"-"+hex.EncodeToString(sum[:10])+".list")
}

// openListCache reads the list cache of harness's sessions under root,
// kept in dir; dir "" keeps none (nil, on which every method is a no-op).
func openListCache(dir, harness, root string) *listCache {
	if dir == "" {
		return nil
	}
	c := &listCache{path: listCachePath(dir, harness, root), start: listCacheNow(), seen: map[string]listCacheEntry{}}
	f, fi, err := regularfile.OpenRaw(c.path)
	if err != nil {
		// The JSON an xdev before format 2 kept, never read again.
		os.Remove(c.path + ".json")
		return c
	}
	defer f.Close()
	if fi.Size() > listCacheMaxBytes {
		return c
	}
	b := make([]byte, fi.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		return c
	}
	c.raw, c.body, c.index = indexListCache(b, root)
	return c
}

// indexListCache checks a cache file's bytes b (whole: its checksum; of
// this format and root) and indexes its records by path; nil where not.
func indexListCache(b []byte, root string) (raw []byte, body string, index map[string][2]int) {
	if len(b) < len(listCacheMagic)+4 || string(b[:len(listCacheMagic)]) != listCacheMagic {
		return nil, "", nil
	}
	raw = b[len(listCacheMagic)+4:]
	if crc32.Checksum(raw, castagnoli) != binary.LittleEndian.Uint32(b[len(listCacheMagic):]) {
		return nil, "", nil
	}
	// Nothing writes to raw after this: the strings share its bytes.
	body = unsafe.String(unsafe.SliceData(raw), len(raw))
	r := &listCacheReader{s: body}
	if r.uvarint() != listCacheFormat || r.str() != root {
		return nil, "", nil
	}
	n := r.uvarint()
	if r.bad || n > uint64(len(r.s)) { // a record takes more than a byte
		return nil, "", nil
	}
	index = make(map[string][2]int, n)
	for range n {
		p := r.str()
		at := len(body) - len(r.s)
		r.record()
		if r.bad {
			return nil, "", nil
		}
		index[p] = [2]int{at, len(body) - len(r.s)}
	}
	if len(r.s) != 0 {
		return nil, "", nil
	}
	return raw, body, index
}

// stampOf is the stamp of fi, false where the system gives none.
func stampOf(fi fs.FileInfo) (listCacheEntry, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return listCacheEntry{}, false
	}
	return listCacheEntry{Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: st.Ino}, true
}

// get returns the facts kept for the file at path, if it is as it was.
func (c *listCache) get(path string, fi fs.FileInfo) (fileFacts, bool) {
	if c == nil {
		return fileFacts{}, false
	}
	span, ok := c.index[path]
	now, ok2 := stampOf(fi)
	if !ok || !ok2 {
		return fileFacts{}, false
	}
	r := &listCacheReader{s: c.body[span[0]:span[1]]}
	e := r.record()
	if r.bad || len(r.s) != 0 || e.Size != now.Size || e.Mtime != now.Mtime || e.Ctime != now.Ctime || e.Ino != now.Ino {
		return fileFacts{}, false
	}
	c.mu.Lock()
	c.seen[path] = e
	c.mu.Unlock()
	return e.Facts, true
}

// put keeps facts read of the file at path, unless it changed too lately
// to be sure of.
func (c *listCache) put(path string, fi fs.FileInfo, f fileFacts) {
	if c == nil {
		return
	}
	e, ok := stampOf(fi)
	if !ok || c.start.Sub(time.Unix(0, max(e.Mtime, e.Ctime))) < racyWindow {
		return
	}
	e.Facts = f
	c.mu.Lock()
	c.seen[path] = e
	c.changed = true
	c.mu.Unlock()
}

// save writes the entries of this listing, when they differ from what
// was read: new files, changed ones, files gone. Of the entries this
// listing did not see, those keep says it did not look for (another
// project's, say) are kept, as their bytes; the others' files are gone.
func (c *listCache) save(root string, keep func(path string) bool) {
	if c == nil {
		return
	}
	var kept []string
	for p := range c.index {
		if _, ok := c.seen[p]; !ok && keep(p) {
			kept = append(kept, p)
		}
	}
	if !c.changed && len(c.seen)+len(kept) == len(c.index) {
		return
	}
	if os.MkdirAll(filepath.Dir(c.path), 0o700) != nil {
		return
	}
	paths := append(slices.Collect(maps.Keys(c.seen)), kept...)
	slices.Sort(paths)
	b := make([]byte, 0, 64+len(c.raw)+300*len(c.seen))
	b = append(b, listCacheMagic...)
	b = append(b, 0, 0, 0, 0)
	at := len(b)
	b = binary.AppendUvarint(b, listCacheFormat)
	b = appendListString(b, root)
	b = binary.AppendUvarint(b, uint64(len(paths)))
	for _, p := range paths {
		b = appendListString(b, p)
		if e, ok := c.seen[p]; ok {
			b = appendListRecord(b, &e)
		} else {
			span := c.index[p]
			b = append(b, c.raw[span[0]:span[1]]...)
		}
	}
	binary.LittleEndian.PutUint32(b[at-4:], crc32.Checksum(b[at:], castagnoli))
	// A cache: a failed write costs the next listing its reads, nothing more.
	atomicfile.ReplaceCache(c.path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// appendListRecord appends e's record (the file's comment says what).
func appendListRecord(b []byte, e *listCacheEntry) []byte {
	b = binary.AppendVarint(b, e.Size)
	b = binary.AppendVarint(b, e.Mtime)
	b = binary.AppendVarint(b, e.Ctime)
	b = binary.AppendUvarint(b, e.Ino)
	f := &e.Facts
	var flags byte
	if f.Listed {
		flags |= 1
	}
	if f.Subagent {
		flags |= 2
	}
	b = append(b, flags)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f.Created))
	for _, s := range [listCacheStrings]string{f.ID, f.Cwd, f.First, f.Summary, f.Custom, f.AI, f.Err, f.Parent} {
		b = appendListString(b, s)
	}
	return b
}

// listCacheStrings is how many strings a record holds.
const listCacheStrings = 8

func appendListString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// listCacheReader reads a cache file's fields from s; its strings are
// substrings of s. Its first failure sticks.
type listCacheReader struct {
	s   string
	bad bool
}

func (r *listCacheReader) fail() { r.s, r.bad = "", true }

func (r *listCacheReader) uvarint() uint64 {
	v, n := binary.Uvarint(unsafe.Slice(unsafe.StringData(r.s), len(r.s)))
	if n <= 0 {
		r.fail()
		return 0
	}
	r.s = r.s[n:]
	return v
}

func (r *listCacheReader) varint() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (r *listCacheReader) str() string {
	n := r.uvarint()
	if n > uint64(len(r.s)) {
		r.fail()
		return ""
	}
	s := r.s[:n]
	r.s = r.s[n:]
	return s
}

// record reads what appendListRecord wrote.
func (r *listCacheReader) record() listCacheEntry {
	e := listCacheEntry{Size: r.varint(), Mtime: r.varint(), Ctime: r.varint(), Ino: r.uvarint()}
	if len(r.s) < 9 {
		r.fail()
		return e
	}
	flags := r.s[0]
	f := &e.Facts
	f.Listed, f.Subagent = flags&1 != 0, flags&2 != 0
	f.Created = math.Float64frombits(binary.LittleEndian.Uint64([]byte(r.s[1:9])))
	r.s = r.s[9:]
	f.ID, f.Cwd, f.First, f.Summary, f.Custom, f.AI, f.Err, f.Parent = r.str(), r.str(), r.str(), r.str(), r.str(), r.str(), r.str(), r.str()
	return e
}
