package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/secrets"
	"github.com/xdev/xdev/internal/session"
)

// PushOptions tune Push.
type PushOptions struct {
	// Origin names who pushes: the pushes it made are remembered under it,
	// so that a file unchanged since is not read again. Empty means
	// DefaultOrigin(dataDir).
	Origin string
	// Progress, when set, is called as files are done.
	Progress func(done, total int)
	// Workers is how many files are pushed at once (2 when zero).
	Workers int
	// Raw stores the files' bytes as they are. A push masks the secrets
	// in every line unless told so (masked.go): what a team's store holds
	// every member reads.
	Raw bool
}

// DefaultOrigin is this machine's name and the data dir.
func DefaultOrigin(dataDir string) string {
	host, err := os.Hostname()
	if err != nil {
		host = "localhost"
	}
	return host + ":" + dataDir
}

// PushStats say what a push did.
type PushStats struct {
	Files     int         `json:"files"`     // session files in the data dir
	Unchanged int         `json:"unchanged"` // not read: their stat is as this origin last pushed them
	Same      int         `json:"same"`      // read, and the database held them already
	New       int         `json:"new"`       // stored for the first time
	Appended  int         `json:"appended"`  // grown: their new lines appended to the stored revision
	Revised   int         `json:"revised"`   // rewritten, or diverged from the stored one: stored as a new revision
	Behind    int         `json:"behind"`    // the database holds more of them than the file (a pull brings it)
	Retitled  int         `json:"retitled"`  // the title slot rewritten in place: the stored one updated
	Lines     int64       `json:"lines"`     // lines stored
	Bytes     int64       `json:"bytes"`     // bytes stored
	Masked    int         `json:"masked"`    // secrets masked in the lines stored (none with PushOptions.Raw)
	Blobs     int         `json:"blobs"`     // image blobs stored
	Failed    []FileError `json:"-"`         // files not pushed, and why
}

// FileError is a file a push or pull left alone, and why.
type FileError struct {
	Path string
	Err  error
}

func (e FileError) Error() string { return e.Path + ": " + e.Reason() }

// Reason is why the file was left alone, without its path in front (most
// errors of reading a file begin with its name already), so that one who
// prints the path and the reason names the file once.
func (e FileError) Reason() string {
	return strings.TrimPrefix(e.Err.Error(), e.Path+": ")
}

// fileProblem marks an error of the file pushed (unreadable, not a
// session), as opposed to the database's: a push reports it and goes on
// with the other files, but stops at the database's first error.
type fileProblem struct{ err error }

func (e *fileProblem) Error() string { return e.err.Error() }
func (e *fileProblem) Unwrap() error { return e.err }

func problem(err error) error {
	if err == nil {
		return nil
	}
	return &fileProblem{err}
}

// pushRecord is what a push remembers of a file it pushed: its stat,
// and for a masked push where the masked lines stood against the file
// (masked.go).
type pushRecord struct {
	size, mtime, ino int64
	key              int64 // the revision pushed to
	masked           bool
	srcEnd           int64  // the file's bytes pushed: up to its last complete line
	storedEnd        int64  // where the revision's stored lines ended then
	tail             []byte // tailDigest of the file up to srcEnd
}

// outcome is what pushing one file did.
type outcome int

const (
	outSame outcome = iota
	outNew
	outAppended
	outRevised
	outBehind
)

// Push stores the session files of dataDir, and only what changed since
// the last push: each file's lines past the stored revision's end, once
// the bytes before that end (the last 4 KiB, the title slot aside) are
// found equal to the stored ones. A file whose stored part differs (omp
// rewrote it, or another machine's copy went another way) is stored whole
// as a new revision, which becomes the current one; the old revision is
// kept, never merged. A title slot rewritten in place updates the stored
// slot. Each file is pushed in one transaction: a failure or a crash
// leaves it as it was stored before. A file that cannot be read is
// reported in PushStats.Failed and the others are pushed.
func (db *DB) Push(ctx context.Context, dataDir string, opts PushOptions) (PushStats, error) {
	var st PushStats
	if opts.Origin == "" {
		opts.Origin = DefaultOrigin(dataDir)
	}
	// What this origin pushed before is fetched while the files are
	// listed: the one is a round trip, the other system calls.
	var pushed map[string]pushRecord
	var pushedErr error
	fetched := make(chan struct{})
	go func() {
		defer close(fetched)
		pushed, pushedErr = db.pushRecords(ctx, opts.Origin)
	}()
	files, err := session.Files(dataDir)
	<-fetched
	if err != nil {
		return st, err
	}
	if pushedErr != nil {
		return st, pushedErr
	}
	st.Files = len(files)
	// Whether a file this origin never pushed is stored (another machine
	// pushed it) is asked only when there is one.
	var current map[string]bool
	root := session.SessionsDir(dataDir)
	// A job is one file, or a batch of files never pushed before.
	type job struct {
		files []session.SessionFile
		rels  []string
		batch bool
	}
	var jobs []job
	var fresh job
	for _, f := range files {
		r, ok := strings.CutPrefix(f.Path, root+string(filepath.Separator))
		if !ok {
			return st, fmt.Errorf("%s: not under %s", f.Path, root)
		}
		rel := storedPath(filepath.ToSlash(r), !opts.Raw)
		p, ok := pushed[rel]
		if ok && p.size == f.Size && p.mtime == f.ModTime.UnixNano() && p.ino == int64(f.Ino) && p.masked == !opts.Raw {
			st.Unchanged++
			continue
		}
		if !ok && current == nil {
			if current, err = db.currentPaths(ctx); err != nil {
				return st, err
			}
		}
		if ok || current[rel] {
			jobs = append(jobs, job{files: []session.SessionFile{f}, rels: []string{rel}})
			continue
		}
		fresh.files, fresh.rels, fresh.batch = append(fresh.files, f), append(fresh.rels, rel), true
		if len(fresh.files) == newBatch {
			jobs, fresh = append(jobs, fresh), job{}
		}
	}
	if len(fresh.files) > 0 {
		jobs = append(jobs, fresh)
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = 2
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var fatal error
	done := st.Unchanged
	report := func() {
		if opts.Progress != nil {
			opts.Progress(done, st.Files)
		}
	}
	report()
	// settle counts one file's push, or stops the push at the database's
	// first error.
	settle := func(f session.SessionFile, res fileResult, err error) {
		mu.Lock()
		defer mu.Unlock()
		done++
		var fp *fileProblem
		switch {
		case errors.As(err, &fp):
			st.Failed = append(st.Failed, FileError{f.Path, fp.err})
		case err != nil:
			if fatal == nil && ctx.Err() == nil {
				fatal = db.pushError(f.Path, err)
			}
			cancel()
		default:
			st.add(res)
		}
		report()
	}
	queue := make(chan job)
	var wg sync.WaitGroup
	for range min(workers, max(len(jobs), 1)) {
		wg.Go(func() {
			for j := range queue {
				if j.batch {
					res, err := db.pushNew(ctx, opts, j.files, j.rels)
					if err == nil {
						for i, f := range j.files {
							settle(f, res[i], nil)
						}
						continue
					}
					// One at a time: a bad file is reported alone, and a path
					// another writer stored meanwhile is appended to.
				}
				for i, f := range j.files {
					rec, known := pushed[j.rels[i]]
					res, err := db.pushFile(ctx, opts, f, j.rels[i], rec, known)
					settle(f, res, err)
				}
			}
		})
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		queue <- j
	}
	close(queue)
	wg.Wait()
	if fatal != nil {
		return st, fatal
	}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	return st, db.pushBlobs(ctx, dataDir, &st)
}

// pushError is the error that stops a push at a file: the database's,
// which names the file, unless it is the role's (the role may not write
// xdev's tables), which no file caused.
func (db *DB) pushError(path string, err error) error {
	if pgCode(err) == codeInsufficientPriv || pgCode(err) == codeReadOnlyTx {
		return fmt.Errorf("this role may not push to schema %s (%w): a read-only role lists, shows and searches; "+
			"sync as a role granted INSERT, UPDATE and DELETE on the schema's tables (docs/teams.md)", db.schema, err)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// fileResult is what pushing one file did.
type fileResult struct {
	out          outcome
	retitled     bool
	lines, bytes int64
	masked       int // secrets masked in the lines stored
}

// Add adds the counts of another push (of another data dir) to st.
func (st *PushStats) Add(o PushStats) {
	st.Files += o.Files
	st.Unchanged += o.Unchanged
	st.Same += o.Same
	st.New += o.New
	st.Appended += o.Appended
	st.Revised += o.Revised
	st.Behind += o.Behind
	st.Retitled += o.Retitled
	st.Lines += o.Lines
	st.Bytes += o.Bytes
	st.Masked += o.Masked
	st.Blobs += o.Blobs
	st.Failed = append(st.Failed, o.Failed...)
}

func (st *PushStats) add(r fileResult) {
	switch r.out {
	case outSame:
		st.Same++
	case outNew:
		st.New++
	case outAppended:
		st.Appended++
	case outRevised:
		st.Revised++
	case outBehind:
		st.Behind++
	}
	if r.retitled {
		st.Retitled++
	}
	st.Lines += r.lines
	st.Bytes += r.bytes
	st.Masked += r.masked
}

// pushRecords loads what origin pushed before, by path.
func (db *DB) pushRecords(ctx context.Context, origin string) (map[string]pushRecord, error) {
	rows, err := db.pool.Query(ctx, `SELECT path, size, mtime_ns, ino, session, masked, src_end, stored_end, tail FROM `+db.t("pushes")+` WHERE origin = $1`, origin)
	if err != nil {
		return nil, db.redact(err)
	}
	defer rows.Close()
	out := make(map[string]pushRecord)
	for rows.Next() {
		var path string
		var p pushRecord
		if err := rows.Scan(&path, &p.size, &p.mtime, &p.ino, &p.key, &p.masked, &p.srcEnd, &p.storedEnd, &p.tail); err != nil {
			return nil, db.redact(err)
		}
		out[path] = p
	}
	return out, db.redact(rows.Err())
}

// pushFile pushes one file, again when another writer's transaction got
// in its way (two machines pushing the same session at once).
func (db *DB) pushFile(ctx context.Context, opts PushOptions, f session.SessionFile, rel string, rec pushRecord, known bool) (fileResult, error) {
	for attempt := 1; ; attempt++ {
		res, err := db.pushOnce(ctx, opts, f, rel, rec, known)
		switch pgCode(err) {
		case codeUniqueViolation, codeSerializationFailure, codeDeadlock:
			if attempt < 5 {
				continue
			}
		}
		return res, err
	}
}

// pushOnce pushes one file in one transaction. rec is what this origin
// pushed of it before, if known.
func (db *DB) pushOnce(ctx context.Context, opts PushOptions, f session.SessionFile, rel string, rec pushRecord, known bool) (fileResult, error) {
	var res fileResult
	if !utf8.ValidString(rel) {
		return res, problem(fmt.Errorf("%s: the file name is not UTF-8, which a stored path must be", f.Path))
	}
	fh, fi, err := regularfile.Open(f.Path, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil // deleted since it was listed: nothing to push
	}
	if err != nil {
		return res, problem(err)
	}
	defer fh.Close()
	size := fi.Size()
	local, err := session.ReadSlotLine(fh, size)
	if err != nil {
		return res, problem(fmt.Errorf("%s: %w", f.Path, err))
	}
	end, err := completeEnd(fh, size)
	if err != nil {
		return res, problem(fmt.Errorf("%s: %w", f.Path, err))
	}
	masked := !opts.Raw
	var tail []byte
	if masked {
		if tail, err = tailDigest(fh, int64(len(local)), end); err != nil {
			return res, problem(fmt.Errorf("%s: %w", f.Path, err))
		}
	}
	// whole is the file's lines masked, made once whatever the
	// transaction's attempts.
	var view *maskedView
	whole := func() (*maskedView, error) {
		if view == nil {
			v, err := maskView(f.Path, fh, 0, end, 0)
			if err != nil {
				return nil, problem(err)
			}
			view = v
		}
		return view, nil
	}
	err = db.tx(ctx, func(tx pgx.Tx) error {
		res = fileResult{}
		cur, err := scanSession(tx.QueryRow(ctx, `SELECT `+sessionColumns+` FROM `+db.t("sessions")+` WHERE path = $1 AND current FOR UPDATE`, rel))
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		// What is stored: the file's lines from its offset end, or
		// their masked view's.
		var r io.ReaderAt = fh
		rend, slot := end, local
		useWhole := func() error {
			if !masked {
				return nil
			}
			v, err := whole()
			if err != nil {
				return err
			}
			r, rend, slot = v, v.end, v.slot
			return nil
		}
		from := session.Cursor{}
		switch {
		case cur == nil:
			res.out = outNew
			if err := useWhole(); err != nil {
				return err
			}
			if cur, err = db.newRevision(ctx, tx, rel, 1, opts.Origin, f.Subagent, masked); err != nil {
				return err
			}
		default:
			stored, err := db.storedSlot(ctx, tx, cur.Key)
			if err != nil {
				return err
			}
			if masked && cur.Masked && known && rec.masked && rec.key == cur.Key && rec.storedEnd == cur.Size && rec.srcEnd <= end &&
				(local == nil) == (stored == nil) {
				// The file this origin pushed masked, if its bytes before
				// where that push stopped are as they were: its new lines
				// are masked and appended, and nothing else is read.
				was, err := tailDigest(fh, int64(len(local)), rec.srcEnd)
				if err != nil {
					return problem(fmt.Errorf("%s: %w", f.Path, err))
				}
				if bytes.Equal(was, rec.tail) {
					v, err := maskView(f.Path, fh, rec.srcEnd, end, rec.storedEnd)
					if err != nil {
						return problem(err)
					}
					r, rend = v, v.end
					if local != nil {
						if m, n := maskSlot(secrets.Default(), local); n > 0 {
							slot = m
						}
					}
					res.out = outSame
					if rend > cur.Size {
						res.out, from = outAppended, cur.cursor
					}
					break
				}
			}
			if err := useWhole(); err != nil {
				return err
			}
			body := int64(len(slot))
			switch {
			case cur.Masked != masked || (slot == nil) != (stored == nil):
				res.out = outRevised
			case rend >= cur.Size:
				same, err := db.sameBytes(ctx, tx, cur, r, max(body, cur.Size-tailCheck), cur.Size)
				if err != nil {
					return err
				}
				switch {
				case !same:
					res.out = outRevised
				case rend > cur.Size:
					res.out, from = outAppended, cur.cursor
				default:
					res.out = outSame
				}
			default: // the file is shorter than the stored revision
				same, err := db.sameBytes(ctx, tx, cur, r, max(body, rend-tailCheck), rend)
				if err == nil && same {
					same, err = db.lineStarts(ctx, tx, cur.Key, rend)
				}
				if err != nil {
					return err
				}
				res.out = outRevised
				if same {
					res.out = outBehind
				}
			}
		}
		if res.out != outNew && res.out != outRevised && slot != nil {
			stored, err := db.storedSlot(ctx, tx, cur.Key)
			if err != nil {
				return err
			}
			if !bytes.Equal(slot, stored) && session.SlotWrittenAfter(slot, stored) {
				if err := db.setSlot(ctx, tx, cur.Key, slot); err != nil {
					return err
				}
				res.retitled = true
			}
		}
		if res.out == outRevised {
			if _, err := tx.Exec(ctx, `UPDATE `+db.t("sessions")+` SET current = false WHERE key = $1`, cur.Key); err != nil {
				return err
			}
			if cur, err = db.newRevision(ctx, tx, rel, cur.Revision+1, opts.Origin, f.Subagent, masked); err != nil {
				return err
			}
		}
		storedEnd := max(cur.Size, rend)
		if res.out == outNew || res.out == outAppended || res.out == outRevised {
			next, n, err := db.copyLines(ctx, tx, cur.Key, f.Path, r, rend, from)
			if err != nil {
				return err
			}
			if next.Version == 0 {
				return problem(fmt.Errorf("%s: %w", f.Path, session.ErrNoHeader))
			}
			res.lines, res.bytes = n, next.Offset-from.Offset
			if v, ok := r.(*maskedView); ok {
				res.masked = v.maskedFrom(from.Offset)
			}
			if err := db.setMeta(ctx, tx, cur.Key, next, from.Version == 0, slot, fi.ModTime()); err != nil {
				return err
			}
			storedEnd = next.Offset
		}
		if res.out == outBehind {
			storedEnd = rend
		}
		p := db.pushedStmt(opts.Origin, rel, cur.Key, fi, pushRecord{masked: masked, srcEnd: end, storedEnd: storedEnd, tail: tail})
		_, err = tx.Exec(ctx, p.sql, p.args...)
		return err
	})
	return res, err
}

// tailCheck is how many bytes before a stored revision's end a push
// compares with the file's before appending to it.
const tailCheck = 4 << 10

func (db *DB) newRevision(ctx context.Context, tx pgx.Tx, path string, revision int, origin string, subagent, masked bool) (*Session, error) {
	s := &Session{Path: path, Revision: revision, Current: true, Origin: origin, Subagent: subagent, Masked: masked}
	err := tx.QueryRow(ctx, `INSERT INTO `+db.t("sessions")+` (path, revision, id, origin, subagent, masked) VALUES ($1, $2, '', $3, $4, $5) RETURNING key`,
		path, revision, origin, subagent, masked).Scan(&s.Key)
	return s, err
}

// copyLines stores the lines of the file r (named name, end bytes long)
// from cursor c on, streamed through COPY, and returns the cursor after
// them and how many lines it stored.
func (db *DB) copyLines(ctx context.Context, tx pgx.Tx, key int64, name string, r io.ReaderAt, end int64, c session.Cursor) (session.Cursor, int64, error) {
	curs, n, err := db.copyFiles(ctx, tx, []copyItem{{key, name, r, end, c}})
	return curs[0], n, err
}

// copyItem is a file a COPY streams the lines of.
type copyItem struct {
	key  int64 // its session's row
	name string
	r    io.ReaderAt
	end  int64 // where its last complete line ends
	from session.Cursor
}

// copyFiles stores the lines of the files in one COPY, read one after the
// other by a scanner feeding it, and returns each file's cursor after its
// lines and how many lines it stored in all. A file the scanner cannot
// read fails it (a fileProblem naming the file).
func (db *DB) copyFiles(ctx context.Context, tx pgx.Tx, items []copyItem) ([]session.Cursor, int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	src := &rowSource{rows: make(chan keyedRow, 256), curs: make([]session.Cursor, len(items))}
	go func() {
		defer close(src.rows)
		for i, it := range items {
			cur, err := scanLines(it.name, it.r, it.end, it.from, func(row lineRow) error {
				select {
				case src.rows <- keyedRow{it.key, row}:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
			src.curs[i] = cur
			if err != nil {
				if !errors.Is(err, context.Canceled) {
					err = problem(err)
				}
				src.setErr(err)
				return
			}
		}
	}()
	n, err := tx.CopyFrom(ctx, pgx.Identifier{db.schema, "lines"}, lineColumns, src)
	cancel()
	for range src.rows { // let the scanner finish
	}
	if serr := src.Err(); serr != nil && (err == nil || !errors.Is(serr, context.Canceled)) {
		return src.curs, n, serr
	}
	return src.curs, n, err
}

// keyedRow is a line with its session's key.
type keyedRow struct {
	key int64
	row lineRow
}

// rowSource feeds COPY from the scanner's channel. pgx asks for Err from
// a goroutine of its own, also when the COPY is cancelled before the
// scanner is done: the error is guarded.
type rowSource struct {
	rows chan keyedRow
	row  keyedRow
	curs []session.Cursor // set before rows is closed

	mu  sync.Mutex
	err error
}

func (s *rowSource) Next() bool {
	row, ok := <-s.rows
	s.row = row
	return ok
}

func (s *rowSource) Values() ([]any, error) { return s.row.row.values(s.row.key), nil }

func (s *rowSource) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *rowSource) setErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

// stmt is one statement: run at once, or queued in a batch.
type stmt struct {
	sql  string
	args []any
}

// setMeta records, after a push, where the stored lines end and what the
// slot says, and what the header says when the push read it (a push from
// a stored cursor starts after it).
func (db *DB) setMeta(ctx context.Context, tx pgx.Tx, key int64, c session.Cursor, readHeader bool, slot []byte, mtime time.Time) error {
	for _, st := range db.metaStmts(key, c, readHeader, slot, mtime) {
		if _, err := tx.Exec(ctx, st.sql, st.args...); err != nil {
			return err
		}
	}
	return nil
}

// metaStmts are setMeta's statements.
func (db *DB) metaStmts(key int64, c session.Cursor, readHeader bool, slot []byte, mtime time.Time) []stmt {
	title, source := "", ""
	if s, ok := session.ParseTitleSlot(slot); ok {
		title, source = s.Title, s.Source.String()
	} else if readHeader {
		title, source = c.Header.Title, c.Header.TitleSource
	}
	out := []stmt{{`
UPDATE ` + db.t("sessions") + ` SET size = $2, lines = $3, entries = $4, header_line = $5, version = $6, last_id = $7,
	title = CASE WHEN $8 OR $9 <> '' THEN $9 ELSE title END,
	title_source = CASE WHEN $8 OR $9 <> '' THEN $10 ELSE title_source END,
	updated = $11, pushed = now()
WHERE key = $1`, []any{key, c.Offset, c.Line, c.Entries, c.HeaderLine, c.Version, c.LastID(), readHeader, pgText(title), source, mtime}}}
	if !readHeader {
		return out
	}
	h := c.Header
	var created *time.Time
	if t, err := session.ParseTime(h.Timestamp); err == nil {
		created = &t
	}
	return append(out, stmt{`UPDATE ` + db.t("sessions") + ` SET id = $2, cwd = $3, created = $4, parent_session = $5 WHERE key = $1`,
		[]any{key, pgText(h.ID), pgText(h.Cwd), created, pgText(h.ParentSession)}})
}

// pushedStmt records what origin pushed of a file: its stat from fi,
// and the rest from p.
func (db *DB) pushedStmt(origin, rel string, key int64, fi os.FileInfo, p pushRecord) stmt {
	return stmt{`
INSERT INTO ` + db.t("pushes") + ` (origin, path, session, size, mtime_ns, ino, masked, src_end, stored_end, tail)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
ON CONFLICT (origin, path) DO UPDATE SET session = excluded.session, size = excluded.size, mtime_ns = excluded.mtime_ns, ino = excluded.ino,
	masked = excluded.masked, src_end = excluded.src_end, stored_end = excluded.stored_end, tail = excluded.tail`,
		[]any{origin, rel, key, fi.Size(), fi.ModTime().UnixNano(), int64(fi.Sys().(*syscall.Stat_t).Ino), p.masked, p.srcEnd, p.storedEnd, p.tail}}
}

// storedSlot is the stored revision's title slot line, nil if it has
// none.
func (db *DB) storedSlot(ctx context.Context, q querier, key int64) ([]byte, error) {
	var line []byte
	err := q.QueryRow(ctx, `SELECT line FROM `+db.t("lines")+` WHERE session = $1 AND off = 0`, key).Scan(&line)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, db.redact(err)
	}
	return session.SlotLine(append(line, '\n')), nil
}

// setSlot stores a retitled slot in place, and the title it says.
func (db *DB) setSlot(ctx context.Context, tx pgx.Tx, key int64, slot []byte) error {
	s, _ := session.ParseTitleSlot(slot)
	if _, err := tx.Exec(ctx, `UPDATE `+db.t("lines")+` SET line = $2 WHERE session = $1 AND off = 0`, key, slot[:len(slot)-1]); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `UPDATE `+db.t("sessions")+` SET title = $2, title_source = $3, pushed = now() WHERE key = $1`,
		key, pgText(s.Title), s.Source.String())
	return err
}

// sameBytes reports whether the file's bytes [lo, hi) are the stored
// revision's.
func (db *DB) sameBytes(ctx context.Context, q querier, s *Session, f io.ReaderAt, lo, hi int64) (bool, error) {
	if lo >= hi {
		return true, nil
	}
	want := make([]byte, hi-lo)
	if _, err := f.ReadAt(want, lo); err != nil {
		return false, problem(err) // the file shrank since its stat
	}
	got := make([]byte, hi-lo)
	r := db.newReader(ctx, s.Key, s.Size)
	r.q = q
	if _, err := r.ReadAt(got, lo); err != nil {
		return false, err
	}
	return bytes.Equal(want, got), nil
}

// lineStarts reports whether a stored line starts at off.
func (db *DB) lineStarts(ctx context.Context, q querier, key, off int64) (bool, error) {
	var one int
	err := q.QueryRow(ctx, `SELECT 1 FROM `+db.t("lines")+` WHERE session = $1 AND off = $2`, key, off).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, db.redact(err)
}

// completeEnd is where the file's last complete line ends: a last line
// without its newline is a write in progress, left for the next push.
func completeEnd(f io.ReaderAt, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for hi := size; hi > 0; {
		lo := max(0, hi-int64(len(buf)))
		b := buf[:hi-lo]
		if _, err := f.ReadAt(b, lo); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return lo + int64(i) + 1, nil
		}
		hi = lo
	}
	return 0, nil
}
