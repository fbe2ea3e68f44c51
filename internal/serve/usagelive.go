package serve

import (
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/live"
)

// usageLive is how the server vouches for its usage cache to `xdev
// usage` in a terminal (internal/live, as for the indexes): while the
// marker says clean, the cache holds every session of every place as it
// is now (the ledger is built with catalog.UsageOptions.Vouching), and a
// ledger of the same places takes its sessions from it with no walk.
//
// Every change the watcher sees makes it dirty (gen counts them); a
// rebuild that began after the last of them and read every harness
// makes it clean. A request that finds it dirty is answered after a
// rebuild begun after the request came (the views loop builds at once
// for it, whatever its pace), so that the answer covers every change
// made before the request.
type usageLive struct {
	mu     sync.Mutex
	marker *live.Marker // nil: none held (no cache, or another server holds it)
	gen    uint64       // the changes seen
	last   time.Time    // when the latest was seen
	clean  bool
	// unwatch: a place is not watched whole, and the server vouches for
	// nothing.
	unwatch bool
	asks    []string // the requests waiting for a rebuild
	// paths are the files changed since the last rebuild began, by
	// harness, for a ledger of them alone (catalog.UsageOptions.Changed);
	// told is false where a change was not told by its path (or there
	// was no ledger yet, or the last one failed): then the next walks.
	paths map[catalog.Harness]*pending
	told  bool
}

// hold takes the marker of the usage cache of every harness under dir.
func (u *usageLive) hold(c *catalog.Catalog, dir string, logf func(string, ...any)) {
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		logf("usage cache: %v", err)
		return
	}
	m, err := live.Hold(live.MarkerPath(c.UsageCacheFile(dir, catalog.Every)))
	if err != nil {
		logf("usage cache: %v", err)
		return
	}
	u.mu.Lock()
	u.marker = m
	u.mu.Unlock()
}

// markerPath is the held marker's path, "" for none.
func (u *usageLive) markerPath() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.marker == nil {
		return ""
	}
	return u.marker.Path()
}

// syncDir is the directory of the held marker's requests, "" for none.
func (u *usageLive) syncDir() string {
	if p := u.markerPath(); p != "" {
		return live.SyncDir(filepath.Dir(p))
	}
	return ""
}

// changed is told of every change seen under the places: of the file
// at path in harness h's place, "" where the change was not told by a
// path (a directory made, the watcher's queue overflowed).
func (u *usageLive) changed(h catalog.Harness, path string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if path == "" {
		u.told = false
	} else if u.told {
		p := u.paths[h]
		if p == nil {
			p = &pending{}
			u.paths[h] = p
		}
		if p.add(path); p.whole {
			u.told = false
		}
	}
	u.gen++
	u.last = time.Now()
	if u.clean {
		u.clean = false
		u.marker.Dirty()
	}
}

// unwatched says a place is not watched whole: the server vouches for
// nothing, ever (a marker once unwatched stays so).
func (u *usageLive) unwatched() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.unwatch, u.clean = true, false
	if u.marker != nil {
		u.marker.Unwatched()
	}
}

// starting is told as a rebuild begins: it returns the changes seen so
// far, the requests the rebuild answers, and the files changed since the
// last rebuild began, by harness (nil where not known: every place is
// walked).
func (u *usageLive) starting() (gen uint64, asks []string, changed map[catalog.Harness][]string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	asks, u.asks = u.asks, nil
	if u.told && !u.unwatch {
		changed = make(map[catalog.Harness][]string, len(u.paths))
		for h, p := range u.paths {
			changed[h] = p.list()
		}
	}
	// The changes seen from now on are the next rebuild's, told by
	// their paths until one is not.
	u.paths, u.told = map[catalog.Harness]*pending{}, true
	return u.gen, asks, changed
}

// built is told as a rebuild that began at gen ends, ok when it read
// every harness: it marks the cache clean when nothing changed since it
// began, and answers the requests it was begun for. After one that
// failed, the next walks: the changes it was told of are in no ledger.
func (u *usageLive) built(gen uint64, ok bool, asks []string) {
	u.mu.Lock()
	if !ok {
		u.told = false
	}
	if ok && gen == u.gen && !u.unwatch && u.marker != nil {
		u.clean = u.marker.Clean() == nil
	}
	u.mu.Unlock()
	for _, a := range asks {
		live.Answer(a, ok)
	}
}

// ask takes a request: answered at once when the cache is clean, else
// after the next rebuild (true: one is to be begun).
func (u *usageLive) ask(req string) (rebuild bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.clean || u.unwatch {
		live.Answer(req, u.clean)
		return false
	}
	u.asks = append(u.asks, req)
	return true
}

// quiet reports whether nothing changed since gen.
func (u *usageLive) quiet(gen uint64) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.gen == gen
}

// unsettled is how long until the latest change seen is settled: until
// a ledger would trust the file it changed to its stamp
// (usagecache.Stamp.Fresh, settledAfter); 0 or less when it is.
func (u *usageLive) unsettled() time.Duration {
	u.mu.Lock()
	defer u.mu.Unlock()
	return time.Until(u.last.Add(settledAfter))
}

// waiting reports whether requests wait for a rebuild.
func (u *usageLive) waiting() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.asks) > 0
}

// close answers the waiting requests no, and drops the marker.
func (u *usageLive) close() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, a := range u.asks {
		live.Answer(a, false)
	}
	u.asks = nil
	if u.marker != nil {
		u.marker.Close()
		u.marker = nil
	}
	u.clean = false
}
