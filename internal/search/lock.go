package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/xdev/xdev/internal/filelock"
)

// lockRefresh takes the index's refresh lock, an flock on <index>.lock
// beside it: two refreshes of one index run one after the other, so the
// second reads what the first committed and indexes nothing twice.
// SQLite's own locking would keep the file sound either way; this keeps
// the work from being done twice. A wait is said (OpenOptions.Waiting)
// after a second and bounded (OpenOptions.LockTimeout).
func (db *DB) lockRefresh(ctx context.Context) (unlock func(), err error) {
	unlock, err = filelock.Lock(ctx, db.path+".lock", &filelock.Options{Waiting: db.opts.Waiting, Timeout: db.opts.LockTimeout})
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, fmt.Errorf("%w: %v", ErrCacheDir, err) // the lock file cannot be made
	}
	return unlock, err
}
