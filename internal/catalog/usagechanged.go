package catalog

import (
	"context"
	"os"

	"github.com/xdev/xdev/internal/usage"
	"github.com/xdev/xdev/internal/usagecache"
)

// A ledger kept across the changes a server saw. A running xdev serve
// watches every place, and its watcher names each file that changed
// (UsageOptions.Changed): where the counted file and the ledger files
// beside it are those it wrote with its last ledger, the files it names
// are the only ones that may differ from what the ledger files say, so
// they alone are stat'ed and read (Place.usageJobsAt), and counted again
// into the groups kept as a walk's recount would count them
// (usagerecount.go), or the groups taken as they are where none changed.
// No other file is stat'ed: at 25,001 sessions the walk and stat of
// every file was a third of the server's CPU for an append.
//
// Where a file named is gone, is a directory, lies where no place names
// its sessions by their files alone (a harness but the data dirs, Claude
// Code and Codex; a database), or where the files kept are not this
// process's, the ledger is built as without the names: usageGroups
// walks.
//
// A server that keeps a view of the groups (its pages' costs and
// reports) is given the sessions counted again, before and after
// (UsageRecounts), rather than every group: it patches its view.

// A UsageRecount is a session counted again into the groups kept: its
// groups as they were (none for a session new since, or one of no calls
// then), and as they are now, each session its own rollup.
type UsageRecount struct {
	Was, Now []usage.Group
}

// UsageRecounts is UsageGroups for a server that keeps what it made of
// the last groups it was given: where the groups kept take the changes
// opts.Changed names by counting sessions again (or nothing changed),
// the sessions counted again, before and after, and no other group. ok
// is false where the groups are to be had whole (UsageGroups: a walk, a
// ledger built), having changed nothing UsageGroups would not.
func (c *Catalog) UsageRecounts(ctx context.Context, opts UsageOptions) (rs []UsageRecount, st UsageStats, ok bool) {
	path := c.UsageCacheFile(opts.Cache, opts.Harnesses)
	if path == "" || !opts.Vouching || opts.Changed == nil || opts.Cwd != "" || !opts.ModifiedSince.IsZero() || ctx.Err() != nil {
		return nil, st, false
	}
	head, recounts, ok := c.recountChanged(opts, path, usagecache.CountedPath(path))
	if !ok {
		return nil, st, false
	}
	st = countedStats(head, UsageStats{Failed: map[Harness]error{}})
	if len(recounts) > 0 {
		st.Counted, st.Recounted, st.Read = false, len(recounts), len(recounts)
	}
	for _, rc := range recounts {
		s := rc.Session
		now := make([]usage.Group, len(rc.Digest))
		for k := range rc.Digest {
			now[k] = usage.Group{Session: s, Rollup: s, Bucket: &rc.Digest[k]}
		}
		rs = append(rs, UsageRecount{Was: rc.Was, Now: now})
	}
	return rs, st, true
}

// usageChanged is usageGroups of the changes opts.Changed names, for
// the server that wrote the counted file at counted (beside the usage
// cache at path); ok is false where it cannot say.
func (c *Catalog) usageChanged(opts UsageOptions, path, counted string, want usageWant) (got usageGot, st UsageStats, ok bool) {
	head, recounts, ok := c.recountChanged(opts, path, counted)
	if !ok {
		return got, st, false
	}
	pid := os.Getpid()
	k, got, ok := want.read(counted, func(k usagecache.Counted) bool { return k.Files == head.Files && k.Server == pid })
	if !ok {
		return got, st, false
	}
	st = countedStats(k, UsageStats{Failed: map[Harness]error{}})
	if n := len(recounts); n > 0 {
		st.Counted, st.Recounted, st.Read = false, n, n
	}
	return got, st, true
}

// recountChanged counts the sessions of the files opts.Changed names
// again into the groups of the counted file at counted, for the server
// that wrote it (its usage cache at path kept too), where they may be:
// it returns the file's head as it is now (no groups) and the sessions
// counted again, their groups before too (usagecache.Recount.Was); none
// where no file changed. ok is false where it cannot say.
func (c *Catalog) recountChanged(opts UsageOptions, path, counted string) (head usagecache.Counted, recounts []usagecache.Recount, ok bool) {
	head, err := usagecache.ReadCountedHead(counted)
	if err != nil || head.Server != os.Getpid() || head.Racy != 0 {
		return head, nil, false // not this server's whole ledger
	}
	var jobs []usageJob
	var gone []string
	for _, h := range opts.Harnesses {
		paths := opts.Changed[h]
		if len(paths) == 0 {
			continue
		}
		js, g, ok := c.Place(h).usageJobsAt(paths)
		if !ok {
			return head, nil, false
		}
		jobs, gone = append(jobs, js...), append(gone, g...)
	}
	plan, files, ok := planChanged(counted, head.Files, jobs, gone)
	if !ok {
		return head, nil, false
	}
	if len(plan.recounts) == 0 {
		return head, nil, true
	}
	if !plan.keep(path) {
		return head, nil, false
	}
	if head, ok = plan.replace(counted, files, true); !ok {
		return head, nil, false
	}
	return head, plan.recounts, true
}
