package pgstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/xdev/xdev/internal/session"
)

// blockSize is how much of a session one query fetches (2 MiB: 1 MiB
// took 0.52 s to open the 104 MB session, 2 MiB 0.45 s, 4 MiB 0.54 s
// and twice the heap): a ReadAt is
// served from aligned blocks, the last few kept, so the backward walk and
// the decoding pass after it (which rereads the window's lines in file
// order) fetch each block about once.
const blockSize = 2 << 20

// cachedBlocks is how many blocks a reader keeps.
const cachedBlocks = 2

// lineReader is an io.ReaderAt over a session stored as rows of lines:
// the bytes of the file the rows were pushed from, each line followed by
// its '\n'. It is how session.OpenReader reads a session from the
// database by the file store's own rules, holding only the window. A
// reader on the pool fetches the next block in the direction it is read
// while the last one is parsed: the server works while the client does.
type lineReader struct {
	ctx  context.Context
	db   *DB
	q    querier // the pool, or a push's transaction (which fetches no block ahead)
	key  int64
	size int64

	mu     sync.Mutex
	blocks [cachedBlocks]struct {
		start int64
		data  []byte
	}
	spare   chan []byte // buffers of evicted blocks, for the next fetches
	next    int         // the block slot to reuse next
	last    int64       // the block read last, to tell the direction of reading
	pending *fetch      // the block being fetched ahead
}

// fetch is a block fetched ahead.
type fetch struct {
	start int64
	done  chan struct{}
	data  []byte
	err   error
}

func (db *DB) newReader(ctx context.Context, key, size int64) *lineReader {
	r := &lineReader{ctx: ctx, db: db, q: db.pool, key: key, size: size, last: -1, spare: make(chan []byte, cachedBlocks+1)}
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
// at its end): cached, fetched ahead, or fetched now.
func (r *lineReader) block(start int64) ([]byte, error) {
	for i := range r.blocks {
		if r.blocks[i].start == start {
			return r.blocks[i].data, nil
		}
	}
	var data []byte
	var err error
	if f := r.pending; f != nil {
		<-f.done
		r.pending = nil
		if f.start == start {
			data, err = f.data, f.err
		}
	}
	if data == nil && err == nil {
		data, err = r.fetch(start)
	}
	if err != nil {
		return nil, err
	}
	slot := &r.blocks[r.next]
	r.next = (r.next + 1) % cachedBlocks
	if slot.data != nil {
		select {
		case r.spare <- slot.data[:0]:
		default:
		}
	}
	slot.start, slot.data = start, data
	if _, pool := r.q.(*pgxpool.Pool); pool && r.last >= 0 {
		ahead := start + blockSize
		if start < r.last {
			ahead = start - blockSize
		}
		if ahead >= 0 && ahead < r.size && !r.cached(ahead) {
			f := &fetch{start: ahead, done: make(chan struct{})}
			r.pending = f
			go func() {
				defer close(f.done)
				f.data, f.err = r.fetch(ahead)
			}()
		}
	}
	r.last = start
	return data, nil
}

func (r *lineReader) cached(start int64) bool {
	for i := range r.blocks {
		if r.blocks[i].start == start {
			return true
		}
	}
	return false
}

// fetch reads the block at start from the server: the lines that overlap
// it (the last one starting at or before start, and every one after it
// that starts before its end), of a long line only the part inside it.
// The bytes are taken from the wire without another copy.
func (r *lineReader) fetch(start int64) ([]byte, error) {
	end := min(start+blockSize, r.size)
	var buf []byte
	select {
	case buf = <-r.spare:
	default:
		buf = make([]byte, 0, blockSize)
	}
	rows, err := r.q.Query(r.ctx, `
SELECT off, octet_length(line),
	CASE WHEN off >= $2 AND off + octet_length(line) < $3 THEN line
	ELSE substring(line FROM (greatest($2 - off, 0) + 1)::int FOR ($3 - greatest(off, $2))::int) END
FROM `+r.db.t("lines")+`
WHERE session = $1 AND off < $3
  AND off >= coalesce((SELECT max(off) FROM `+r.db.t("lines")+` WHERE session = $1 AND off <= $2), 0)
ORDER BY off`, r.key, start, end)
	if err != nil {
		return nil, r.db.redact(err)
	}
	defer rows.Close()
	binary := len(rows.FieldDescriptions()) == 3 && rows.FieldDescriptions()[2].Format == pgx.BinaryFormatCode
	for rows.Next() {
		var off, n int64
		var part []byte
		if binary {
			raw := rows.RawValues()
			if len(raw[0]) != 8 || len(raw[1]) != 4 {
				return nil, fmt.Errorf("session %d: unexpected row encoding", r.key)
			}
			off, n, part = int64(be64(raw[0])), int64(int32(be32(raw[1]))), raw[2]
		} else if err := rows.Scan(&off, &n, &part); err != nil {
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
	return buf, nil
}

func be64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }
func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }

// querier runs queries: a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// OpenSession opens a stored session as session.Open opens a file: read
// backward from its end, by the same rules, holding only the window. The
// store it returns is read-only.
// Its image blobs come from the database's blob table unless opts.Blobs
// says otherwise.
func (db *DB) OpenSession(ctx context.Context, s *Session, opts *session.OpenOptions) (*session.Store, error) {
	o := session.OpenOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Blobs == nil {
		o.Blobs = db.BlobSource(ctx)
	}
	return session.OpenReader(s.Name(), db.newReader(ctx, s.Key, s.Size), s.Size, &o)
}

// OpenIndex reads a stored session into a session.Index, as
// session.OpenIndex reads a file, through its rows a block at a time: the
// views that go over every entry (the tree, the raw entries, an export)
// read a stored session without a copy on disk. Images resolve from the
// blob table.
func (db *DB) OpenIndex(ctx context.Context, s *Session) (*session.Index, error) {
	return session.NewIndex(s.Name(), db.newReader(ctx, s.Key, s.Size), s.Size, &session.OpenOptions{Blobs: db.BlobSource(ctx)})
}

// BlobSource is the database's blob table as a read-only blob store.
func (db *DB) BlobSource(ctx context.Context) *session.BlobStore {
	return session.NewBlobSource("db:blobs", func(digest string) ([]byte, error) {
		var data []byte
		err := db.pool.QueryRow(ctx, `SELECT data FROM `+db.t("blobs")+` WHERE name = $1`, digest).Scan(&data)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("db:blobs/%s: %w", digest, fs.ErrNotExist)
		}
		return data, db.redact(err)
	})
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
