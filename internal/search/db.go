package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/xdev/xdev/internal/regularfile"
)

func init() { sqlite3.AutoExtension(registerFTS5) }

// schemaVersion is PRAGMA user_version of the index this code writes. An
// index of another version is rebuilt: it is a cache.
const schemaVersion = 4 // 3: CJK characters are tokens of their own; 4: rowids name their file

// schema is the index. files has one row per session file, with where its
// indexed part ends (a session.Cursor) and how to tell that part is still
// the file's (tail_off, tail_hash: the last indexed line). entries has one
// row per entry, text or not, because the active branch is walked through
// all of them; an entry with text has a row of the same rowid in docs, an
// FTS5 table that keeps no copy of the text (content=”): the sessions
// hold it, and snippets are cut from them.
const schema = `
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE blobs(key TEXT PRIMARY KEY, value BLOB NOT NULL) STRICT;
CREATE TABLE files(
	id INTEGER PRIMARY KEY,
	path TEXT NOT NULL UNIQUE,
	harness TEXT NOT NULL,
	subagent INTEGER NOT NULL,
	ino INTEGER NOT NULL,
	size INTEGER NOT NULL,
	mtime INTEGER NOT NULL,
	cur_off INTEGER NOT NULL,
	cur_line INTEGER NOT NULL,
	cur_entries INTEGER NOT NULL,
	header_line INTEGER NOT NULL,
	version INTEGER NOT NULL,
	last_id TEXT NOT NULL,
	tail_off INTEGER NOT NULL,
	tail_hash BLOB NOT NULL,
	session_id TEXT NOT NULL,
	cwd TEXT NOT NULL,
	title TEXT NOT NULL,
	created INTEGER NOT NULL,
	parent_session TEXT NOT NULL,
	malformed INTEGER NOT NULL,
	indexed_bytes INTEGER NOT NULL,
	error TEXT NOT NULL
) STRICT;
CREATE TABLE entries(
	id INTEGER PRIMARY KEY,
	file INTEGER NOT NULL,
	entry_id TEXT NOT NULL,
	parent_id TEXT NOT NULL,
	type TEXT NOT NULL,
	first_kept TEXT NOT NULL,
	role TEXT NOT NULL,
	tool TEXT NOT NULL,
	model TEXT NOT NULL,
	ts INTEGER NOT NULL,
	off INTEGER NOT NULL,
	line INTEGER NOT NULL,
	digest INTEGER NOT NULL,
	on_branch INTEGER NOT NULL,
	in_context INTEGER NOT NULL
) STRICT;
CREATE INDEX entries_digest ON entries(digest) WHERE digest != 0;
CREATE VIRTUAL TABLE docs USING fts5(text, thinking, content='', contentless_delete=1,
	tokenize="unicode61 remove_diacritics 2 tokenchars '_'");
`

// DB is an open search index: one SQLite file for one data dir.
type DB struct {
	path    string
	dataDir string
	conn    *sqlite3.Conn
	opts    OpenOptions
	// last is what the last Refresh was asked to do, for the refresh of
	// an index rebuilt when a query found it damaged.
	last RefreshOptions
	// Notice, when not empty, says why the index was rebuilt (another
	// schema version, a damaged file), in one line.
	Notice string
	// stub is set while the file has no schema: made by this open, or
	// left by one that crashed. An open that fails then removes it
	// rather than leave a file that answers nothing.
	stub bool
}

// ErrCacheDir is returned by Open when the index directory cannot be
// created or written.
var ErrCacheDir = errors.New("cannot write the search index directory")

// DefaultPath returns where the index of dataDir lives:
// os.UserCacheDir()/xdev/search/<hash of dataDir's absolute path>.db, so
// XDG_CACHE_HOME moves it and no index is ever written into a data dir.
func DefaultPath(dataDir string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "xdev", "search", dirKey(abs)+".db"), nil
}

// OpenOptions tune Open. The zero value is ready to use.
type OpenOptions struct {
	// Waiting, when set, is told (once) that the index is locked by
	// another process (its pid, 0 if unknown) and that this one waits.
	Waiting func(holder int)
	// LockTimeout bounds that wait (DefaultLockTimeout when zero): past
	// it, the call fails with a *filelock.BusyError.
	LockTimeout time.Duration
	// Source, when set, is where the index's sessions come from in place
	// of the data dir's files (another harness's transcripts, read in
	// place): dataDir then only names the index.
	Source Source
}

// DefaultLockTimeout is how long a search waits for another process's
// refresh of the same index before it gives up.
const DefaultLockTimeout = 2 * time.Minute

// Open opens (creating it if need be) the index at path for the sessions
// of dataDir. An index of another schema version, of another data dir,
// without page checksums, or that SQLite finds damaged is set aside and
// made anew, and Notice says so: the index is a cache, and the sessions
// are the truth. What is at path must be a regular file, the index's own:
// a symlink there is refused, never followed, and the mode of a file the
// index did not create is never changed.
func Open(path, dataDir string, opts *OpenOptions) (*DB, error) {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCacheDir, err)
	}
	db := &DB{path: path, dataDir: abs}
	if opts != nil {
		db.opts = *opts
	}
	if db.opts.LockTimeout <= 0 {
		db.opts.LockTimeout = DefaultLockTimeout
	}
	// One Open at a time sets the file up: two that found it empty would
	// both create the schema.
	unlock, err := db.lockRefresh(context.Background())
	if err != nil {
		return nil, err
	}
	defer unlock()
	reason, err := db.open()
	if err != nil && db.stub {
		db.discard()
		return nil, db.cacheError(err)
	}
	if err != nil && reason == nil {
		return nil, err
	}
	if reason != nil {
		if err := db.rebuild(*reason); err != nil {
			return nil, err
		}
	}
	return db, nil
}

// privateSidecar creates the file at path, empty and 0600, unless there
// is one (not through a symbolic link).
func privateSidecar(path string) {
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600); err == nil {
		f.Close()
	}
}

// open opens the file and checks it. A reason says why the file must be
// rebuilt; err alone is a failure to report.
func (db *DB) open() (reason *rebuildReason, err error) {
	fresh, err := db.claim()
	if err != nil {
		return nil, err
	}
	db.stub = fresh
	// The busy timeout comes with the name, so that it holds from the
	// first statement on, the extensions' set-up included: a connection
	// opened as another closes (and checkpoints) would otherwise fail.
	// SQLite's files beside the index are created as private as it is
	// (0600): the write-ahead log by modeof, the shared memory, which the
	// VFS makes with the umask's mode, made here first.
	q := url.Values{"_pragma": {"busy_timeout(60000)"}, "modeof": {db.path}, "vfs": {zeroPageVFSName}}
	privateSidecar(db.path + "-shm")
	name := (&url.URL{Scheme: "file", Path: db.path, RawQuery: q.Encode()}).String()
	c, err := sqlite3.OpenFlags(name, sqlite3.OPEN_READWRITE|sqlite3.OPEN_URI|sqlite3.OPEN_NOFOLLOW)
	if err != nil {
		if isDamaged(err) {
			return damagedBy("was not a readable database"), err
		}
		return nil, db.cacheError(err)
	}
	db.conn = c
	if fresh {
		// Every page carries a checksum, verified as it is read: damage
		// to what the index answers from is found, not answered from.
		// Set on the empty file, before anything else is written.
		if err := c.EnableChecksums("main"); err != nil {
			return nil, db.cacheError(err)
		}
	} else if r, err := c.FileControl("main", sqlite3.FCNTL_RESERVE_BYTES); err != nil || r != 8 {
		if err != nil && !isDamaged(err) {
			return nil, db.cacheError(err)
		}
		return outdated("had no page checksums"), nil
	}
	// WAL, so searches read while a refresh writes; it is a property of
	// the file, set once: setting it again would want the file to itself.
	mode, err := db.text(`PRAGMA journal_mode`)
	if err == nil && mode != "wal" {
		_, err = db.text(`PRAGMA journal_mode=WAL`)
	}
	if err == nil {
		// SQLite's own page cache: 32 MB for queries (a search of a common
		// word reads the same pages many times: 2 MB made the searches of
		// TestEveryHitNamesItsLine take 2.4 times as long). A refresh
		// writes with a small one, and a query of sessions alone reads
		// with another (refreshCacheKiB, sessionsCacheKiB).
		err = c.Exec(`PRAGMA synchronous=NORMAL; PRAGMA journal_size_limit=8388608; ` + fmt.Sprintf(`PRAGMA cache_size=-%d`, queryCacheKiB))
	}
	if err != nil {
		if isDamaged(err) {
			return damaged(err), err
		}
		return nil, db.cacheError(err)
	}
	v, err := db.int(`PRAGMA user_version`)
	if err != nil {
		return damaged(err), err
	}
	switch {
	case v == 0:
		db.stub = true
		if err := db.create(); err != nil {
			return nil, err
		}
		db.stub = false
		return nil, nil
	case v != schemaVersion:
		return outdated(fmt.Sprintf("had schema version %d, not %d", v, schemaVersion)), nil
	}
	dir, err := db.meta("data_dir")
	if err != nil {
		return damaged(err), err
	}
	if dir != db.dataDir {
		return outdated(fmt.Sprintf("indexed %s, not %s", dir, db.dataDir)), nil
	}
	return nil, nil
}

// claim makes sure what is at the index's path is the index's own: a
// regular file (made here, 0600, when there is none: fresh), never a
// symlink or a device, which would be refused rather than followed.
func (db *DB) claim() (fresh bool, err error) {
	f, err := os.OpenFile(db.path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err == nil {
		return true, f.Close()
	}
	if !errors.Is(err, fs.ErrExist) {
		return false, db.cacheError(err)
	}
	fi, err := os.Lstat(db.path)
	if err != nil {
		return false, db.cacheError(err)
	}
	if !fi.Mode().IsRegular() {
		return false, fmt.Errorf("%w: %s is not a regular file (a %s); xdev neither follows nor replaces it: remove it, or set XDG_CACHE_HOME elsewhere",
			ErrCacheDir, db.path, regularfile.Kind(fi.Mode()))
	}
	return fi.Size() == 0, nil
}

// FTS5's write settings, kept in the index (docs_config): the size its
// terms are gathered to in memory before they are written as a segment
// (FTS5's default is 1 MiB), and how many segments of a level are merged
// into one of the next (its default 4). A first index of 9,923 omp
// sessions (952 MB) took 53.8 s at the defaults, most of it in flushing
// and merging segments; 34.4 s with these, at 5 MiB more RSS (the terms
// live in SQLite's heap), an index as large, and searches as fast (rare,
// mid and common words, -l and ranked, within 5%). 8 MiB took 35.2 s,
// 32 MiB 41.2 s.
const (
	ftsHashBytes = 4 << 20
	ftsAutomerge = 16
)

// create writes the schema into an empty database, in one transaction so
// that a crash leaves version 0 and the next Open starts over.
func (db *DB) create() error {
	err := db.tx(func() error {
		if err := db.conn.Exec(schema); err != nil {
			return err
		}
		if err := db.conn.Exec(fmt.Sprintf(`INSERT INTO docs(docs, rank) VALUES('hashsize', %d); INSERT INTO docs(docs, rank) VALUES('automerge', %d)`,
			ftsHashBytes, ftsAutomerge)); err != nil {
			return err
		}
		if err := db.exec(`INSERT INTO meta(key, value) VALUES('data_dir', ?)`, db.dataDir); err != nil {
			return err
		}
		return db.conn.Exec(fmt.Sprintf(`PRAGMA user_version=%d`, schemaVersion))
	})
	if err != nil {
		return fmt.Errorf("creating its schema: %w", err)
	}
	return nil
}

// Size returns the index's size in bytes: its pages, as the file holds
// them once the write-ahead log is checkpointed.
func (db *DB) Size() (int64, error) {
	n, err := db.int(`PRAGMA page_count`)
	if err != nil {
		return 0, err
	}
	sz, err := db.int(`PRAGMA page_size`)
	return n * sz, err
}

// Path returns the index file.
func (db *DB) Path() string { return db.path }

// DataDir returns the data dir the index covers.
func (db *DB) DataDir() string { return db.dataDir }

// Close closes the index.
func (db *DB) Close() error { return db.close() }

func (db *DB) close() error {
	if db.conn == nil {
		return nil
	}
	err := db.conn.Close()
	db.conn = nil
	return err
}

// removeIndex deletes an index file and its WAL and shared-memory files.
func removeIndex(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// tx runs fn in a write transaction (BEGIN IMMEDIATE, so that a second
// writer waits at the start rather than failing at its first write).
func (db *DB) tx(fn func() error) error {
	if err := db.conn.Exec(`BEGIN IMMEDIATE`); err != nil {
		return err
	}
	if err := fn(); err != nil {
		db.conn.Exec(`ROLLBACK`)
		return err
	}
	return db.conn.Exec(`COMMIT`)
}

// exec runs one statement with arguments.
func (db *DB) exec(sql string, args ...any) error {
	st, _, err := db.conn.Prepare(sql)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := bind(st, args...); err != nil {
		return err
	}
	return st.Exec()
}

// int runs a query of one integer.
func (db *DB) int(sql string, args ...any) (int64, error) {
	st, _, err := db.conn.Prepare(sql)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	if err := bind(st, args...); err != nil {
		return 0, err
	}
	if !st.Step() {
		return 0, st.Err()
	}
	return st.ColumnInt64(0), nil
}

// text runs a query of one text value.
func (db *DB) text(sql string) (string, error) {
	st, _, err := db.conn.Prepare(sql)
	if err != nil {
		return "", err
	}
	defer st.Close()
	if !st.Step() {
		return "", cmpErr(st.Err(), "no result for "+sql)
	}
	return st.ColumnText(0), nil
}

func (db *DB) meta(key string) (string, error) {
	st, _, err := db.conn.Prepare(`SELECT value FROM meta WHERE key = ?`)
	if err != nil {
		return "", err
	}
	defer st.Close()
	st.BindText(1, key)
	if !st.Step() {
		return "", cmpErr(st.Err(), "no "+key)
	}
	return st.ColumnText(0), nil
}

func cmpErr(err error, msg string) error {
	if err != nil {
		return err
	}
	return errors.New(msg)
}

// bind binds args to st's parameters 1…n.
func bind(st *sqlite3.Stmt, args ...any) error {
	for i, a := range args {
		var err error
		switch v := a.(type) {
		case string:
			err = st.BindText(i+1, v)
		case []byte:
			err = st.BindBlob(i+1, v)
		case int:
			err = st.BindInt64(i+1, int64(v))
		case int64:
			err = st.BindInt64(i+1, v)
		case uint64:
			err = st.BindInt64(i+1, int64(v))
		case bool:
			err = st.BindBool(i+1, v)
		case nil:
			err = st.BindNull(i + 1)
		default:
			err = fmt.Errorf("bind: unsupported %T", a)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// dirKey names the index of a data dir: its base name for people, and a
// hash of its path so that two dirs never share an index.
func dirKey(abs string) string {
	base := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, filepath.Base(abs))
	return fmt.Sprintf("%s-%016x", strings.TrimLeft(base, "."), fnv64(abs))
}
