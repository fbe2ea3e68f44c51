package foreign

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"

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
// named by a hash of the root; a file that does not decode, or of
// another format, is an empty cache, and is replaced.
const listCacheFormat = 1

// listCacheNow is when a listing begins (a variable for the tests, which
// list files they have only just written as if they were older).
var listCacheNow = time.Now

// listCacheMaxBytes bounds the cache file a listing reads.
const listCacheMaxBytes = 64 << 20

// fileFacts is what a listing reads of one transcript's own bytes. Each
// harness uses the fields it has.
type fileFacts struct {
	Listed   bool    `json:"listed,omitzero"` // the file is one of the harness's sessions (Codex: a session_meta naming a cwd)
	ID       string  `json:"id,omitempty"`
	Cwd      string  `json:"cwd,omitempty"`
	First    string  `json:"first,omitempty"`
	Summary  string  `json:"summary,omitempty"`
	Custom   string  `json:"custom,omitempty"`
	AI       string  `json:"ai,omitempty"`
	Err      string  `json:"err,omitempty"` // not the harness's format: what the listing says
	Parent   string  `json:"parent,omitempty"`
	Subagent bool    `json:"subagent,omitzero"`
	Created  float64 `json:"created,omitzero"`
}

// listCacheEntry is one file's facts and the stamp they are true of.
type listCacheEntry struct {
	Size  int64     `json:"size"`
	Mtime int64     `json:"mtimeNs"`
	Ctime int64     `json:"ctimeNs"`
	Ino   uint64    `json:"ino"`
	Facts fileFacts `json:"facts"`
}

type listCacheFile struct {
	Format  int                       `json:"format"`
	Root    string                    `json:"root"`
	Entries map[string]listCacheEntry `json:"entries"`
}

// listCache is a cache file as read and the entries of this listing.
type listCache struct {
	path    string
	start   time.Time
	old     map[string]listCacheEntry
	seen    map[string]listCacheEntry
	changed bool
}

// openListCache reads the list cache of harness's sessions under root,
// kept in dir; dir "" keeps none (nil, on which every method is a no-op).
func openListCache(dir, harness, root string) *listCache {
	if dir == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(root))
	c := &listCache{path: filepath.Join(dir, harness+"-"+hex.EncodeToString(sum[:10])+".list.json"), start: listCacheNow(),
		seen: map[string]listCacheEntry{}}
	f, fi, err := regularfile.OpenRaw(c.path)
	if err != nil {
		return c
	}
	defer f.Close()
	if fi.Size() > listCacheMaxBytes {
		return c
	}
	var file listCacheFile
	b := make([]byte, fi.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		return c
	}
	if json.Unmarshal(b, &file) == nil && file.Format == listCacheFormat && file.Root == root {
		c.old = file.Entries
	}
	return c
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
	e, ok := c.old[path]
	now, ok2 := stampOf(fi)
	if !ok || !ok2 || e.Size != now.Size || e.Mtime != now.Mtime || e.Ctime != now.Ctime || e.Ino != now.Ino {
		return fileFacts{}, false
	}
	c.seen[path] = e
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
	c.seen[path] = e
	c.changed = true
}

// save writes the entries of this listing, when they differ from what
// was read: new files, changed ones, files gone. Of the entries this
// listing did not see, those keep says it did not look for (another
// project's, say) are kept; the others' files are gone.
func (c *listCache) save(root string, keep func(path string) bool) {
	if c == nil {
		return
	}
	for p, e := range c.old {
		if _, ok := c.seen[p]; !ok && keep(p) {
			c.seen[p] = e
		}
	}
	if !c.changed && len(c.seen) == len(c.old) {
		return
	}
	if os.MkdirAll(filepath.Dir(c.path), 0o700) != nil {
		return
	}
	// A cache: a failed write costs the next listing its reads, nothing more.
	atomicfile.ReplaceCache(c.path, func(w io.Writer) error {
		return json.MarshalWrite(w, listCacheFile{Format: listCacheFormat, Root: root, Entries: c.seen}, json.Deterministic(true))
	})
}
