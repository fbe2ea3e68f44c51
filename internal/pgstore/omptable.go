package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/sessionname"
)

// DefaultOmpTable is the table omp's SqlSessionStorage uses by default.
const DefaultOmpTable = "omp_session_files"

// OmpTable is omp's SQL session table (SqlSessionStorage in omp 18.2.3,
// sql-session-storage.ts), spoken as omp speaks it: one row per session
// file, keyed by the path omp would give the file, with the whole file
// in content (TEXT) and its title slot's fields in title, title_source
// and title_updated_at, which a reader lays over the content's line 1.
// An append is content = content || line. xdev reads and writes the rows
// so that an omp configured with the same database lists and resumes what
// xdev pushed, and xdev reads what omp stored.
type OmpTable struct {
	db    *DB
	table string // quoted, qualified when a schema was chosen
}

// OmpTable returns omp's table named name (DefaultOmpTable when empty),
// in the schema Options.Schema named, else where the connection's
// search_path finds it, as omp's unqualified statements do.
func (db *DB) OmpTable(name string) (*OmpTable, error) {
	if name == "" {
		name = DefaultOmpTable
	}
	if !identRE().MatchString(name) {
		return nil, fmt.Errorf("omp table %q: want a name of letters, digits and _, at most 63 bytes (omp's rule)", name)
	}
	t := name
	if db.schemaSet {
		t = `"` + db.schema + `".` + name
	}
	return &OmpTable{db: db, table: t}, nil
}

// Create makes the table as omp's create() does when it is missing:
// omp's own DDL for PostgreSQL, and the title columns it adds to tables
// made before they existed.
func (o *OmpTable) Create(ctx context.Context) error {
	if o.db.schemaSet {
		if _, err := o.db.pool.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS "`+o.db.schema+`"`); err != nil {
			return o.privileges(err, "create schema "+o.db.schema)
		}
	}
	var exists bool
	if err := o.db.pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, o.table).Scan(&exists); err != nil {
		return o.db.redact(err)
	}
	if !exists {
		_, err := o.db.pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+o.table+` (path TEXT PRIMARY KEY, content TEXT NOT NULL, mtime_ms BIGINT NOT NULL, title TEXT, title_source TEXT, title_updated_at TEXT)`)
		if err != nil {
			return o.privileges(err, "create table "+o.table)
		}
	}
	// The title columns omp adds to a table made before they existed;
	// asked for first, since only the table's owner may add them.
	rows, err := o.db.pool.Query(ctx, `SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`, o.table)
	if err != nil {
		return o.db.redact(err)
	}
	have, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return o.db.redact(err)
	}
	for _, col := range []string{"title", "title_source", "title_updated_at"} {
		if slices.Contains(have, col) {
			continue
		}
		if _, err := o.db.pool.Exec(ctx, `ALTER TABLE `+o.table+` ADD COLUMN IF NOT EXISTS `+col+` TEXT`); err != nil {
			return o.privileges(err, "add column "+col+" to "+o.table)
		}
	}
	return nil
}

// privileges says what to grant when the role may not do what: since
// PostgreSQL 15 only a database's owner may create in schema public.
func (o *OmpTable) privileges(err error, what string) error {
	if pgCode(err) != codeInsufficientPriv {
		return o.db.redact(err)
	}
	schema := "public"
	if o.db.schemaSet {
		schema = o.db.schema
	}
	return o.db.redact(fmt.Errorf("this role may not %s (%v): PostgreSQL 15 and later let only the database's owner create in schema public; "+
		"as the owner, run GRANT USAGE, CREATE ON SCHEMA %s TO <this role>, or create the table once yourself (docs/teams.md, omp's table), or give --schema a schema this role owns",
		what, err, schema))
}

// OmpRow is one row of omp's table, without its content.
type OmpRow struct {
	Path           string // the key: the file's path as omp names it
	Size           int64  // the content's length in UTF-8 bytes
	MtimeMs        int64
	Title          string
	TitleSource    string // "auto", "user", or ""
	TitleUpdatedAt string // "" when the row has no title update: the content's slot stands

	// From the content's header, for a listing.
	ID, Cwd, ParentSession string
	Created                time.Time
	Err                    error // the content does not start with a session header

	// Listing is what Rows reads of the content's head and tail, by the
	// rules a local listing reads a file by (session.Describe); a
	// subagent's transcript is known by its place too, in the directory
	// named like its parent's row (session.SubagentPath).
	Listing session.SessionInfo
}

// Rows lists the table's session files (rows whose path ends in .jsonl),
// newest first, each with its header read from the content's first
// 16 KiB: one query.
func (o *OmpTable) Rows(ctx context.Context) ([]*OmpRow, error) {
	return o.rows(ctx, `WHERE path LIKE '%.jsonl'`)
}

func (o *OmpTable) rows(ctx context.Context, where string, args ...any) ([]*OmpRow, error) {
	rows, err := o.db.pool.Query(ctx, `SELECT path, octet_length(content), mtime_ms, coalesce(title, ''), coalesce(title_source, ''),
	coalesce(title_updated_at, ''), left(content, 16384), right(content, `+fmt.Sprint(session.TailBytes)+`) FROM `+o.table+` `+where+` ORDER BY mtime_ms DESC, path`, args...)
	if err != nil {
		return nil, o.db.redact(err)
	}
	defer rows.Close()
	var out []*OmpRow
	for rows.Next() {
		r := &OmpRow{}
		var head, tail string
		if err := rows.Scan(&r.Path, &r.Size, &r.MtimeMs, &r.Title, &r.TitleSource, &r.TitleUpdatedAt, &head, &tail); err != nil {
			return nil, o.db.redact(err)
		}
		r.readHead([]byte(head))
		r.Listing = session.Describe(r.Path, []byte(head), []byte(tail), r.Size)
		r.Listing.Modified = time.UnixMilli(r.MtimeMs)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, o.db.redact(err)
	}
	paths := make(map[string]bool, len(out))
	for _, r := range out {
		paths[r.Path] = true
	}
	for _, r := range out {
		if dir := path.Dir(r.Path); dir != "." && paths[dir+".jsonl"] {
			r.Listing.Subagent = true
		}
	}
	return out, nil
}

// readHead reads the header from the content's head, as the core reader
// reads a file's.
func (r *OmpRow) readHead(head []byte) {
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		head = head[:i+1]
	}
	c, _, err := session.ReadFromReader(r.Path, bytes.NewReader(head), int64(len(head)), session.Cursor{}, nil, func(session.Read) error { return nil })
	switch {
	case err != nil:
		r.Err = err
	case c.Version == 0:
		r.Err = fmt.Errorf("%s: %w in its first 16 KiB", r.Path, session.ErrNoHeader)
	default:
		r.ID, r.Cwd, r.ParentSession = c.Header.ID, c.Header.Cwd, c.Header.ParentSession
		r.Created, _ = session.ParseTime(c.Header.Timestamp)
		if r.TitleUpdatedAt == "" {
			if s, ok := session.ParseTitleSlot(head[:max(0, bytes.IndexByte(head, '\n')+1)]); ok {
				r.Title, r.TitleSource = s.Title, s.Source.String()
			} else {
				r.Title = c.Header.Title
			}
		}
	}
}

// Find returns the row arg names: its path, or a session id or id prefix
// (read from the rows' headers), or a file name.
func (o *OmpTable) Find(ctx context.Context, arg string) (*OmpRow, error) {
	rows, err := o.rows(ctx, `WHERE path = $1 OR path LIKE '%.jsonl'`, arg)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.Path == arg {
			return r, nil
		}
	}
	one, several := sessionname.Pick(arg, rows, func(r **OmpRow) (string, string) { return (*r).ID, path.Base((*r).Path) })
	switch {
	case one != nil:
		return *one, nil
	case len(several) == 0:
		return nil, fmt.Errorf("%w named %q in omp's table %s", ErrNotFound, arg, o.table)
	}
	return nil, sessionname.Ambiguous(arg, several, func(r **OmpRow) sessionname.Match {
		return sessionname.Match{ID: (*r).ID, Path: (*r).Path}
	})
}

// Content returns the row's file as omp's readText returns it: the
// content, with the title columns laid over line 1 when the row has a
// title update. omp keeps a session in one value, so it is read whole.
func (o *OmpTable) Content(ctx context.Context, r *OmpRow) ([]byte, error) {
	var content string
	err := o.db.pool.QueryRow(ctx, `SELECT content FROM `+o.table+` WHERE path = $1`, r.Path).Scan(&content)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w at %q in omp's table %s", ErrNotFound, r.Path, o.table)
	}
	if err != nil {
		return nil, o.db.redact(err)
	}
	b := []byte(content)
	if r.TitleUpdatedAt == "" {
		return b, nil
	}
	src, _ := session.ParseTitleSource(r.TitleSource)
	if r.TitleSource == "" {
		src = session.TitleNone
	}
	slot, err := session.MarshalTitleSlot(r.Title, src, r.TitleUpdatedAt)
	if err != nil {
		return nil, fmt.Errorf("%s: the title columns: %w", r.Path, err)
	}
	if len(b) <= len(slot) {
		return slot, nil
	}
	return append(slot, b[len(slot):]...), nil
}

// OpenSession opens the row's session as session.Open opens a file.
func (o *OmpTable) OpenSession(ctx context.Context, r *OmpRow, opts *session.OpenOptions) (*session.Store, error) {
	b, err := o.Content(ctx, r)
	if err != nil {
		return nil, err
	}
	return session.OpenReader(r.Path, bytes.NewReader(b), int64(len(b)), opts)
}

// OmpPushOptions tune OmpTable.Push.
type OmpPushOptions struct {
	// Root, when set, is the directory the data dir's sessions directory
	// is keyed under: a file's row is Root/<project>/<file>. Empty keys a
	// row by the file's absolute path, as omp keys a file-backed session.
	Root     string
	Progress func(done, total int)
	// Raw stores the files' bytes as they are; a push masks the secrets
	// in every line unless told so, as PushOptions.Raw says. omp's table
	// has no column to say a row was masked.
	Raw bool
}

// Push stores the data dir's session files in omp's table, as omp's
// storage would have written them: a new file is inserted whole with the
// title columns its slot says; a file grown since is appended to (content
// = content || the new lines), once its stored part is found equal to the
// file's (the last 4 KiB before its end, the slot aside), and only if the
// row still has that length; a new title slot updates the title columns.
// A row that is not a prefix of its file (omp continued or rewrote the
// session in the database) is never replaced: it is reported, as is a
// file that TEXT cannot hold (NUL, invalid UTF-8). Every write is one
// statement.
func (o *OmpTable) Push(ctx context.Context, dataDir string, opts OmpPushOptions) (PushStats, error) {
	var st PushStats
	if err := o.Create(ctx); err != nil {
		return st, err
	}
	files, err := session.Files(dataDir)
	if err != nil {
		return st, err
	}
	st.Files = len(files)
	root := session.SessionsDir(dataDir)
	blobs := session.NewBlobStore(session.BlobsDir(dataDir))
	keyOf := func(p string) string {
		if opts.Root == "" {
			abs, _ := filepath.Abs(p)
			return abs
		}
		rel, _ := filepath.Rel(root, p)
		return path.Join(filepath.ToSlash(opts.Root), filepath.ToSlash(rel))
	}
	idx := map[string]*OmpRow{}
	rows, err := o.rows(ctx, ``)
	if err != nil {
		return st, err
	}
	for _, r := range rows {
		idx[r.Path] = r
	}
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		res, err := o.pushFile(ctx, f, keyOf(f.Path), idx[keyOf(f.Path)], blobs, opts.Raw)
		var fp *fileProblem
		switch {
		case errors.As(err, &fp):
			st.Failed = append(st.Failed, FileError{f.Path, fp.err})
		case err != nil:
			return st, fmt.Errorf("%s: %w", f.Path, err)
		default:
			st.add(res)
		}
		if opts.Progress != nil {
			opts.Progress(i+1, len(files))
		}
	}
	return st, nil
}

func (o *OmpTable) pushFile(ctx context.Context, f session.SessionFile, key string, row *OmpRow, blobs *session.BlobStore, raw bool) (fileResult, error) {
	var res fileResult
	data, err := regularfile.ReadFile(f.Path, 0)
	if errors.Is(err, os.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return res, problem(err)
	}
	data = rowForm(data[:bytes.LastIndexByte(data, '\n')+1], blobs)
	var view *maskedView
	if !raw {
		if data, view, err = maskedBytes(f.Path, data); err != nil {
			return res, problem(err)
		}
	}
	// maskedFrom counts the secrets masked in the bytes stored from off on.
	maskedFrom := func(off int64) int {
		if view == nil {
			return 0
		}
		return view.maskedFrom(off)
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return res, problem(fmt.Errorf("%s: holds NUL or bytes that are not UTF-8, which omp's TEXT column cannot hold", f.Path))
	}
	mtime := f.ModTime.UnixMilli()
	slot := session.SlotLine(data[:min(len(data), session.TitleSlotWidth)])
	title, source, updated := slotColumns(slot)
	if row == nil {
		tag, err := o.db.pool.Exec(ctx, `INSERT INTO `+o.table+` (path, content, mtime_ms, title, title_source, title_updated_at)
VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (path) DO NOTHING`, key, string(data), mtime, title, source, updated)
		if err != nil {
			return res, o.db.redact(err)
		}
		if tag.RowsAffected() != 1 {
			return res, problem(fmt.Errorf("%s: a row for %s appeared meanwhile: push again", f.Path, key))
		}
		res.out, res.lines, res.bytes = outNew, int64(bytes.Count(data, []byte("\n"))), int64(len(data))
		res.masked = maskedFrom(0)
		return res, nil
	}
	// Compare what both hold: the stored bytes before the shorter end.
	n := min(row.Size, int64(len(data)))
	lo := max(int64(len(slot)), n-tailCheck)
	var stored []byte
	if lo < n {
		err := o.db.pool.QueryRow(ctx, `SELECT substring(convert_to(content, 'UTF8') FROM $2 FOR $3) FROM `+o.table+` WHERE path = $1`,
			key, lo+1, n-lo).Scan(&stored)
		if err != nil {
			return res, o.db.redact(err)
		}
	}
	if !bytes.Equal(stored, data[lo:n]) {
		return res, problem(fmt.Errorf("%s: %w: the row %s in omp's table is not a prefix of the file; left alone", f.Path, ErrDiverged, key))
	}
	switch {
	case int64(len(data)) > row.Size:
		chunk := data[row.Size:]
		tag, err := o.db.pool.Exec(ctx, `UPDATE `+o.table+` SET content = `+o.table+`.content || $2, mtime_ms = $3
WHERE path = $1 AND octet_length(content) = $4`, key, string(chunk), mtime, row.Size)
		if err != nil {
			return res, o.db.redact(err)
		}
		if tag.RowsAffected() != 1 {
			return res, problem(fmt.Errorf("%s: the row %s changed meanwhile: push again", f.Path, key))
		}
		res.out, res.lines, res.bytes = outAppended, int64(bytes.Count(chunk, []byte("\n"))), int64(len(chunk))
		res.masked = maskedFrom(row.Size)
	case int64(len(data)) < row.Size:
		res.out = outBehind
	}
	if slot != nil && (row.Title != title || row.TitleSource != source || row.TitleUpdatedAt != updated) && updated > row.TitleUpdatedAt {
		_, err := o.db.pool.Exec(ctx, `UPDATE `+o.table+` SET title = $2, title_source = $3, title_updated_at = $4, mtime_ms = $5 WHERE path = $1`,
			key, title, nullable(source), updated, mtime)
		if err != nil {
			return res, o.db.redact(err)
		}
		res.retitled = true
	}
	return res, nil
}

// slotColumns are the title columns omp writes for a slot
// (titleUpdateFromSlot): nil for a file without one.
func slotColumns(slot []byte) (title, source, updatedAt string) {
	s, ok := session.ParseTitleSlot(slot)
	if !ok {
		return "", "", ""
	}
	switch s.Source {
	case session.TitleAuto:
		source = "auto"
	case session.TitleManual:
		source = "user"
	}
	return s.Title, source, s.UpdatedAt
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Pull writes the rows keyed under root (the directory a push's
// OmpPushOptions.Root named, or the data dir's sessions directory itself
// for rows keyed by absolute path) into dataDir's sessions directory, as
// omp's readText returns them, by DB.Pull's rules: new files appear
// whole, a file the row extends is appended to under omp's lockfile,
// anything else is left alone.
func (o *OmpTable) Pull(ctx context.Context, dataDir, root string, lock session.LockOptions) (PullStats, error) {
	var st PullStats
	sessions := session.SessionsDir(dataDir)
	blobs := session.NewBlobStore(session.BlobsDir(dataDir))
	if root == "" {
		root = sessions
	}
	rows, err := o.Rows(ctx)
	if err != nil {
		return st, err
	}
	for _, r := range rows {
		rel, ok := strings.CutPrefix(r.Path, strings.TrimSuffix(filepath.ToSlash(root), "/")+"/")
		if !ok {
			continue
		}
		st.Sessions++
		dst, err := localPath(sessions, rel)
		if err == nil {
			err = o.pullRow(ctx, r, dst, lock, blobs, &st)
		}
		if err != nil {
			if errors.Is(err, ErrDiverged) {
				st.Conflicts++
			}
			st.Failed = append(st.Failed, FileError{dst, err})
		}
	}
	return st, nil
}

func (o *OmpTable) pullRow(ctx context.Context, r *OmpRow, dst string, lock session.LockOptions, blobs *session.BlobStore, st *PullStats) error {
	content, err := o.Content(ctx, r)
	if err != nil {
		return err
	}
	content = content[:bytes.LastIndexByte(content, '\n')+1]
	local, err := regularfile.ReadFile(dst, 0)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := createFile(dst, func(w io.Writer) error { _, err := w.Write(content); return err }); err != nil {
			return err
		}
		st.Written++
		st.Bytes += int64(len(content))
		return stampRowMtime(dst, r)
	case err != nil:
		return err
	}
	// As DB.Pull: the bytes both hold must agree, the title slot aside,
	// which both have or neither; a newer slot of the row's is put in
	// place as a retitle writes it. The file's images are compared as
	// the row holds them, inline.
	fileEnd := bytes.LastIndexByte(local, '\n') + 1
	local = append(rowForm(local[:fileEnd], blobs), local[fileEnd:]...)
	end := bytes.LastIndexByte(local, '\n') + 1
	mine := session.SlotLine(local[:min(len(local), session.TitleSlotWidth)])
	theirs := session.SlotLine(content[:min(len(content), session.TitleSlotWidth)])
	n, body := min(end, len(content)), len(mine)
	if (mine == nil) != (theirs == nil) || n < body || !bytes.Equal(local[body:n], content[body:n]) ||
		end < len(content) && len(local) != end {
		return fmt.Errorf("%s: %w (the row %s)", dst, ErrDiverged, r.Path)
	}
	if mine != nil && !bytes.Equal(mine, theirs) && session.SlotWrittenAfter(theirs, mine) {
		if err := session.ReplaceSlot(dst, mine, theirs, lock); err != nil {
			return err
		}
		st.Retitled++
	}
	if end >= len(content) {
		st.UpToDate++
		return nil
	}
	k, err := session.AppendRaw(dst, int64(fileEnd), bytes.NewReader(content[end:]), lock)
	if err != nil {
		return err
	}
	st.Appended++
	st.Bytes += k
	return stampRowMtime(dst, r)
}

// stampRowMtime gives a pulled file its row's mtime_ms, as DB.Pull gives
// a file its stored modification time.
func stampRowMtime(path string, r *OmpRow) error {
	if r.MtimeMs <= 0 {
		return nil
	}
	return os.Chtimes(path, time.Time{}, time.UnixMilli(r.MtimeMs))
}

// rowForm is a file's content as omp's table holds it: each line with the
// images it references inlined from blobs (session.InlineImages). omp
// 18.2.3's SqlSessionStorage keeps no blobs: a reference would reach omp
// on another machine as the text "blob:sha256:…" where the image was.
func rowForm(data []byte, blobs *session.BlobStore) []byte {
	if !bytes.Contains(data, []byte(session.BlobRefPrefix)) {
		return data
	}
	out := make([]byte, 0, len(data))
	for line := range bytes.Lines(data) {
		body := bytes.TrimSuffix(line, []byte("\n"))
		if in, _, err := session.InlineImages(body, blobs); err == nil {
			body = in
		}
		out = append(append(out, body...), '\n')
	}
	return out
}

// WriteContent writes the row's file to w, as Content returns it.
func (o *OmpTable) WriteContent(ctx context.Context, r *OmpRow, w io.Writer) error {
	b, err := o.Content(ctx, r)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
