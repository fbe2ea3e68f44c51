package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/xdev/xdev/internal/foreign"
	"github.com/xdev/xdev/internal/live"
	"github.com/xdev/xdev/internal/usage"
	"github.com/xdev/xdev/internal/usagecache"
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
	// ModifiedSince, when set, leaves out the sessions whose files were
	// last written before it, which hold no call made since then (a
	// file's calls are written as they are made), unless one of those
	// kept descends from it, was imported from it or holds one of its
	// requests: what a report of a recent span (a status line, --since)
	// needs, without reading every session's digest.
	ModifiedSince time.Time
	// Vouching is a running xdev serve's ledger, which vouches for the
	// cache to other processes (internal/live): the cache is written
	// whenever anything in it changed, and it holds every session read,
	// those written too recently to be trusted by their stamp too (marked
	// to be read again), so that a reader the server vouches to finds
	// every session there. No server is asked.
	Vouching bool
	// NoLive walks the places even when a server vouches for the cache.
	NoLive bool
	// Changed, with Vouching, are the files that changed in each place
	// since the ledger this process last vouched for (a watcher's paths,
	// by harness; a harness not named changed in none): only they are
	// stat'ed and read, where the groups it kept may take them
	// (usagechanged.go). nil where that is not known: the places are
	// walked.
	Changed map[Harness][]string
}

// UsageStats say what building a ledger read.
type UsageStats struct {
	Sessions int // sessions in the ledger
	Read     int // of them read from their files (the rest from the cache)
	Skipped  int // lines and records that could not be read, over all
	// Live is whether the sessions were taken from a cache that a running
	// xdev serve vouched for, with no walk of the places it keeps (those
	// of its sessions written a moment ago are read, with their
	// harness's).
	Live bool
	// Walked are the harnesses whose places were walked: every one read,
	// but where Live.
	Walked []Harness
	// Racy is how many sessions were written too recently to be trusted
	// to the cache by their stamp (kept, to be read again, by Vouching).
	Racy int
	// Failed are the harnesses that could not be listed or read, and why.
	Failed map[Harness]error
	// Unread is why the calls of sessions the ledger holds could not be
	// read again, which its groups leave out (UsageGroups).
	Unread error
	// Counted is whether the groups were those a ledger of the same
	// places counted before (UsageGroups), no ledger built.
	Counted bool
	// Recounted is how many sessions were counted again into the groups
	// a ledger of the same places counted before, where they alone
	// changed since (UsageGroups), no ledger built.
	Recounted int
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
	path := c.UsageCacheFile(opts.Cache, opts.Harnesses)
	// Asked before the cache is read: the server writes it before it
	// answers.
	st.Live = path != "" && !opts.Vouching && !opts.NoLive && live.Fresh(live.MarkerPath(path), liveWait)
	l, _, err := c.ledger(ctx, opts, path, &st, nil, false)
	return l, st, err
}

// ledger builds Usage's ledger from the usage cache at path: of the
// jobs walked, where walked; else of the cache's sessions with no walk
// where st.Live, of a walk of every place where not. It returns what it
// read of the jobs too (ledgerOf).
func (c *Catalog) ledger(ctx context.Context, opts UsageOptions, path string, st *UsageStats, jobs []usageJob, walked bool) (*usage.Ledger, ledgerRead, error) {
	cache := usagecache.Open(path)
	cache.Whole = opts.Vouching
	if !walked {
		walk := opts.Harnesses
		if st.Live {
			jobs, walk = vouchedJobs(cache, opts.Harnesses)
		}
		jobs = append(jobs, c.walkUsage(ctx, walk, st)...)
	}
	if err := ctx.Err(); err != nil {
		return nil, ledgerRead{}, err
	}
	return ledgerOf(ctx, jobs, cache, opts, st)
}

// ledgerRead is what a ledger read of its jobs, which the ledger files
// kept beside its groups say (writeLedgerFiles): each job's session (nil
// for none: not read, or left out), and the keys of their calls.
type ledgerRead struct {
	byJob []*usage.Session
	// requests are the keys of the calls of the sessions, and of some
	// more (usagecache.Cache.Requests): asked for only where the ledger
	// files are written.
	requests func() usagecache.KeySet
}

// walkUsage lists the jobs of the places hs, counting them in st as
// walked (and those that fail as failed).
//
// The places are walked at once, each on its own: most of a walk is
// waiting on the file system, a directory at a time.
func (c *Catalog) walkUsage(ctx context.Context, hs []Harness, st *UsageStats) []usageJob {
	st.Walked = append(st.Walked, hs...)
	per := make([][]usageJob, len(hs))
	errs := make([]error, len(hs))
	var wg sync.WaitGroup
	for k, h := range hs {
		wg.Go(func() {
			if ctx.Err() == nil {
				per[k], errs[k] = c.Place(h).usageJobs(ctx)
			}
		})
	}
	wg.Wait()
	n := 0
	for _, js := range per {
		n += len(js)
	}
	jobs := make([]usageJob, 0, n)
	for k, h := range hs {
		if errs[k] != nil {
			st.Failed[h] = errs[k]
			continue
		}
		jobs = append(jobs, per[k]...)
	}
	return jobs
}

// ledgerOf reads the sessions of jobs into a ledger: each from cache
// where its file is as it was, only those opts asks for (and those they
// need), counted in st. The rules of Usage, whatever the places. It
// returns what it read of the jobs too.
func ledgerOf(ctx context.Context, jobs []usageJob, cache *usagecache.Cache, opts UsageOptions, st *UsageStats) (*usage.Ledger, ledgerRead, error) {
	type result struct {
		s      *usage.Session
		cached usagecache.Decoded
		shared bool
		read   bool
		done   bool
		// A session read anew is held by its digest and record as a
		// cached one is (its calls are not kept in memory), with keys,
		// the keys of its calls, which say whom it shares calls with.
		digested bool
		keys     []uint64
	}
	out := make([]result, len(jobs))
	stamps := make([]usagecache.Stamp, len(jobs))
	keys := make([]string, len(jobs))
	var mu sync.Mutex
	// each runs fn on the jobs ks, in parallel.
	each := func(ks []int, fn func(k int)) {
		var wg sync.WaitGroup
		ch := make(chan int)
		for range min(len(ks), runtime.GOMAXPROCS(0)) {
			wg.Go(func() {
				for k := range ch {
					fn(k)
				}
			})
		}
		for _, k := range ks {
			if ctx.Err() != nil {
				break
			}
			ch <- k
		}
		close(ch)
		wg.Wait()
	}
	// process reads job k, from the cache where its file is as it was.
	process := func(k int) {
		j := jobs[k]
		if d, shared, ok := cache.Get(keys[k], stamps[k]); ok {
			out[k] = result{s: d.Session, cached: d, shared: shared, done: true}
			return
		}
		s, read, err := readJob(cache, j, keys[k], stamps[k])
		if err != nil {
			if !errors.Is(err, errNotListed) {
				mu.Lock()
				st.Skipped++
				mu.Unlock()
			}
			out[k].done = true
			return
		}
		reqs := usagecache.CallKeys(s.Calls)
		d, kept := cache.Put(keys[k], stamps[k], &s, usage.DigestSession(&s, usage.Prices()), reqs, j.file, j.readFrom != nil, read)
		r := result{s: &s, read: true, done: true, keys: reqs}
		if kept {
			r.s, r.cached, r.digested = d.Session, d, true
		}
		out[k] = r
	}
	all := make([]int, len(jobs))
	for k := range all {
		all[k] = k
	}
	var wanted []int
	since := opts.ModifiedSince.UnixNano()
	each(all, func(k int) {
		stamp, ok := jobs[k].stamp()
		stamps[k] = stamp
		if ok {
			keys[k] = jobs[k].key
		} // else never cached
		if opts.ModifiedSince.IsZero() || !ok || stamp.ModTime >= since {
			mu.Lock()
			wanted = append(wanted, k)
			mu.Unlock()
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, ledgerRead{}, err
	}
	// A session left out for its age may still be needed: the sessions
	// read descend from it, were imported from it or hold its requests.
	// Those are read too, until no more are.
	var named *jobIndex
	for len(wanted) > 0 {
		each(wanted, process)
		if err := ctx.Err(); err != nil {
			return nil, ledgerRead{}, err
		}
		if opts.ModifiedSince.IsZero() {
			break
		}
		var more []int
		need := func(name uint64) {
			if named == nil {
				named = jobNames(jobs, cache)
			}
			for _, k := range named.jobs(name) {
				if !out[k].done && !slices.Contains(more, k) {
					more = append(more, k)
				}
			}
		}
		for _, k := range wanted {
			r := out[k]
			if r.s == nil {
				continue
			}
			if r.s.Parent != "" {
				need(nameOf(r.s.Parent))
			}
			// Its subagents' and forks' sessions, which a report by
			// session counts in it or beside it.
			need(childName(r.s.ID))
			need(childName(r.s.Path))
			if r.s.ImportOf != nil && r.s.ImportOf.ID != "" {
				need(nameOf(r.s.ImportOf.ID))
			}
			ks := r.keys
			if !r.read && r.shared {
				calls, _ := r.cached.Calls()
				ks = usagecache.CallKeys(calls)
			}
			for _, key := range ks {
				for _, o := range cache.Sharers(key) {
					need(ownerName(o))
				}
			}
		}
		wanted = more
	}
	l := &usage.Ledger{}
	byJob := make([]*usage.Session, len(jobs))
	byOwner := map[uint64]*usage.Session{}
	held := map[uint64]int{} // how many sessions read anew hold a key
	var unkept []uint64      // the keys of those the cache did not take
	for _, r := range out {
		for _, key := range r.keys {
			held[key]++
		}
		if r.read && !r.digested {
			unkept = append(unkept, r.keys...)
		}
	}
	for k, r := range out {
		s := r.s
		if s == nil || opts.Cwd != "" && !sameDir(s.Project, opts.Cwd) {
			continue
		}
		st.Sessions++
		st.Skipped += s.Skipped
		byJob[k] = s
		if r.read {
			st.Read++
		}
		if r.read && !r.digested {
			l.Add(s)
			continue
		}
		if r.read {
			// Counted call by call where another session read anew, or
			// one the cache holds, has one of its calls.
			self := usagecache.OwnerOf(jobs[k].key)
			for _, key := range r.keys {
				if held[key] > 1 || slices.ContainsFunc(cache.Sharers(key), func(o uint64) bool { return o != self }) {
					r.shared = true
					break
				}
			}
		}
		d := r.cached
		l.AddDigest(s, d.Digest, func() ([]usage.Call, error) {
			calls, ok := d.Calls()
			if !ok {
				return nil, fmt.Errorf("%s: the usage cache's calls do not read", s.Path)
			}
			return calls, nil
		})
		if r.shared {
			l.Involve(s)
		}
		byOwner[usagecache.OwnerOf(jobs[k].key)] = s
	}
	// A session read anew may hold another's requests (a resumed Claude
	// Code session, copied lines and all): those sessions are counted
	// call by call too. Not itself: the cache holds its calls as they
	// were read last, and a session that grew holds them again (which
	// made every one that grew counted call by call).
	for k, r := range out {
		if !r.read || r.s == nil {
			continue
		}
		self := usagecache.OwnerOf(jobs[k].key)
		for _, key := range r.keys {
			for _, o := range cache.Sharers(key) {
				if s := byOwner[o]; s != nil && o != self {
					l.Involve(s)
				}
			}
		}
	}
	cache.Save(keys, stamps)
	st.Racy = cache.Racy
	return l, ledgerRead{byJob: byJob, requests: func() usagecache.KeySet { return cache.Requests().With(unkept) }}, nil
}

// A usageJob is one session to read into a ledger: its cache key, the
// file whose stamp it is cached by (and the database's write-ahead log
// too, for opencode's), and how to read it.
type usageJob struct {
	key, file string
	wal       bool
	// known is the file's stamp where it is known already: the one a
	// server that vouches for the cache saw (the file is as it was then),
	// or the walk's (stampJobs); nil where the file is to be stat'ed.
	known *usagecache.Stamp
	read  func() (usage.Session, error)
	// readFrom reads on from an offset of a file that only grew, after
	// what was read of it before; nil where the harness's files are not
	// read so, ok false where this one is not.
	readFrom func(prev usage.Session, from int64) (s usage.Session, ok bool, err error)
}

// stamp is the job's file's stamp; ok is false for a file that cannot be
// stat'ed, which is read every time.
func (j usageJob) stamp() (usagecache.Stamp, bool) {
	if j.known != nil {
		return *j.known, true
	}
	st, ok := usagecache.StatStamp(j.file)
	if ok && j.wal {
		// The database's and its write-ahead log's, as one: another when
		// either changed; written when the later of them was, which a
		// report of a span and a stamp's freshness go by (the two times
		// XORed, as they were, are no time: a session written today was
		// left out of today's status line, and one written a moment ago
		// trusted to its stamp).
		wal, _ := usagecache.StatStamp(j.file + "-wal")
		st.Size, st.ModTime, st.Ino = st.Size^wal.Size<<32, max(st.ModTime, wal.ModTime), st.Ino^wal.Ino*0x9e3779b97f4a7c15
	}
	return st, ok
}

// readJob reads job j's session: on from where the cache's read ended,
// when its file only grew since and its harness's files are read so,
// else whole. read is about how many bytes that read.
func readJob(cache *usagecache.Cache, j usageJob, key string, stamp usagecache.Stamp) (s usage.Session, read int64, err error) {
	if j.readFrom != nil {
		if d, from, ok := cache.Grown(key, j.file, stamp); ok {
			if calls, ok := d.Calls(); ok {
				prev := *d.Session
				prev.Calls = calls
				if s, ok, err := j.readFrom(prev, from); ok {
					return s, stamp.Size - from, err
				}
			}
		}
	}
	s, err = j.read()
	return s, stamp.Size, err
}

// jobNames are the jobs by the names a session's Parent or an import's
// origin may give them: the path, the id a file is named by (an omp
// file's after its time, a Codex rollout's last 36 characters, a Claude
// Code transcript's whole name, an opencode session's), and the hash the
// cache's index knows the job by (ownerName), the id its session's
// header gave it when the cache read it last (which a file's name need
// not be), and as a child of its parent (childName).
//
// A name is known by its hash (nameOf): two that collide give a ledger
// of a span one more session to read, with those it needs, never a
// count of another (its calls are counted by their own rules).
func jobNames(jobs []usageJob, cache *usagecache.Cache) *jobIndex {
	x := &jobIndex{first: make(map[uint64]int32, 6*len(jobs)), more: map[uint64][]int32{}}
	for k, j := range jobs {
		_, path, _ := strings.Cut(j.key, " ")
		x.add(nameOf(path), k)
		base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".zst"), ".jsonl")
		x.add(nameOf(base), k)
		if _, id, ok := strings.Cut(base, "_"); ok && id != "" {
			x.add(nameOf(id), k)
		}
		if len(base) > 36 {
			x.add(nameOf(base[len(base)-36:]), k)
		}
		x.add(ownerName(usagecache.OwnerOf(j.key)), k)
		e := cache.Old[j.key]
		if e.ID != "" {
			x.add(nameOf(e.ID), k)
		}
		if e.Parent != "" {
			x.add(childName(e.Parent), k)
		}
	}
	return x
}

// A jobIndex is jobs by the hashes of their names: most names name one
// job, kept in first; the others in more.
type jobIndex struct {
	first map[uint64]int32
	more  map[uint64][]int32
}

func (x *jobIndex) add(name uint64, k int) {
	f, ok := x.first[name]
	switch {
	case !ok:
		x.first[name] = int32(k)
	case int(f) != k && !slices.Contains(x.more[name], int32(k)):
		x.more[name] = append(x.more[name], int32(k))
	}
}

// jobs are the jobs of a name.
func (x *jobIndex) jobs(name uint64) []int {
	f, ok := x.first[name]
	if !ok {
		return nil
	}
	out := []int{int(f)}
	for _, k := range x.more[name] {
		out = append(out, int(k))
	}
	return out
}

// nameSeed seeds the names' hashes: one per process, as the index is.
var nameSeed = maphash.MakeSeed()

// nameOf is the hash of a name of a kind: 0 a plain name, 1 a child's
// (childName), 2 an index owner's (ownerName).
func nameOf(name string) uint64 { return kindName(0, name) }

func kindName(kind byte, name string) uint64 {
	var h maphash.Hash
	h.SetSeed(nameSeed)
	h.WriteByte(kind)
	h.WriteString(name)
	return h.Sum64()
}

// childName is the name jobNames gives the jobs whose sessions descend
// from the session of this id or path, as the cache knew them.
func childName(parent string) uint64 { return kindName(1, parent) }

// ownerName is the name jobNames gives the job of an index owner.
func ownerName(o uint64) uint64 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], o)
	return kindName(2, string(b[:]))
}

// vouchedJobs are the jobs of the sessions of a cache a running server
// vouches for, each at the stamp the server saw, with no walk; and the
// harnesses to walk anyway: those the cache holds a session of written
// too recently to be trusted by its stamp (a running agent's), which are
// read again as they are with no server. A cache that holds nothing
// (gone, or torn) has every harness walked.
func vouchedJobs(cache *usagecache.Cache, hs []Harness) (jobs []usageJob, walk []Harness) {
	if len(cache.Old) == 0 {
		return nil, hs
	}
	racy := map[Harness]bool{}
	for key, e := range cache.Old {
		if e.Racy {
			h, _, _ := strings.Cut(key, " ")
			racy[Harness(h)] = true
		}
	}
	for _, h := range hs {
		if racy[h] {
			walk = append(walk, h)
		}
	}
	keys := make([]string, 0, len(cache.Old))
	for key := range cache.Old {
		keys = append(keys, key)
	}
	slices.Sort(keys) // the order a walk would list them in need not be kept, but one order is
	for _, key := range keys {
		h, path, _ := strings.Cut(key, " ")
		if racy[Harness(h)] || !slices.Contains(hs, Harness(h)) {
			continue
		}
		stamp := cache.Old[key].Stamp
		file, wal := path, false
		if container, database, ok := foreign.ContainerOf(path); ok {
			file, wal = container, database
		}
		jobs = append(jobs, usageJob{key: key, file: file, wal: wal, known: &stamp,
			read: func() (usage.Session, error) {
				// Unreachable while the cache holds the session at this
				// stamp, which is the job's.
				return usage.Session{}, fmt.Errorf("%s: not in the usage cache the server vouched for", path)
			}})
	}
	return jobs, walk
}

// UsageCacheFile is the cache file, under the cache dir dir, of the
// ledgers of the places hs ("" when dir is): one per set of places and
// price table.
func (c *Catalog) UsageCacheFile(dir string, hs []Harness) string {
	if dir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(c.usageCacheName(hs) + "\x00" + usage.CacheVersion() + "\x00" + foreign.UsageRules))
	return filepath.Join(dir, hex.EncodeToString(sum[:12]))
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
