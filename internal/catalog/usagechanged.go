package catalog

import (
	"os"

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
// its sessions by their files (another harness's, a database), or where
// the files kept are not this process's, the ledger is built as without
// the names: usageGroups walks.

// usageChanged is usageGroups of the changes opts.Changed names, for
// the server that wrote the counted file at counted (beside the usage
// cache at path); ok is false where it cannot say.
func (c *Catalog) usageChanged(opts UsageOptions, path, counted string, want usageWant) (got usageGot, st UsageStats, ok bool) {
	pid := os.Getpid()
	head, err := usagecache.ReadCountedHead(counted)
	if err != nil || head.Server != pid || head.Racy != 0 {
		return got, st, false // not this server's whole ledger
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
			return got, st, false
		}
		jobs, gone = append(jobs, js...), append(gone, g...)
	}
	plan, files, ok := planChanged(counted, head.Files, jobs, gone)
	if !ok {
		return got, st, false
	}
	n := 0
	if len(plan.recounts) > 0 {
		if !plan.keep(path) {
			return got, st, false
		}
		if n, ok = plan.apply(counted, files, true); !ok {
			return got, st, false
		}
	}
	k, got, ok := want.read(counted, func(k usagecache.Counted) bool { return k.Files == files && k.Server == pid })
	if !ok {
		return got, st, false
	}
	st = countedStats(k, UsageStats{Failed: map[Harness]error{}})
	if n > 0 {
		st.Counted, st.Recounted, st.Read = false, n, n
	}
	return got, st, true
}
