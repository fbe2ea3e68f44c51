package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockRefresh takes the index's refresh lock, an flock on <index>.lock
// beside it: two refreshes of one index run one after the other, so the
// second reads what the first committed and indexes nothing twice.
// SQLite's own locking would keep the file sound either way; this keeps
// the work from being done twice. The kernel drops the lock with the
// process, so a crash leaves none behind.
func (db *DB) lockRefresh(ctx context.Context) (unlock func(), err error) {
	f, err := os.OpenFile(db.path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCacheDir, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", f.Name(), err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
