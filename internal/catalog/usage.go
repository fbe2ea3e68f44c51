package catalog

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/xdev/xdev/internal/foreign"
	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/usage"
)

// UsageOptions choose what a usage ledger holds.
type UsageOptions struct {
	// Harnesses are the places read: Xdev and Omp name the data dirs
	// (the catalog's, and the other's default one), the rest the other
	// harnesses' roots.
	Harnesses []Harness
	// Cwd keeps only the sessions of this project ("" for all).
	Cwd string
	// Cache is the usage cache's directory (UsageCacheDir), "" for none.
	Cache string
}

// UsageStats say what building a ledger read.
type UsageStats struct {
	Sessions int // sessions in the ledger
	Read     int // of them read from their files (the rest from the cache)
	Skipped  int // lines and records that could not be read, over all
	// Failed are the harnesses that could not be listed or read, and why.
	Failed map[Harness]error
}

// UsageCacheDir is where usage ledgers keep what they read of each file
// (os.UserCacheDir()/xdev/usage), or "".
func UsageCacheDir() string { return cacheDir("usage") }

// Usage builds the usage ledger of the sessions in opts' places, every
// session and subagent's transcript of each (usage.Ledger counts each call
// once along the session tree). A file whose size, inode and mtime are
// those the cache holds for it is not read again: the ledger takes its
// digest, and its calls only where one of them may be counted elsewhere.
// A harness that cannot be listed is left out and named in the stats'
// Failed; a session that cannot be read is left out and counted in
// Skipped.
func (c *Catalog) Usage(ctx context.Context, opts UsageOptions) (*usage.Ledger, UsageStats, error) {
	st := UsageStats{Failed: map[Harness]error{}}
	cache := openUsageCache(opts.Cache, c.usageCacheName(opts.Harnesses)+"\x00"+usage.PricesVersion())
	var jobs []usageJob
	for _, h := range opts.Harnesses {
		js, err := c.usageJobs(h)
		if err != nil {
			st.Failed[h] = err
			continue
		}
		jobs = append(jobs, js...)
	}
	if err := ctx.Err(); err != nil {
		return nil, st, err
	}
	type result struct {
		s      *usage.Session
		cached decodedSession
		shared bool
		read   bool
	}
	out := make([]result, len(jobs))
	var wg sync.WaitGroup
	ch := make(chan int)
	var mu sync.Mutex
	for range min(len(jobs), runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for k := range ch {
				j := jobs[k]
				stamp, ok := j.stamp()
				key := j.key
				if !ok {
					key = "" // never cached
				}
				if d, shared, ok := cache.get(key, stamp); ok {
					out[k] = result{s: d.s, cached: d, shared: shared}
					continue
				}
				s, err := j.read()
				if err != nil {
					mu.Lock()
					st.Skipped++
					mu.Unlock()
					continue
				}
				cache.put(key, stamp, &s, usage.DigestSession(&s, usage.Prices()))
				out[k] = result{s: &s, read: true}
			}
		})
	}
	for k := range jobs {
		if ctx.Err() != nil {
			break
		}
		ch <- k
	}
	close(ch)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, st, err
	}
	l := &usage.Ledger{}
	byOwner := map[uint64]*usage.Session{}
	for k, r := range out {
		s := r.s
		if s == nil || opts.Cwd != "" && !sameDir(s.Project, opts.Cwd) {
			continue
		}
		st.Sessions++
		st.Skipped += s.Skipped
		if r.read {
			st.Read++
			l.Add(s)
			continue
		}
		d := r.cached
		l.AddDigest(s, d.digest, func() ([]usage.Call, error) {
			calls, ok := d.decodeCalls()
			if !ok {
				return nil, fmt.Errorf("%s: the usage cache's calls do not read", s.Path)
			}
			return calls, nil
		})
		if r.shared {
			l.Involve(s)
		}
		byOwner[ownerOf(jobs[k].key)] = s
	}
	// A session read anew may hold another's requests (a resumed Claude
	// Code session, copied lines and all): those sessions are counted
	// call by call too.
	for _, r := range out {
		if !r.read || r.s == nil {
			continue
		}
		for _, call := range r.s.Calls {
			if call.Request == 0 {
				continue
			}
			for _, o := range cache.sharers(call.Request) {
				if s := byOwner[o]; s != nil {
					l.Involve(s)
				}
			}
		}
	}
	cache.save()
	return l, st, nil
}

// A usageJob is one session to read into a ledger: its cache key, the
// file whose stamp it is cached by (and the database's write-ahead log
// too, for opencode's), and how to read it.
type usageJob struct {
	key, file string
	wal       bool
	read      func() (usage.Session, error)
}

// stamp is the job's file's stamp; ok is false for a file that cannot be
// stat'ed, which is read every time.
func (j usageJob) stamp() (usageStamp, bool) {
	st, ok := statStamp(j.file)
	if ok && j.wal {
		wal, _ := statStamp(j.file + "-wal")
		st.Size, st.ModTime = st.Size^wal.Size<<32, st.ModTime^wal.ModTime
	}
	return st, ok
}

// usageJobs are the sessions of harness h's place.
func (c *Catalog) usageJobs(h Harness) ([]usageJob, error) {
	switch h {
	case Xdev, Omp:
		dir := c.cfg.DataDir
		if h != c.cfg.DataDirHarness || c.cfg.DataDir == "" {
			if dir = c.otherDataDir(h); dir == "" {
				return nil, nil
			}
		}
		files, err := session.Files(dir)
		if err != nil {
			return nil, err
		}
		jobs := make([]usageJob, 0, len(files))
		for _, f := range files {
			jobs = append(jobs, usageJob{key: string(h) + " " + f.Path, file: f.Path,
				read: func() (usage.Session, error) {
					s, err := usage.ReadSession(f.Path)
					s.Harness = string(h)
					return s, err
				}})
		}
		return jobs, nil
	}
	src := c.sources[h]
	if src == nil {
		return nil, nil
	}
	list, err := foreign.UsageSessions(src)
	if err != nil {
		return nil, err
	}
	jobs := make([]usageJob, 0, len(list))
	for _, s := range list {
		if s.Err != nil {
			continue
		}
		file := s.Path
		if h == Opencode {
			// One database holds every session: its own stamp, and the
			// write-ahead log's, are each session's.
			if db, ok := foreign.OpencodeDatabase(s.Path); ok {
				file = db
			}
		}
		jobs = append(jobs, usageJob{key: string(h) + " " + s.Path, file: file, wal: h == Opencode,
			read: func() (usage.Session, error) { return foreign.Usage(src, s) }})
	}
	return jobs, nil
}

// usageCacheName names the cache file of a ledger of these places: the
// places and their roots, so that two data dirs never share one.
func (c *Catalog) usageCacheName(hs []Harness) string {
	name := c.cfg.DataDir
	for _, h := range hs {
		name += "\x00" + string(h)
		if src := c.sources[h]; src != nil {
			name += "=" + src.Root()
		}
	}
	return name
}

// usageStamp is what says a file is as it was: a file whose size, inode
// and mtime are those it had when it was read is not read again.
type usageStamp struct {
	Size, ModTime int64
	Ino           uint64
}

func statStamp(path string) (usageStamp, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return usageStamp{}, false
	}
	st := usageStamp{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.Ino = sys.Ino
	}
	return st, true
}

// fresh reports whether a file of this stamp may have changed again in
// the same clock tick as it was read: one changed within the last second
// is read again next time, never trusted from the cache.
func (s usageStamp) fresh(now time.Time) bool {
	return now.UnixNano()-s.ModTime < int64(time.Second)
}
