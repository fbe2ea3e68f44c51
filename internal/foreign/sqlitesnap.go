package foreign

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/ncruces/go-sqlite3"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/filelock"
	"github.com/xdev/xdev/internal/regularfile"
)

// The snapshot. SQLite writes beside a database it reads: a reader of a
// database in WAL mode (opencode's, Crush's, Goose's) maps and writes its
// -shm, and creates it when it is missing. xdev writes nothing in another
// harness's directory, so it reads a copy: the database and its -wal,
// copied into xdev's cache while neither changes (a stat before and
// after; a write during the copy means copying again), the copy's WAL
// then checkpointed into it, so the copy is one file as the harness's
// last commit left the database (a database whose every row is still in
// its -wal, as Crush leaves one, reads whole). The copy is kept with the
// stat it was taken at and used again until the harness's files change.

// withDatabase runs fn on a snapshot of harness's SQLite database db,
// opened read-only, after check (the harness's schema) passes. The
// connection is kept for the next call while the database's files keep
// the stat the snapshot was taken at: opening one costs about 10 ms (a
// new SQLite instance), and a search's first refresh converts every
// session of the database. Calls take turns (a connection is for one
// goroutine at a time).
func withDatabase(harness, db string, check func(c *sqlite3.Conn, db string) error, fn func(*sqlite3.Conn) error) error {
	openConns.Lock()
	defer openConns.Unlock()
	stamp, err := stampOfDB(db)
	if err != nil {
		return err
	}
	oc := openConns.m[db]
	if oc == nil || oc.stamp != stamp {
		if oc != nil {
			oc.conn.Close()
			delete(openConns.m, db)
		}
		c, err := openSnapshot(harness, db, check)
		if err != nil {
			return err
		}
		oc = &openConn{conn: c, stamp: stamp}
		if openConns.m == nil {
			openConns.m = map[string]*openConn{}
		}
		openConns.m[db] = oc
	}
	if err := fn(oc.conn); err != nil {
		return fmt.Errorf("%s: %w", db, err)
	}
	return nil
}

// openConns are the connections withDatabase keeps, by database.
var openConns struct {
	sync.Mutex
	m map[string]*openConn
}

type openConn struct {
	conn  *sqlite3.Conn
	stamp snapshotStamp // the database's files when the snapshot was taken
}

// openSnapshot opens a fresh snapshot of db and checks its schema.
func openSnapshot(harness, db string, check func(c *sqlite3.Conn, db string) error) (*sqlite3.Conn, error) {
	snap, err := databaseSnapshot(harness, db)
	if err != nil {
		return nil, err
	}
	c, err := sqlite3.OpenFlags(snap, sqlite3.OPEN_READONLY|sqlite3.OPEN_NOFOLLOW)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", db, err)
	}
	if err := check(c, db); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// checkColumns says which of cols table lacks, if any.
func checkColumns(c *sqlite3.Conn, db, table string, cols []string) error {
	st, _, err := c.Prepare(`SELECT name FROM pragma_table_info(?)`)
	if err != nil {
		return fmt.Errorf("%s: %w", db, err)
	}
	defer st.Close()
	st.BindText(1, table)
	have := map[string]bool{}
	for st.Step() {
		have[st.ColumnText(0)] = true
	}
	if err := st.Err(); err != nil {
		return fmt.Errorf("%s: %w (a damaged database?)", db, err)
	}
	for _, col := range cols {
		if !have[col] {
			return fmt.Errorf("%s: a schema xdev does not read (table %s has no column %s)", db, table, col)
		}
	}
	return nil
}

// checkTables is the schema check of a database whose tables must have
// the columns tables names, what saying which databases xdev reads.
func checkTables(tables map[string][]string, what string) func(c *sqlite3.Conn, db string) error {
	return func(c *sqlite3.Conn, db string) error {
		for table, cols := range tables {
			if err := checkColumns(c, db, table, cols); err != nil {
				return fmt.Errorf("%w: %s", err, what)
			}
		}
		return nil
	}
}

// hasTable reports whether the database has a table of that name.
func hasTable(c *sqlite3.Conn, name string) bool {
	st, _, err := c.Prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`)
	if err != nil {
		return false
	}
	defer st.Close()
	st.BindText(1, name)
	return st.Step()
}

// hasColumn reports whether table has a column of that name.
func hasColumn(c *sqlite3.Conn, table, name string) bool {
	st, _, err := c.Prepare(`SELECT 1 FROM pragma_table_info(?) WHERE name = ?`)
	if err != nil {
		return false
	}
	defer st.Close()
	st.BindText(1, table)
	st.BindText(2, name)
	return st.Step()
}

// snapshotTries bounds the copies of a database that changes under each.
const snapshotTries = 5

// snapshotStamp is the stat of a database and its WAL.
type snapshotStamp struct {
	Size, Mtime, Ino  int64
	WalSize, WalMtime int64
	Format            int
}

const snapshotFormat = 1

// databaseSnapshot is the path of an up-to-date copy of harness's
// database db, in a directory of xdev's cache named by the harness and
// the database's path.
func databaseSnapshot(harness, db string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("%s: no cache dir to read a copy in: %w", db, err)
	}
	abs, _ := filepath.Abs(db)
	sum := sha256.Sum256([]byte(abs))
	dir := filepath.Join(cache, "xdev", "foreign", harness+"-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	unlock, err := filelock.Lock(context.Background(), filepath.Join(dir, "lock"), nil)
	if err != nil {
		return "", err
	}
	defer unlock()
	snap, manifest := filepath.Join(dir, "snapshot.db"), filepath.Join(dir, "snapshot.json")
	for range snapshotTries {
		before, err := stampOfDB(db)
		if err != nil {
			return "", err
		}
		if b, err := os.ReadFile(manifest); err == nil {
			var kept snapshotStamp
			if json.Unmarshal(b, &kept) == nil && kept == before {
				if _, err := os.Stat(snap); err == nil {
					return snap, nil
				}
			}
		}
		os.Remove(snap + "-wal")
		os.Remove(snap + "-shm")
		if err := copyInto(db, snap); err != nil {
			return "", err
		}
		if before.WalSize > 0 {
			if err := copyInto(db+"-wal", snap+"-wal"); err != nil {
				return "", err
			}
		}
		if after, err := stampOfDB(db); err != nil || after != before {
			continue // written during the copy: again
		}
		if err := settle(snap); err != nil {
			return "", fmt.Errorf("%s: %w", db, err)
		}
		b, _ := json.Marshal(before)
		if err := atomicfile.ReplaceCache(manifest, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return "", err
		}
		return snap, nil
	}
	return "", fmt.Errorf("%s: changed during each of %d copies; try again when it is idle", db, snapshotTries)
}

// stampOfDB is the stat of db and its -wal (zero when it has none).
func stampOfDB(db string) (snapshotStamp, error) {
	fi, err := regularfile.Stat(db)
	if err != nil {
		return snapshotStamp{}, err
	}
	s := snapshotStamp{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Format: snapshotFormat}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.Ino = int64(st.Ino)
	}
	if wfi, err := os.Lstat(db + "-wal"); err == nil && wfi.Mode().IsRegular() {
		s.WalSize, s.WalMtime = wfi.Size(), wfi.ModTime().UnixNano()
	}
	return s, nil
}

// copyInto copies the file at src to dst (in xdev's cache), whole.
func copyInto(src, dst string) error {
	f, _, err := regularfile.Open(src, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return atomicfile.ReplaceCache(dst, func(w io.Writer) error {
		_, err := io.Copy(w, f)
		return err
	})
}

// settle checkpoints the copy's WAL into it and leaves it one file in
// rollback mode, which a read-only connection opens writing nothing.
func settle(snap string) error {
	c, err := sqlite3.OpenFlags(snap, sqlite3.OPEN_READWRITE|sqlite3.OPEN_NOFOLLOW)
	if err != nil {
		return err
	}
	err = c.Exec(`PRAGMA journal_mode=DELETE`)
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return err
}
