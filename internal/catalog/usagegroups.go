package catalog

import (
	"context"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/xdev/xdev/internal/live"
	"github.com/xdev/xdev/internal/usage"
	"github.com/xdev/xdev/internal/usagecache"
)

// UsageGroups are the groups of the ledger Usage builds
// (usage.Ledger.Groups): every call in opts' places counted once along
// the session tree, summed by session, model and quarter of an hour.
// Sessions whose calls could not be read again are left out, and their
// errors are the stats' Unread.
//
// A ledger of every session of the places (opts.Cwd "") keeps its groups
// beside the usage cache (usagecache.Counted), so that while nothing
// changes a report reads one file and builds no ledger:
//
//   - a running xdev serve that vouches for the cache (internal/live)
//     writes them with every ledger it builds, before it vouches; a
//     process it vouches to takes them with no walk of the places;
//   - a server starting (or rebuilding for a change no session's file
//     shows) takes the groups another server kept, where its walk finds
//     every file as they were read, as a process with no server does;
//   - a process with no server walks the places, stat'ing every file as
//     a ledger would, and takes them where every file is as they were
//     read and none was written too recently to be known by its stamp
//     (usagecache.Stamp.Fresh); where not, it builds the ledger, from the
//     files it stat'ed, and keeps its groups for the next.
//
// The groups kept are those of every session: a report of a span
// (opts.ModifiedSince) takes them all, which hold the span's calls as the
// ledger of the span would count them.
func (c *Catalog) UsageGroups(ctx context.Context, opts UsageOptions) ([]usage.Group, UsageStats, error) {
	got, st, err := c.usageGroups(ctx, opts, usageWant{})
	return got.groups, st, err
}

// UsageReport is the report (usage.NewReport) of UsageGroups' groups, as
// ro says: where the groups are kept, each read into the report and let
// go (usagecache.EachCounted), so that no group is held (a report of
// 25,001 sessions' kept groups held 21 MB of them, a page fault each 4
// KB).
func (c *Catalog) UsageReport(ctx context.Context, opts UsageOptions, ro usage.ReportOptions) (usage.Report, UsageStats, error) {
	got, st, err := c.usageGroups(ctx, opts, usageWant{report: &ro})
	return got.report, st, err
}

// A StatusQuery names the sessions UsageStatus is asked for.
type StatusQuery = usagecache.StatusQuery

// UsageStatus is the status (usage.Status) of UsageGroups' groups, with
// those since since as its recent ones (at least: a status kept with
// the groups holds a day's), and the sums of the sessions q names and of
// the latest call's (at least: a status made from a ledger holds every
// session's). Where the groups are kept it reads the status alone: what
// is recent and the sessions asked for, not every group.
func (c *Catalog) UsageStatus(ctx context.Context, opts UsageOptions, since time.Time, q StatusQuery) (usage.Status, UsageStats, error) {
	ms := float64(since.UnixMilli())
	got, st, err := c.usageGroups(ctx, opts, usageWant{since: &ms, q: q})
	return got.status, st, err
}

// usageWant is what usageGroups is asked for of the groups: the groups;
// with since, their status (the groups since *since recent, the sums of
// the sessions q names); with report, their report.
type usageWant struct {
	since  *float64
	q      usagecache.StatusQuery
	report *usage.ReportOptions
}

// usageGot is what usageGroups gives of the groups, as asked.
type usageGot struct {
	groups []usage.Group
	status usage.Status
	report usage.Report
}

// of is what w asks for of a ledger's groups.
func (w usageWant) of(groups []usage.Group) usageGot {
	switch {
	case w.since != nil:
		return usageGot{status: usage.NewStatus(groups, *w.since)}
	case w.report != nil:
		return usageGot{report: usage.NewReport(groups, *w.report)}
	}
	return usageGot{groups: groups}
}

// read reads what w asks for from the counted file at path, where
// accept takes its head; ok is false where there is none to take (no
// file, a damaged one, or one accept does not take).
func (w usageWant) read(path string, accept func(usagecache.Counted) bool) (k usagecache.Counted, got usageGot, ok bool) {
	switch {
	case w.since != nil:
		if k, err := usagecache.ReadCountedStatus(path, w.q); err == nil && k.Status.Since <= *w.since {
			return k, usageGot{status: k.Status}, accept(k)
		}
		// A status from before the span asked for: the groups'.
	case w.report != nil:
		rp := usage.NewReporter(*w.report)
		k, err := usagecache.EachCounted(path, accept, rp.Add)
		return k, usageGot{report: rp.Report()}, err == nil
	}
	k, err := usagecache.ReadCounted(path)
	if err != nil || !accept(k) {
		return k, usageGot{}, false
	}
	return k, w.of(k.Groups), true
}

// usageGroups is what want asks for of UsageGroups' groups.
func (c *Catalog) usageGroups(ctx context.Context, opts UsageOptions, want usageWant) (got usageGot, st UsageStats, err error) {
	path := c.UsageCacheFile(opts.Cache, opts.Harnesses)
	if path == "" || opts.Cwd != "" {
		l, st, err := c.Usage(ctx, opts)
		if err != nil {
			return got, st, err
		}
		groups, unread := l.Groups(nil)
		st.Unread = unread
		return want.of(groups), st, nil
	}
	counted := usagecache.CountedPath(path)
	if opts.Vouching && opts.Changed != nil && opts.ModifiedSince.IsZero() {
		if got, st, ok := c.usageChanged(opts, path, counted, want); ok {
			return got, st, nil
		}
	}
	st = UsageStats{Failed: map[Harness]error{}}
	if !opts.Vouching && !opts.NoLive {
		if pid := live.Vouching(live.MarkerPath(path), liveWait); pid != 0 {
			st.Live = true
			if k, got, ok := want.read(counted, func(k usagecache.Counted) bool { return k.Server == pid }); ok {
				return got, countedStats(k, st), nil
			}
			// A server of another version, or one whose file is not
			// there yet: its cache, with no walk.
			l, _, err := c.ledger(ctx, opts, path, &st, nil, false)
			if err != nil {
				return got, st, err
			}
			groups, unread := l.Groups(nil)
			st.Unread = unread
			return want.of(groups), st, nil
		}
	}
	jobs := c.walkUsage(ctx, opts.Harnesses, &st)
	if err := ctx.Err(); err != nil {
		return got, st, err
	}
	files, fresh, stamped := stampJobs(ctx, jobs)
	if stamped && fresh == 0 {
		// A server takes only the groups of a server's ledger, which kept
		// the cache whole as a server's does (a server that is gone: one
		// run before this one), and vouches for them from now on.
		accept := func(k usagecache.Counted) bool {
			taken := k.Racy == 0 && k.Files == files && (!opts.Vouching || k.Server != 0)
			if taken {
				// The jobs are let go before the groups are read (a report
				// by session of 25,001 sessions held their 10 MB beside
				// its rows): only a file damaged past its checksums needs
				// them again.
				jobs = nil
			}
			return taken
		}
		if k, got, ok := want.read(counted, accept); ok {
			if opts.Vouching && k.Server != os.Getpid() {
				k.Server = os.Getpid()
				if usagecache.ClaimCounted(counted, k.Server) != nil {
					os.Remove(counted)
				}
			}
			return got, countedStats(k, st), nil
		}
		if jobs == nil {
			// Taken but not read after all: walked again for the ledger.
			st = UsageStats{Failed: map[Harness]error{}}
			jobs = c.walkUsage(ctx, opts.Harnesses, &st)
			if err := ctx.Err(); err != nil {
				return got, st, err
			}
			files, fresh, stamped = stampJobs(ctx, jobs)
		} else if fresh == 0 && len(st.Failed) == 0 {
			// A few files changed since: their sessions counted again
			// into the groups kept, where a ledger would count them
			// alone (usagerecount.go); a server's put in the usage cache
			// too, which it keeps whole. The jobs are let go first (a
			// ledger's walk, 15 MB at 25,001 sessions): a ledger after
			// all walks again.
			if plan, ok := planRecount(counted, jobs, files, opts.Vouching); ok {
				jobs = nil
				n, ok := 0, !opts.Vouching || plan.keep(path)
				if ok {
					n, ok = plan.apply(counted, files, opts.Vouching)
				}
				if ok {
					if k, got, ok := want.read(counted, func(k usagecache.Counted) bool { return k.Files == files }); ok {
						st = countedStats(k, st)
						st.Counted, st.Recounted, st.Read = false, n, n
						return got, st, nil
					}
				}
				st = UsageStats{Failed: map[Harness]error{}}
				jobs = c.walkUsage(ctx, opts.Harnesses, &st)
				if err := ctx.Err(); err != nil {
					return got, st, err
				}
				files, fresh, stamped = stampJobs(ctx, jobs)
			}
		}
	}
	l, read, err := c.ledger(ctx, opts, path, &st, jobs, true)
	if err != nil {
		return got, st, err
	}
	groups, unread := l.Groups(nil)
	st.Unread = unread
	whole := opts.ModifiedSince.IsZero() && len(st.Failed) == 0 && st.Unread == nil && stamped
	switch {
	case whole && opts.Vouching:
		k := usagecache.Counted{Groups: groups, Files: files, Sessions: st.Sessions, Skipped: st.Skipped,
			Racy: max(fresh, st.Racy), Server: os.Getpid()}
		if usagecache.WriteCounted(counted, k) != nil {
			// An older file of this server's would be taken for this
			// ledger's.
			os.Remove(counted)
		} else if k.Racy == 0 {
			writeLedgerFiles(counted, files, jobs, read)
		}
	case whole && fresh == 0 && st.Racy == 0:
		if usagecache.WriteCounted(counted, usagecache.Counted{Groups: groups, Files: files, Sessions: st.Sessions, Skipped: st.Skipped}) == nil {
			writeLedgerFiles(counted, files, jobs, read)
		}
	}
	return want.of(groups), st, nil
}

// countedStats are st with the stats of the ledger whose groups k holds.
func countedStats(k usagecache.Counted, st UsageStats) UsageStats {
	st.Sessions, st.Skipped, st.Racy, st.Counted = k.Sessions, k.Skipped, k.Racy, true
	return st
}

// stampJobs stats the files of jobs in parallel, keeping each one's stamp
// in its job (a ledger of them stats none again), and sums them (the
// stamps of a session's cache key): stamped is false where a file could
// not be stat'ed, and fresh counts those written too recently to be
// known by their stamps.
func stampJobs(ctx context.Context, jobs []usageJob) (sum usagecache.StampSum, fresh int, stamped bool) {
	// Before the first stat: a file written after it is fresh by this
	// clock, or its stamp is another.
	now := time.Now()
	stamps := make([]usagecache.Stamp, len(jobs))
	n := min(len(jobs), runtime.GOMAXPROCS(0))
	type part struct {
		sum       usagecache.StampSum
		fresh     int
		unstamped bool
	}
	parts := make([]part, n)
	var wg sync.WaitGroup
	for p := range n {
		wg.Go(func() {
			pt := &parts[p]
			for k := p; k < len(jobs); k += n {
				if ctx.Err() != nil {
					pt.unstamped = true
					return
				}
				st, ok := jobs[k].stamp()
				if !ok {
					pt.unstamped = true
					continue
				}
				stamps[k] = st
				jobs[k].known = &stamps[k]
				pt.sum.Add(jobs[k].key, st)
				if st.Fresh(now) {
					pt.fresh++
				}
			}
		})
	}
	wg.Wait()
	stamped = true
	for _, pt := range parts {
		sum.Merge(pt.sum)
		fresh += pt.fresh
		stamped = stamped && !pt.unstamped
	}
	return sum, fresh, stamped
}
