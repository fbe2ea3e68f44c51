package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/secrets"
)

// secretsCache keeps what Secrets found in each session, by the session's
// stamp, in one file under the cache dir (secrets/found.json, 0600): the
// kinds, masks, fingerprints and places, never a value, so that the cache
// is no copy of what it protects. A session whose stamp is as cached is
// not opened. A file that is torn, damaged, of another format or of other
// rules (secrets.Version) is ignored and written again; a session changed
// within racyWindow of the scan is read again next time too, since its
// stamp may not yet show a change made in the same instant. Entries of
// sessions no longer listed are dropped when a scan of every session
// writes the file, which is only when something changed.
type secretsCache struct {
	path    string
	started time.Time

	mu    sync.Mutex
	file  secretsFile
	seen  map[string]bool
	dirty bool
}

// secretsFile is the cache file's JSON.
type secretsFile struct {
	Format   int                      `json:"format"`
	Rules    string                   `json:"rules"`
	Sessions map[string]*secretsEntry `json:"sessions"`
}

// secretsFormat is the version of secretsFile (2: sessions keyed by a
// digest, paths shown masked).
const secretsFormat = 2

// racyWindow is how recent a session's change may be for its findings to
// be kept: within it, a later write may leave the stamp as it is.
const racyWindow = 2 * time.Second

// secretsEntry is one session's findings, by its stamp.
type secretsEntry struct {
	Stamp sessionStamp   `json:"stamp"`
	Shown string         `json:"shown"`
	Found []cachedSecret `json:"found,omitempty"`
}

// sessionStamp tells a session changed: its file's size, modification
// time and inode, or for a session that is no file of its own (a
// database's row) the listing's size and time.
type sessionStamp struct {
	Size int64  `json:"size"`
	Mod  int64  `json:"mod"`
	Ino  uint64 `json:"ino,omitempty"`
}

// cachedSecret is a Secret without what its session says.
type cachedSecret struct {
	Entry       string `json:"entry"`
	Line        int    `json:"line,omitempty"`
	TS          int64  `json:"ts,omitempty"` // Unix ms
	Kind        string `json:"kind"`
	Masked      string `json:"masked"`
	Fingerprint string `json:"fp"`
}

// secretsCachePath is the cache's file, "" where there is no cache dir.
func secretsCachePath() string {
	dir := cacheDir("secrets")
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "found.json")
}

// openSecretsCache reads the cache at path ("" for none kept).
func openSecretsCache(path string) *secretsCache {
	c := &secretsCache{path: path, started: time.Now(), seen: map[string]bool{}}
	c.file = secretsFile{Format: secretsFormat, Rules: secrets.Version(), Sessions: map[string]*secretsEntry{}}
	if path == "" {
		return c
	}
	f, _, err := regularfile.Open(path, 0)
	if err != nil {
		return c
	}
	defer f.Close()
	var got secretsFile
	if err := json.NewDecoder(io.LimitReader(f, 1<<30)).Decode(&got); err != nil ||
		got.Format != secretsFormat || got.Rules != c.file.Rules || got.Sessions == nil {
		c.dirty = true // torn, damaged or outdated: written again
		return c
	}
	c.file = got
	return c
}

// stampOf is row's stamp.
func stampOf(row Row) sessionStamp {
	if fi, err := os.Stat(row.Path); err == nil && fi.Mode().IsRegular() {
		st := sessionStamp{Size: fi.Size(), Mod: fi.ModTime().UnixNano()}
		if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
			st.Ino = uint64(sys.Ino)
		}
		return st
	}
	return sessionStamp{Size: row.Size, Mod: row.Modified.UnixNano()}
}

// key names row's session in the cache: a digest of its harness, path
// and id, so that the file holds no path (one may hold a key).
func secretsKey(row Row) string {
	sum := sha256.Sum256([]byte(string(row.Harness) + "\x00" + row.Path + "\x00" + row.ID))
	return hex.EncodeToString(sum[:16])
}

// get returns row's cached entry when its stamp is st.
func (c *secretsCache) get(key string, st sessionStamp) (*secretsEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen[key] = true
	e, ok := c.file.Sessions[key]
	return e, ok && e.Stamp == st
}

// put keeps what was found in a session read anew, unless it changed
// too recently to be sure of.
func (c *secretsCache) put(key string, e *secretsEntry) {
	if c.started.Sub(time.Unix(0, e.Stamp.Mod)) < racyWindow {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.file.Sessions[key] = e
	c.dirty = true
}

// save writes the cache if anything changed; whole says the scan listed
// every session, so the others are gone.
func (c *secretsCache) save(whole bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if whole {
		for k := range c.file.Sessions {
			if !c.seen[k] {
				delete(c.file.Sessions, k)
				c.dirty = true
			}
		}
	}
	if c.path == "" || !c.dirty {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return err
	}
	return atomicfile.ReplaceCache(c.path, func(w io.Writer) error {
		return json.NewEncoder(w).Encode(&c.file)
	})
}
