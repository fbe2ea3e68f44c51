package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"encoding/hex"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/usage"
)

// A usageCache keeps what a ledger read of each session file, by the
// file's stamp, in one file per set of places under the cache dir:
// a magic, the CRC-32 of the rest, and the entries in gob. A file that is
// torn, damaged or of another version is ignored and written again; an
// entry whose file changed, or changed too recently to be sure of
// (usageStamp.fresh), is read again. Entries of files no longer there
// are dropped when the cache is written.
type usageCache struct {
	path    string
	mu      sync.Mutex
	old     map[string]usageCacheEntry
	now     map[string]usageCacheEntry
	changed bool
	started time.Time
}

type usageCacheEntry struct {
	Stamp   usageStamp
	Session *usage.Session
}

const usageCacheMagic = "xdev usage cache 1\n"

// maxUsageCache bounds the cache file read: past it, it is rebuilt.
const maxUsageCache = 1 << 30

func openUsageCache(dir, name string) *usageCache {
	c := &usageCache{now: map[string]usageCacheEntry{}, started: time.Now()}
	if dir == "" {
		return c
	}
	sum := sha256.Sum256([]byte(name))
	c.path = filepath.Join(dir, hex.EncodeToString(sum[:12]))
	f, _, err := regularfile.Open(c.path, 0)
	if err != nil {
		return c
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxUsageCache))
	if err != nil || len(b) < len(usageCacheMagic)+4 || string(b[:len(usageCacheMagic)]) != usageCacheMagic {
		return c
	}
	b = b[len(usageCacheMagic):]
	if crc32.ChecksumIEEE(b[4:]) != binary.LittleEndian.Uint32(b) {
		return c
	}
	var m map[string]usageCacheEntry
	if gob.NewDecoder(bytes.NewReader(b[4:])).Decode(&m) == nil {
		c.old = m
	}
	return c
}

// get is the session the cache holds for key at stamp.
func (c *usageCache) get(key string, stamp usageStamp) (*usage.Session, bool) {
	if key == "" {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.old[key]
	if !ok || e.Stamp != stamp || e.Session == nil || stamp.fresh(c.started) {
		c.changed = true
		return nil, false
	}
	c.now[key] = e
	return e.Session, true
}

// put keeps what was read of key at stamp.
func (c *usageCache) put(key string, stamp usageStamp, s *usage.Session) {
	if key == "" || stamp.fresh(c.started) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now[key] = usageCacheEntry{stamp, s}
	c.changed = true
}

// save writes the cache, if anything in it changed; a cache that cannot
// be written is no error (the next ledger reads the files again).
func (c *usageCache) save() {
	if c.path == "" || !c.changed && len(c.now) == len(c.old) {
		return
	}
	var buf bytes.Buffer
	if gob.NewEncoder(&buf).Encode(c.now) != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return
	}
	atomicfile.ReplaceCache(c.path, func(w io.Writer) error {
		var head [4]byte
		binary.LittleEndian.PutUint32(head[:], crc32.ChecksumIEEE(buf.Bytes()))
		if _, err := io.WriteString(w, usageCacheMagic); err != nil {
			return err
		}
		if _, err := w.Write(head[:]); err != nil {
			return err
		}
		_, err := w.Write(buf.Bytes())
		return err
	})
}
