package catalog

import (
	"context"

	"github.com/xdev/xdev/internal/pgstore"
	"github.com/xdev/xdev/internal/session"
)

// What a sync did, as pgstore counts it.
type (
	PushStats = pgstore.PushStats
	PullStats = pgstore.PullStats
	// FileError is a file a sync left alone, and why.
	FileError = pgstore.FileError
)

// SyncOptions tune Push and Pull.
type SyncOptions struct {
	// Origin names this machine's pushes to xdev's tables (default: the
	// host name and the data dir).
	Origin string
	// OmpRoot, for omp's table, is the directory rows are keyed under
	// (Root/<project>/<file>); empty keys a row by the file's absolute
	// path, as omp keys a file-backed session.
	OmpRoot string
	// Sessions names the stored sessions a pull writes (as Find names
	// one); none pulls every one. omp's table is pulled whole.
	Sessions []string
	// Progress, when set, is called as files are done.
	Progress func(done, total int)
	// Raw pushes the files' bytes as they are; a push masks the secrets
	// in every line unless told so, since every member of a team reads
	// its store (pgstore's masked.go).
	Raw bool
}

// Push stores the data dir's session files in the database: in xdev's
// tables, as new sessions, appended lines, or new revisions of files
// rewritten since; or in omp's table as omp's storage would have written
// them. Files it cannot store are in the stats' Failed, the rest pushed.
func (d *Database) Push(ctx context.Context, dataDir string, opts SyncOptions) (PushStats, error) {
	if d.tbl != nil {
		return d.tbl.Push(ctx, dataDir, pgstore.OmpPushOptions{Root: opts.OmpRoot, Progress: opts.Progress, Raw: opts.Raw})
	}
	return d.db.Push(ctx, dataDir, pgstore.PushOptions{Origin: opts.Origin, Progress: opts.Progress, Raw: opts.Raw})
}

// Pull writes stored sessions into the data dir byte for byte as they
// were pushed: new files appear whole, a local file the stored one
// extends is appended to under omp's lockfile, and one that went another
// way is left alone and reported. Nothing local is truncated or replaced.
func (d *Database) Pull(ctx context.Context, dataDir string, opts SyncOptions) (PullStats, error) {
	if d.tbl != nil {
		return d.tbl.Pull(ctx, dataDir, opts.OmpRoot, session.LockOptions{})
	}
	po := pgstore.PullOptions{Progress: opts.Progress}
	for _, arg := range opts.Sessions {
		s, err := d.db.Find(ctx, arg)
		if err != nil {
			return PullStats{}, err
		}
		po.Sessions = append(po.Sessions, s)
	}
	return d.db.Pull(ctx, dataDir, po)
}
