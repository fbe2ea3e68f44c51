package search

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"

	"github.com/ncruces/go-sqlite3"

	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/session"
)

// RefreshOptions say what Refresh covers and how it reports.
type RefreshOptions struct {
	// Harness names whose data dir this is ("xdev", "omp"); hits carry it.
	Harness string
	// Reindex drops everything indexed and reads every file again.
	Reindex bool
	// Progress, when not nil, is called as files are read.
	Progress func(Progress)
	// Paths, when not nil, are the only files that may have changed (a
	// watcher's events): only they are looked at, and no walk of the data
	// dir is made (of a Source, where it is a PathSource). A path that is
	// a directory of the tree makes it a refresh of everything.
	Paths []string
}

// Progress is how far a refresh is: files looked at, and bytes read of
// those that changed.
type Progress struct {
	Files, FilesTotal int
	Bytes, BytesTotal int64
}

// RefreshStats say what a refresh did.
type RefreshStats struct {
	Files     int   // session files found
	Unchanged int   // files skipped by their stat
	Grown     int   // files read from where the last refresh stopped
	Indexed   int   // files read from the start: new, replaced, shrunk or rewritten
	Removed   int   // files gone since the last refresh
	Entries   int   // entries indexed
	Bytes     int64 // bytes read
	Malformed int   // lines skipped as unreadable
	TextBytes int64 // bytes of text indexed (titles, entries' text and thinking)
	// Errors are the files that could not be read; they stay as they were
	// indexed, or out of the index.
	Errors []error
}

// fileRow is a files row: what the index knows of one session file.
type fileRow struct {
	id                  int64
	path, harness       string
	subagent            bool
	ino, size, mtime    int64
	cur                 session.Cursor
	tailOff             int64
	tailHash            []byte
	sessionID, cwd      string
	title               string
	created             int64
	parentSession       string
	malformed, indexedB int64
	err                 string // why the file is not indexed: not a session, unreadable
}

// The page cache's size (KiB) while a refresh writes and while queries
// read (see openDB). A refresh appends segments and merges them, reading
// each page about once, so a cache buys it nothing: at 32 MB a command's
// first index took 99 MiB of RSS against 55, and SQLite's default 2 MB
// cost 4 MiB more than 500 KB (per index: a home has one per harness)
// for the same time (10.2–11.0 s against 10.4–11.2 s for 138 MB of
// sessions). SQLite's memory, in its WebAssembly heap, never shrinks. A
// query of the sessions alone (DB.Sessions) reads each page of a word's
// matches once too, and its GROUP BY's sorter keeps as much as the cache
// in memory: at SQLite's default 2 MB a `search -l` of a word in each of
// 25,000 sessions took 60–62 MiB and 470 ms, at 500 KB 52–53 MiB and
// 430 ms.
const (
	refreshCacheKiB  = 500
	queryCacheKiB    = 32000
	sessionsCacheKiB = 500
)

// Refresh brings the index up to date with the data dir: every session
// file is stat'ed; one that only grew is read from where the index
// stopped (after checking that its last indexed line is still there), one
// that shrank, was replaced or rewritten is read again, a deleted one is
// dropped. An unfinished last line waits for the next refresh. Refresh
// holds the index's lock, so a second Refresh waits for the first and
// then finds nothing to do; queries run meanwhile on the last committed
// state. It never writes to the data dir.
//
// A refresh ctx stops commits what it read, to the entry (a file read
// in part is read on from there by the next refresh, as a file still
// being written is), and returns ctx's error: a caller with a deadline
// searches what is indexed and the next refresh goes on. It reads at
// least one entry, however little time it is given, for refreshes on
// any deadline to get on.
//
// Reindex makes the index anew, a new file, whatever state the old one is
// in. An index SQLite finds damaged is set aside and rebuilt (see
// damage.go), once. A first build (of an empty index) that fails for
// another reason than a cancel leaves no index at all, rather than a stub;
// the DB is then closed.
func (db *DB) Refresh(ctx context.Context, opts RefreshOptions) (RefreshStats, error) {
	if db.conn == nil {
		return RefreshStats{}, errClosed
	}
	unlock, err := db.lockRefresh(ctx)
	if err != nil {
		return RefreshStats{}, err
	}
	defer unlock()
	if err := db.conn.Exec(fmt.Sprintf(`PRAGMA cache_size=-%d`, refreshCacheKiB)); err == nil {
		defer func() {
			// The connection a refresh ends with: a damaged index is closed,
			// and a rebuilt one opened afresh (at the query size already).
			if db.conn != nil {
				db.conn.Exec(fmt.Sprintf(`PRAGMA cache_size=-%d`, queryCacheKiB))
			}
		}()
	}
	if opts.Harness == "" {
		opts.Harness = "xdev"
	}
	db.last = opts
	db.last.Reindex, db.last.Paths = false, nil // a rebuild refreshes everything
	if opts.Reindex {
		if err := db.rebuild(rebuildReason{}); err != nil {
			return RefreshStats{}, err
		}
	}
	first, err := db.int(`SELECT count(*) = 0 FROM files`)
	if isDamaged(err) {
		if err = db.rebuild(*damaged(err)); err == nil {
			first = 1
		}
	}
	if err != nil {
		return RefreshStats{}, db.cacheError(err)
	}
	st, err := db.refresh(ctx, opts)
	if isDamaged(err) {
		if err = db.rebuild(*damaged(err)); err != nil {
			return st, err
		}
		first = 1
		st, err = db.refresh(ctx, opts)
	}
	if err != nil && isSQLiteErr(err) {
		err = db.cacheError(err)
		if first == 1 && ctx.Err() == nil {
			db.discard()
		}
	}
	if st.TextBytes >= reconnectTextBytes && db.conn != nil {
		if rerr := db.reconnect(); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	return st, err
}

// reconnectTextBytes is how much text a refresh indexes before it hands
// its connection's memory back (reconnect): from about there FTS5's
// pending terms, gathered up to ftsHashBytes before each segment is
// written, have grown SQLite's heap by megabytes.
const reconnectTextBytes = 1 << 20

// reconnect closes the connection and opens the index again. SQLite's
// heap lives in the connection's WebAssembly memory, which grows and
// never shrinks: a first index of a home's three harnesses left three
// connections of 4–9 MB each, 20 MB of a search's 62 MiB, for the rest of
// the process (a server's whole life). A connection opened anew starts
// at a few hundred KB, in about 2 ms.
func (db *DB) reconnect() error {
	db.close()
	reason, err := db.open()
	if err == nil && reason != nil {
		err = errors.New(reason.why)
	}
	if err != nil {
		db.close()
		return db.cacheError(fmt.Errorf("opening it again after its refresh: %w", err))
	}
	return nil
}

// errClosed is the error of a DB that was closed (or discarded).
var errClosed = errors.New("search index is closed")

// refresh is Refresh's work, under its lock.
func (db *DB) refresh(ctx context.Context, opts RefreshOptions) (RefreshStats, error) {
	var st RefreshStats
	// Subagent transcripts are always indexed, and left out of hits unless
	// a query asks for them: flipping the choice costs no re-reading.
	var found []session.SessionFile
	only := false // the paths named only
	switch {
	case db.opts.Source != nil:
		var err error
		if ps, ok := db.opts.Source.(PathSource); ok && opts.Paths != nil {
			found, only = nil, true
			if found, err = ps.FilesAt(opts.Paths); err != nil {
				return st, err
			}
		} else if found, err = db.opts.Source.Files(); err != nil {
			return st, err
		}
	case opts.Paths != nil:
		found, only = session.FilesAt(db.dataDir, opts.Paths)
	}
	if !only && db.opts.Source == nil {
		var err error
		if found, err = session.Files(db.dataDir); err != nil {
			return st, fmt.Errorf("listing %s: %w", session.SessionsDir(db.dataDir), err)
		}
	}
	st.Files = len(found)
	var snap map[string]statRow
	var err error
	fromBlob := false
	if only {
		// The rows of the paths named (and of files under one gone, a
		// directory removed): the only ones that can have changed.
		snap, err = db.statRowsOf(opts.Paths)
	} else {
		snap, fromBlob, err = db.statRows()
	}
	if err != nil {
		return st, err
	}
	stats := maps.Clone(snap) // what is left once the found are taken out is gone

	// Compare every stat first: the work and its size are then known, for
	// the progress bar. Only the rows of changed files are read whole.
	var jobs []fileJob
	var total int64
	for _, f := range found {
		sr, ok := stats[f.Path]
		delete(stats, f.Path)
		if ok && sr.ino == int64(f.Ino) && sr.size == f.Size && sr.mtime == f.ModTime.UnixNano() && sr.subagent == f.Subagent {
			st.Unchanged++
			continue
		}
		row, err := db.fileRow(f.Path)
		if err != nil {
			return st, err
		}
		n := f.Size
		if row != nil && row.ino == int64(f.Ino) && f.Size >= row.cur.Offset {
			n -= row.cur.Offset
		}
		jobs = append(jobs, fileJob{f: f, row: row, size: n})
		total += n
	}
	gone := stats // what is left was not found

	// A whole refresh writes the snapshot where there was none (a
	// refresh of paths dropped it).
	w := &writer{db: db, harness: opts.Harness, snap: snap, partial: only, snapDirty: !only && !fromBlob}
	if err := w.begin(); err != nil {
		return st, err
	}
	defer w.rollback()
	for p, r := range gone {
		if err := w.dropFile(p, r.id, true); err != nil {
			return st, err
		}
		st.Removed++
	}
	prog := Progress{FilesTotal: len(jobs), BytesTotal: total}
	if db.opts.Source != nil {
		err := w.sourceFiles(ctx, jobs, &st, prog, opts.Progress)
		if err != nil && (isSQLiteErr(err) || ctx.Err() == nil) {
			return st, err
		}
		// What was read stands: a refresh on a deadline goes on from
		// the next session next time.
		return st, errors.Join(err, w.commit())
	}
	for i, j := range jobs {
		// Looked at once a file is read, for a refresh to get on however
		// little time it is given.
		if err := ctx.Err(); i > 0 && err != nil {
			// What was read stands: a refresh on a deadline (xdev mcp's)
			// goes on from here next time rather than from the start.
			return st, errors.Join(err, w.commit())
		}
		n, err := w.file(ctx, j.f, j.row, &st)
		if err != nil {
			if isSQLiteErr(err) {
				return st, err
			}
			if ctx.Err() != nil {
				st.Bytes += n
				return st, errors.Join(ctx.Err(), w.commit())
			}
			st.Errors = append(st.Errors, err)
		}
		st.Bytes += n
		prog.Files++
		prog.Bytes += j.size
		if opts.Progress != nil {
			opts.Progress(prog)
		}
		if w.pending > commitBytes {
			if err := w.commit(); err != nil {
				return st, err
			}
			if err := w.begin(); err != nil {
				return st, err
			}
		}
	}
	return st, w.commit()
}

// commitBytes is how much a refresh reads between commits: big enough that
// a first index is not paced by commits, small enough that an interrupted
// one keeps most of its work.
const commitBytes = 32 << 20

// isSQLiteErr reports whether err is SQLite's (an *Error, or one of the
// codes it returns bare).
func isSQLiteErr(err error) bool {
	var e *sqlite3.Error
	var code sqlite3.ErrorCode
	var ext sqlite3.ExtendedErrorCode
	return errors.As(err, &e) || errors.As(err, &code) || errors.As(err, &ext)
}

// statRow is what a refresh compares with a file's stat.
type statRow struct {
	id, ino, size, mtime int64
	subagent             bool
}

// statRows returns the stat of every files row, by path: all a refresh
// with nothing to do reads. It comes from the stat snapshot, one blob the
// writer keeps in step with the files table in every transaction (10,500
// rows read one by one took 30 ms here; the blob, 14), else from the
// table.
func (db *DB) statRows() (rows map[string]statRow, fromBlob bool, err error) {
	st, _, err := db.conn.Prepare(`SELECT value FROM blobs WHERE key = 'stats'`)
	if err != nil {
		return nil, false, err
	}
	defer st.Close()
	if st.Step() {
		if rows, ok := decodeStats(st.ColumnRawBlob(0)); ok {
			return rows, true, nil
		}
	}
	if err := st.Err(); err != nil {
		return nil, false, err
	}
	rows, err = db.statRowsWhere("", nil)
	return rows, false, err
}

// statRowsOf returns the stat of the files rows of paths, and of every
// row under a path that is gone (a directory removed).
func (db *DB) statRowsOf(paths []string) (map[string]statRow, error) {
	rows := map[string]statRow{}
	for _, p := range paths {
		p = filepath.Clean(p)
		where, args := "path = ?", []any{p}
		if _, err := os.Lstat(p); err != nil {
			where, args = `path = ? OR path LIKE ? ESCAPE '\'`, []any{p, likeEscape(p+string(filepath.Separator)) + "%"}
		}
		got, err := db.statRowsWhere(" WHERE "+where, args)
		if err != nil {
			return nil, err
		}
		maps.Copy(rows, got)
	}
	return rows, nil
}

// statRowsWhere reads the stat of the files rows the condition keeps.
func (db *DB) statRowsWhere(where string, args []any) (map[string]statRow, error) {
	t, _, err := db.conn.Prepare(`SELECT path, id, ino, size, mtime, subagent FROM files` + where)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	if err := bind(t, args...); err != nil {
		return nil, err
	}
	rows := map[string]statRow{}
	for t.Step() {
		rows[t.ColumnText(0)] = statRow{t.ColumnInt64(1), t.ColumnInt64(2), t.ColumnInt64(3), t.ColumnInt64(4), t.ColumnBool(5)}
	}
	return rows, t.Err()
}

// encodeStats packs a stat snapshot: per file its path and its statRow,
// as varints.
func encodeStats(rows map[string]statRow) []byte {
	size := 1
	for p := range rows {
		size += len(p) + 2 + 4*binary.MaxVarintLen64 + 1
	}
	b := make([]byte, 1, size) // a refresh of 10,000 sessions writes it whole: one allocation
	b[0] = statsFormat
	for p, r := range rows {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
		for _, v := range []int64{r.id, r.ino, r.size, r.mtime} {
			b = binary.AppendVarint(b, v)
		}
		if r.subagent {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	return b
}

// statsFormat is the first byte of an encoded snapshot.
const statsFormat = 1

// decodeStats unpacks encodeStats; ok is false for anything else.
func decodeStats(b []byte) (map[string]statRow, bool) {
	if len(b) == 0 || b[0] != statsFormat {
		return nil, false
	}
	b = b[1:]
	rows := map[string]statRow{}
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return nil, false
		}
		p := string(b[k : k+int(n)])
		b = b[k+int(n):]
		var v [4]int64
		for i := range v {
			x, k := binary.Varint(b)
			if k <= 0 {
				return nil, false
			}
			v[i], b = x, b[k:]
		}
		if len(b) == 0 {
			return nil, false
		}
		rows[p] = statRow{v[0], v[1], v[2], v[3], b[0] == 1}
		b = b[1:]
	}
	return rows, true
}

// fileRow loads the files row of path, nil if it has none.
func (db *DB) fileRow(path string) (*fileRow, error) {
	st, _, err := db.conn.Prepare(`SELECT id, path, harness, subagent, ino, size, mtime, cur_off, cur_line,
		cur_entries, header_line, version, last_id, tail_off, tail_hash, session_id, cwd, title, created,
		parent_session, malformed, indexed_bytes, error FROM files WHERE path = ?`)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	st.BindText(1, path)
	if !st.Step() {
		return nil, st.Err()
	}
	r := &fileRow{
		id: st.ColumnInt64(0), path: st.ColumnText(1), harness: st.ColumnText(2), subagent: st.ColumnBool(3),
		ino: st.ColumnInt64(4), size: st.ColumnInt64(5), mtime: st.ColumnInt64(6),
		tailOff: st.ColumnInt64(13), tailHash: st.ColumnBlob(14, nil),
		sessionID: st.ColumnText(15), cwd: st.ColumnText(16), title: st.ColumnText(17),
		created: st.ColumnInt64(18), parentSession: st.ColumnText(19),
		malformed: st.ColumnInt64(20), indexedB: st.ColumnInt64(21), err: st.ColumnText(22),
	}
	r.cur = session.Cursor{Offset: st.ColumnInt64(7), Line: st.ColumnInt(8), Entries: st.ColumnInt(9),
		HeaderLine: st.ColumnInt(10), Version: st.ColumnInt(11)}.WithLastID(st.ColumnText(12))
	return r, nil
}

// tailBytes is how much of a file before where the index stopped it
// hashes: the last indexed line, or the last 4 KiB of it.
const tailBytes = 4 << 10

// tailHash is the hash a files row keeps of the bytes before its cursor
// (from off to end), to tell a file that grew from one rewritten.
func tailHash(f io.ReaderAt, off, end int64) ([]byte, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%d:%d:", off, end)
	if _, err := io.Copy(h, io.NewSectionReader(f, off, end-off)); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// stillThere reports whether the file at path still holds, where the index
// stopped, the last line it indexed.
func stillThere(path string, r *fileRow) bool {
	f, _, err := regularfile.Open(path, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	h, err := tailHash(f, r.tailOff, r.cur.Offset)
	return err == nil && bytes.Equal(h, r.tailHash)
}
