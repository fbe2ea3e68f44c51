package search

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ncruces/go-sqlite3"
	"golang.org/x/sys/unix"
)

// The index is a cache of what the sessions say, so damage to it is
// never answered from: every page carries a checksum that SQLite checks
// as it reads the page (Open enables them on a new file), and whatever
// SQLite reports damaged (a page whose checksum fails, a malformed file,
// not a database at all), at open, at a refresh or at a query, has the
// index set aside (renamed to <index>.damaged) and made anew from the
// sessions, with Notice saying so. A query that meets the damage runs
// again on the rebuilt index, refreshed as the last Refresh was.

// isDamaged reports whether err is SQLite finding the index damaged.
func isDamaged(err error) bool {
	return errors.Is(err, sqlite3.CORRUPT) || errors.Is(err, sqlite3.NOTADB) || errors.Is(err, sqlite3.IOERR_DATA) ||
		err != nil && strings.Contains(err.Error(), "malformed")
}

// DamagedPath is where a damaged index is set aside.
func DamagedPath(path string) string { return path + ".damaged" }

// A rebuildReason says why an index is made anew. A damaged one is set
// aside (DamagedPath) for a look at what went wrong; one only outdated
// (of another schema version or data dir, without page checksums, or a
// reindex asked for) is removed, since a copy as large as the index
// would help no one.
type rebuildReason struct {
	why     string // for Notice; "" says nothing
	damaged bool
}

func damaged(err error) *rebuildReason { return damagedBy("was damaged (" + err.Error() + ")") }

func damagedBy(why string) *rebuildReason { return &rebuildReason{why: why, damaged: true} }

func outdated(why string) *rebuildReason { return &rebuildReason{why: why} }

// rebuild sets the index aside or removes it, as r says, and makes it
// anew, empty. The caller holds the refresh lock.
func (db *DB) rebuild(r rebuildReason) error {
	db.close()
	old := "the old one is removed"
	if !r.damaged {
		if err := os.Remove(db.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: %v", ErrCacheDir, err)
		}
	} else if err := os.Rename(db.path, DamagedPath(db.path)); err == nil {
		old = "the old one is " + filepath.Base(DamagedPath(db.path))
	} else if !errors.Is(err, os.ErrNotExist) {
		if err := os.Remove(db.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: %v", ErrCacheDir, err)
		}
	}
	for _, p := range []string{db.path + "-wal", db.path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: %v", ErrCacheDir, err)
		}
	}
	if r.why != "" {
		db.Notice = fmt.Sprintf("search index %s %s; rebuilt it (%s)", db.path, r.why, old)
	}
	if _, err := db.open(); err != nil {
		if db.stub {
			db.discard()
		}
		return db.cacheError(err)
	}
	return nil
}

// discard removes the index, after a first build that failed: a stub
// that answers nothing is not left behind. The DB is closed.
func (db *DB) discard() {
	db.close()
	for _, p := range []string{db.path, db.path + "-wal", db.path + "-shm"} {
		os.Remove(p)
	}
}

// cacheError names the index in err, and says so plainly when the disk it
// is on is full (SQLite may call that a disk I/O error).
func (db *DB) cacheError(err error) error {
	if err == nil || errors.Is(err, ErrCacheDir) {
		return err
	}
	if free, ok := freeBytes(filepath.Dir(db.path)); ok && (errors.Is(err, sqlite3.FULL) || errors.Is(err, sqlite3.IOERR) ||
		errors.Is(err, unix.ENOSPC)) && free < 1<<20 {
		return fmt.Errorf("%w: the disk holding the search index %s is full (%d bytes free): free some space, or set XDG_CACHE_HOME to a disk with room (%v)",
			ErrCacheDir, db.path, free, err)
	}
	if errors.Is(err, sqlite3.FULL) || errors.Is(err, unix.ENOSPC) {
		return fmt.Errorf("%w: the disk holding the search index %s is full: %v", ErrCacheDir, db.path, err)
	}
	return fmt.Errorf("%w: %s: %v", ErrCacheDir, db.path, err)
}

// freeBytes is how much room the filesystem of dir has for this user.
func freeBytes(dir string) (int64, bool) {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return 0, false
	}
	return int64(st.Bavail) * st.Bsize, true
}
