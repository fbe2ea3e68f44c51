package pgstore

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/xdev/xdev/internal/session"
)

// blockSize is how much of a session one query fetches: a ReadAt is
// served from aligned blocks, the last few kept, so the backward walk and
// the decoding pass after it (which rereads the window's lines in file
// order) fetch each block about once.
const blockSize = 1 << 20

// cachedBlocks is how many blocks a reader keeps.
const cachedBlocks = 4

// lineReader is an io.ReaderAt over a session stored as rows of lines:
// the bytes of the file the rows were pushed from, each line followed by
// its '\n'. It is how session.OpenReader reads a session from the
// database by the file store's own rules, holding only the window.
type lineReader struct {
	ctx  context.Context
	db   *DB
	q    querier // the pool, or a push's transaction
	key  int64
	size int64

	mu     sync.Mutex
	blocks [cachedBlocks]struct {
		start int64
		data  []byte
	}
	next int // the block slot to reuse next
}

func (db *DB) newReader(ctx context.Context, key, size int64) *lineReader {
	r := &lineReader{ctx: ctx, db: db, q: db.pool, key: key, size: size}
	for i := range r.blocks {
		r.blocks[i].start = -1
	}
	return r
}

// ReadAt reads len(p) bytes at off, as a file would.
func (r *lineReader) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for n < len(p) {
		at := off + int64(n)
		if at >= r.size {
			return n, io.EOF
		}
		start := at - at%blockSize
		b, err := r.block(start)
		if err != nil {
			return n, err
		}
		k := copy(p[n:], b[at-start:])
		if k == 0 {
			return n, fmt.Errorf("session %d: no bytes at offset %d of %d: the rows do not tile the session", r.key, at, r.size)
		}
		n += k
	}
	return n, nil
}

// block returns the bytes [start, start+blockSize) of the session (fewer
// at its end), fetched or cached.
func (r *lineReader) block(start int64) ([]byte, error) {
	for i := range r.blocks {
		if r.blocks[i].start == start {
			return r.blocks[i].data, nil
		}
	}
	end := min(start+blockSize, r.size)
	slot := &r.blocks[r.next]
	r.next = (r.next + 1) % cachedBlocks
	buf := slot.data[:0]
	slot.start = -1
	// The lines that overlap [start, end): the last one starting at or
	// before start, and every one after it that starts before end. Of a
	// long line only the part inside the block is sent.
	rows, err := r.q.Query(r.ctx, `
SELECT off, octet_length(line), substring(line FROM (greatest($2 - off, 0) + 1)::int FOR ($3 - greatest(off, $2))::int)
FROM `+r.db.t("lines")+`
WHERE session = $1 AND off < $3
  AND off >= coalesce((SELECT max(off) FROM `+r.db.t("lines")+` WHERE session = $1 AND off <= $2), 0)
ORDER BY off`, r.key, start, end)
	if err != nil {
		return nil, r.db.redact(err)
	}
	defer rows.Close()
	for rows.Next() {
		var off, n int64
		var part []byte
		if err := rows.Scan(&off, &n, &part); err != nil {
			return nil, r.db.redact(err)
		}
		if want := max(off, start); want != start+int64(len(buf)) {
			return nil, fmt.Errorf("session %d: a gap in its lines at offset %d", r.key, start+int64(len(buf)))
		}
		buf = append(buf, part...)
		if nl := off + n; nl >= start && nl < end {
			buf = append(buf, '\n')
		}
	}
	if err := rows.Err(); err != nil {
		return nil, r.db.redact(err)
	}
	if int64(len(buf)) != end-start {
		return nil, fmt.Errorf("session %d: %d bytes at offset %d, want %d: the rows do not tile the session", r.key, len(buf), start, end-start)
	}
	slot.start, slot.data = start, buf
	return buf, nil
}

// querier runs queries: a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// OpenSession opens a stored session as session.Open opens a file: read
// backward from its end, by the same rules, holding only the window. The
// store it returns is read-only.
func (db *DB) OpenSession(ctx context.Context, s *Session, opts *session.OpenOptions) (*session.Store, error) {
	return session.OpenReader(s.Name(), db.newReader(ctx, s.Key, s.Size), s.Size, opts)
}

// WriteSession writes a stored session's bytes to w, exactly as they were
// pushed, a row at a time.
func (db *DB) WriteSession(ctx context.Context, s *Session, w io.Writer) error {
	return db.writeLines(ctx, s.Key, 0, w)
}

// writeLines writes the lines of session key from offset from on, each
// with its '\n'.
func (db *DB) writeLines(ctx context.Context, key, from int64, w io.Writer) error {
	rows, err := db.pool.Query(ctx, `SELECT line FROM `+db.t("lines")+` WHERE session = $1 AND off >= $2 ORDER BY off`, key, from)
	if err != nil {
		return db.redact(err)
	}
	defer rows.Close()
	for rows.Next() {
		var line []byte
		if err := rows.Scan(&line); err != nil {
			return db.redact(err)
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	return db.redact(rows.Err())
}
