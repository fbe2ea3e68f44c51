package foreign

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/session"
)

// An imports cache is what Imported found in each file of a data dir:
// the provenance entries of each (none, for most), with the stat it was
// read at. The next check stats the files and reads only those whose
// stat changed, so an import into a data dir of 10,000 sessions costs
// their stats, not a read of all their bytes.
//
// An entry is trusted only for its file unchanged: the same path, size,
// inode and modification time; a file changed within racyWindow before
// it was read is not kept (a second change in the same tick of the clock
// would look like none), nor one that could not be read. The cache is
// one JSON file per data dir, named by a hash of its path, written whole
// (atomicfile.ReplaceCache); one that does not decode, or is of another
// format or data dir, is ignored and replaced.
type importsCache struct {
	path    string                       // "" when there is no cache
	Format  int                          `json:"format"`
	DataDir string                       `json:"data_dir"`
	Files   map[string]importsCacheEntry `json:"files"`
	next    map[string]importsCacheEntry // what this check saw
	changed bool
	start   time.Time
}

type importsCacheEntry struct {
	Size    int64        `json:"size"`
	ModTime int64        `json:"mtime"`
	Ino     uint64       `json:"ino"`
	Imports []Provenance `json:"imports,omitempty"`
}

const importsCacheFormat = 1

// importsCacheMaxBytes bounds the cache file read (about 100 bytes a
// session): past it, the files are read as if there were none.
const importsCacheMaxBytes = 64 << 20

// racyWindow is how recently before a check a file may have changed and
// still have its entry kept.
const racyWindow = time.Second

// readImportsCache reads dataDir's imports cache in dir ("" for none).
func readImportsCache(dir, dataDir string) *importsCache {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		abs = dataDir
	}
	c := &importsCache{DataDir: abs, next: map[string]importsCacheEntry{}, start: time.Now()}
	if dir == "" {
		return c
	}
	sum := sha256.Sum256([]byte(abs))
	c.path = filepath.Join(dir, hex.EncodeToString(sum[:12])+".imports")
	f, fi, err := regularfile.Open(c.path, 0)
	if err != nil {
		return c
	}
	defer f.Close()
	var read importsCache
	if fi.Size() <= importsCacheMaxBytes && json.NewDecoder(io.LimitReader(f, importsCacheMaxBytes)).Decode(&read) == nil &&
		read.Format == importsCacheFormat && read.DataDir == abs {
		c.Files = read.Files
	}
	return c
}

// lookup returns what f held when it had the stat it has, if known.
func (c *importsCache) lookup(f session.SessionFile) ([]Provenance, bool) {
	e, ok := c.Files[f.Path]
	if !ok || e.Size != f.Size || e.ModTime != f.ModTime.UnixNano() || e.Ino != f.Ino {
		c.changed = true
		return nil, false
	}
	c.next[f.Path] = e
	return e.Imports, true
}

// add keeps what f holds, unless it changed too recently to trust.
func (c *importsCache) add(f session.SessionFile, imports []Provenance) {
	if c.start.Sub(f.ModTime) < racyWindow {
		return
	}
	c.next[f.Path] = importsCacheEntry{Size: f.Size, ModTime: f.ModTime.UnixNano(), Ino: f.Ino, Imports: imports}
}

// write keeps what this check saw, when it differs from what was read.
// A cache is only a saving: failing to write one is no error.
func (c *importsCache) write() {
	if c.path == "" || !c.changed && len(c.next) == len(c.Files) {
		return
	}
	if os.MkdirAll(filepath.Dir(c.path), 0o700) != nil {
		return
	}
	c.Format, c.Files = importsCacheFormat, c.next
	atomicfile.ReplaceCache(c.path, func(w io.Writer) error { return json.NewEncoder(w).Encode(c) })
}
