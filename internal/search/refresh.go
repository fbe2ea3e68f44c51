package search

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/ncruces/go-sqlite3"

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

// Refresh brings the index up to date with the data dir: every session
// file is stat'ed; one that only grew is read from where the index
// stopped (after checking that its last indexed line is still there), one
// that shrank, was replaced or rewritten is read again, a deleted one is
// dropped. An unfinished last line waits for the next refresh. Refresh
// holds the index's lock, so a second Refresh waits for the first and
// then finds nothing to do; queries run meanwhile on the last committed
// state. It never writes to the data dir.
func (db *DB) Refresh(ctx context.Context, opts RefreshOptions) (RefreshStats, error) {
	var st RefreshStats
	unlock, err := db.lockRefresh(ctx)
	if err != nil {
		return st, err
	}
	defer unlock()
	if opts.Harness == "" {
		opts.Harness = "xdev"
	}
	if opts.Reindex {
		if err := db.tx(func() error {
			return db.conn.Exec(`DELETE FROM docs; DELETE FROM entries; DELETE FROM files;`)
		}); err != nil {
			return st, err
		}
	}
	// Subagent transcripts are always indexed, and left out of hits unless
	// a query asks for them: flipping the choice costs no re-reading.
	found, err := session.Files(db.dataDir, true)
	if err != nil {
		return st, fmt.Errorf("listing %s: %w", session.SessionsDir(db.dataDir), err)
	}
	st.Files = len(found)
	rows, err := db.fileRows()
	if err != nil {
		return st, err
	}

	// Stat everything first: the work and its size are then known, for
	// the progress bar.
	type job struct {
		f    session.SessionFile
		fi   os.FileInfo
		row  *fileRow
		size int64
	}
	var jobs []job
	var total int64
	seen := make(map[string]bool, len(found))
	for _, f := range found {
		seen[f.Path] = true
		fi, err := os.Lstat(f.Path)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				st.Errors = append(st.Errors, err)
			}
			continue
		}
		row := rows[f.Path]
		if row != nil && row.ino == inode(fi) && row.size == fi.Size() && row.mtime == fi.ModTime().UnixNano() && row.subagent == f.Subagent {
			st.Unchanged++
			continue
		}
		n := fi.Size()
		if row != nil && row.ino == inode(fi) && fi.Size() >= row.cur.Offset {
			n -= row.cur.Offset
		}
		jobs = append(jobs, job{f: f, fi: fi, row: row, size: n})
		total += n
	}
	var gone []*fileRow
	for p, r := range rows {
		if !seen[p] {
			gone = append(gone, r)
		}
	}

	w := &writer{db: db, harness: opts.Harness}
	if err := w.begin(); err != nil {
		return st, err
	}
	defer w.rollback()
	for _, r := range gone {
		if err := w.dropFile(r.id, true); err != nil {
			return st, err
		}
		st.Removed++
	}
	prog := Progress{FilesTotal: len(jobs), BytesTotal: total}
	for _, j := range jobs {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		n, err := w.file(j.f, j.fi, j.row, &st)
		if err != nil {
			if isSQLiteErr(err) {
				return st, err
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

func isSQLiteErr(err error) bool {
	var e *sqlite3.Error
	return errors.As(err, &e)
}

func inode(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Ino)
	}
	return 0
}

// fileRows loads every files row, by path.
func (db *DB) fileRows() (map[string]*fileRow, error) {
	st, _, err := db.conn.Prepare(`SELECT id, path, harness, subagent, ino, size, mtime, cur_off, cur_line,
		cur_entries, header_line, version, last_id, tail_off, tail_hash, session_id, cwd, title, created,
		parent_session, malformed, indexed_bytes, error FROM files`)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	rows := map[string]*fileRow{}
	for st.Step() {
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
		rows[r.path] = r
	}
	return rows, st.Err()
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
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	h, err := tailHash(f, r.tailOff, r.cur.Offset)
	return err == nil && bytes.Equal(h, r.tailHash)
}
