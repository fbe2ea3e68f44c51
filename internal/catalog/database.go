package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/pgstore"
	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/usage"
	"github.com/xdev/xdev/internal/usagecache"
)

// EnvDatabaseURL is the environment variable a database's URL is taken
// from when DatabaseConfig.URL is empty.
const EnvDatabaseURL = pgstore.EnvURL

// DatabaseConfig says which PostgreSQL store to read and which part of
// it: xdev's tables (sessions synced by `xdev sync`, by revision), or omp's
// SQL table (omp_session_files), as omp's SqlSessionStorage keeps it.
type DatabaseConfig struct {
	// URL is a postgres:// URL or a key=value DSN; empty is
	// $XDEV_DATABASE_URL's.
	URL string
	// URLSource names where URL came from ("--db's URL") in the message
	// for one that does not parse; the URL itself is never quoted.
	URLSource string
	// Schema is the schema of xdev's tables (xdev when empty).
	Schema string
	// OmpTable reads omp's table instead of xdev's tables; Table is its
	// name (omp_session_files when empty).
	OmpTable bool
	Table    string
	// Warn, when set, is told what a person should know but that does not
	// stop the connection (a password file others may read).
	Warn func(msg string)
}

// A Database is a team's PostgreSQL store as a place sessions live: listed
// (List), named (Find), opened (StoredSession) and searched (Search) as
// a data dir's are, and synced with a data dir (Push, Pull). Its methods
// are safe for concurrent use; Close releases the connections.
type Database struct {
	db  *pgstore.DB
	tbl *pgstore.OmpTable // when the config chose omp's table
}

// OpenDatabase connects for reading. xdev's schema must be there at this
// version: a read never creates or migrates it (the error names it). omp's
// table is read as it is.
func OpenDatabase(ctx context.Context, cfg DatabaseConfig) (*Database, error) {
	return openDatabase(ctx, cfg, pgstore.OpenRead)
}

// OpenDatabaseForSync connects for a sync, which makes or migrates xdev's
// schema on first use; omp's table is only ever touched by its rows.
func OpenDatabaseForSync(ctx context.Context, cfg DatabaseConfig) (*Database, error) {
	return openDatabase(ctx, cfg, pgstore.Open)
}

func openDatabase(ctx context.Context, cfg DatabaseConfig, open func(context.Context, string, *pgstore.Options) (*pgstore.DB, error)) (*Database, error) {
	opts := &pgstore.Options{Schema: cfg.Schema, URLSource: cfg.URLSource, Warn: cfg.Warn}
	if cfg.URL == "" {
		opts.URLSource = "$" + EnvDatabaseURL
	}
	if cfg.OmpTable {
		open = pgstore.Connect // omp's table has no schema of ours
	}
	db, err := open(ctx, cfg.URL, opts)
	if err != nil {
		return nil, err
	}
	d := &Database{db: db}
	if cfg.OmpTable {
		if d.tbl, err = db.OmpTable(cfg.Table); err != nil {
			db.Close()
			return nil, err
		}
	}
	return d, nil
}

// Close closes the connections.
func (d *Database) Close() { d.db.Close() }

// URL is the database as a person is shown it: never its password.
func (d *Database) URL() string { return d.db.URL() }

// List lists the stored sessions, newest first, as Rows by the rules a
// local file is listed by (each row's stored head and tail give its
// status, first message and fallback title).
func (d *Database) List(ctx context.Context, opts ListOptions) ([]Row, error) {
	var out []Row
	if d.tbl != nil {
		rows, err := d.tbl.Rows(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if opts.Cwd != "" && !sameDir(r.Cwd, opts.Cwd) || r.Listing.Subagent && !opts.Subagents {
				continue
			}
			row := Row{Harness: Omp, ID: r.ID, Title: r.Title, TitleSource: r.TitleSource, Cwd: r.Cwd, Path: r.Path,
				Created: r.Created, Modified: time.UnixMilli(r.MtimeMs), Size: r.Size, ParentSession: r.ParentSession, Err: r.Err}
			row.fill(r.Listing)
			out = append(out, row.masked())
		}
		return out, nil
	}
	list, err := d.db.List(ctx, pgstore.ListOptions{Cwd: opts.Cwd, Subagents: opts.Subagents})
	if err != nil {
		return nil, err
	}
	for _, s := range list {
		row := Row{Harness: Xdev, ID: s.ID, Title: s.Title, TitleSource: s.TitleSource, Cwd: s.Cwd, Path: s.Name(),
			Created: s.Created, Modified: s.Updated, Size: s.Size, ParentSession: s.ParentSession, Subagent: s.Subagent}
		row.fill(s.Listing)
		out = append(out, row.masked())
	}
	return out, nil
}

// fill fills a stored session's row with what its stored head and tail
// say, as a local file's row is filled: the last turn's status, the first
// message, and the title a listing falls back on when there is none.
func (r *Row) fill(info session.SessionInfo) {
	if info.Err != nil {
		return
	}
	r.Status, r.FirstMessage, r.ShortSummary = info.Status, info.FirstMessage, info.ShortSummary
	if strings.TrimSpace(r.Title) == "" {
		r.Title = info.ListTitle()
	}
	r.Subagent = r.Subagent || info.Subagent
}

// ErrNoIndex is Search's error on omp's table, which holds each session
// as one value and has no index.
var ErrNoIndex = errors.New("omp's table holds each session in one value, which has no index: search synced sessions (xdev's tables)")

// Search runs q on the stored sessions, on the server (PostgreSQL's
// full-text search, by the same query language), limited to the stored
// session sessionArg names when not empty, and returns the hits as a
// local search gives them. The server knows no branch or compaction
// state: each hit is reported on the active branch and in the context.
// limit is how many hits at most (q.Limit when 0).
func (d *Database) Search(ctx context.Context, q Query, sessionArg string, limit int) ([]Hit, error) {
	if d.tbl != nil {
		return nil, ErrNoIndex
	}
	if limit == 0 {
		limit = q.Limit
	}
	id := ""
	if sessionArg != "" {
		// Named as every session is named (Find): an ambiguous or
		// unknown name is an error, as it is of a local search.
		s, err := d.Find(ctx, sessionArg)
		if err != nil {
			return nil, err
		}
		id = s.s.ID
	}
	found, err := d.db.Search(ctx, pgstore.Query{Text: q.Text, Cwd: q.Cwd, Role: q.Role, Session: id, Since: q.Since,
		Until: q.Until, Subagents: q.Subagents, Limit: limit})
	if err != nil {
		return nil, err
	}
	hits := make([]Hit, 0, len(found))
	for _, h := range found {
		hits = append(hits, Hit{Harness: string(Xdev), Path: h.Session.Name(), SessionID: h.Session.ID, Title: h.Session.Title,
			Cwd: h.Session.Cwd, Subagent: h.Session.Subagent, Modified: h.Session.Updated, EntryID: h.EntryID, Line: h.Line,
			Offset: h.Offset, Role: h.Role, Timestamp: h.Time, Snippet: h.Snippet, Highlights: h.Highlights,
			OnActiveBranch: true, InContext: true})
	}
	return hits, nil
}

// A StoredSession is one session found in a database: a stored revision
// of a synced session, or a row of omp's table.
type StoredSession struct {
	d   *Database
	s   *pgstore.Session
	row *pgstore.OmpRow
	// Shown is how a person is shown it: the synced session's name
	// (project/file@revision), or the row's path.
	Shown string
}

// Find finds the stored session arg names, as a local session is named:
// an id, an id prefix, a path or a file name; ID@N a revision of a
// synced session.
// Nothing found is an error wrapping ErrNotFound, as for a local session.
func (d *Database) Find(ctx context.Context, arg string) (*StoredSession, error) {
	if d.tbl != nil {
		row, err := d.tbl.Find(ctx, arg)
		if err != nil {
			return nil, notFound(err)
		}
		return &StoredSession{d: d, row: row, Shown: row.Path}, nil
	}
	s, err := d.db.Find(ctx, arg)
	if err != nil {
		return nil, notFound(err)
	}
	return &StoredSession{d: d, s: s, Shown: s.Name()}, nil
}

// notFound makes pgstore's not-found error the catalog's: it says what
// pgstore says and is ErrNotFound too, so a caller asks one question of
// every place.
func notFound(err error) error {
	if errors.Is(err, pgstore.ErrNotFound) {
		return storedNotFound{err}
	}
	return err
}

type storedNotFound struct{ error }

func (e storedNotFound) Unwrap() []error { return []error{e.error, ErrNotFound} }

// OpenStore opens the session as session.Open opens a file: a synced
// session is read backward from the server, holding only the window. The
// database must stay open while the store is used (it fetches image blobs
// as it builds the context).
func (s *StoredSession) OpenStore(ctx context.Context) (*session.Store, error) {
	if s.row != nil {
		return s.d.tbl.OpenSession(ctx, s.row, nil)
	}
	return s.d.db.OpenSession(ctx, s.s, nil)
}

// WriteTo writes the session's bytes, as they were stored.
func (s *StoredSession) WriteTo(ctx context.Context, w io.Writer) error {
	if s.row != nil {
		return s.d.tbl.WriteContent(ctx, s.row, w)
	}
	return s.d.db.WriteSession(ctx, s.s, w)
}

// Readable is the session for the views that read every entry (the tree,
// the raw entries, --at, an export). A synced session is read through its
// rows, a block at a time (pgstore.DB.OpenIndex). A row of omp's table,
// one value with no lines to fetch apart, is written into xdev's cache, a
// file named by the row's identity (the server, the path, its size and
// time), whole or not at all: nothing goes to a temp dir a killed command
// would leave behind.
func (s *StoredSession) Readable(ctx context.Context) (Readable, error) {
	r := Readable{Shown: s.Shown, Harness: DB}
	if s.row == nil {
		r.index = func() (*session.Index, error) { return s.d.db.OpenIndex(ctx, s.s) }
		r.context = func() (*session.ContextReader, error) {
			// Windowed from the server, reading only the leaf's path.
			st, err := s.OpenStore(ctx)
			if err != nil {
				return nil, err
			}
			return session.ContextOf(st), nil
		}
		return r, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return r, err
	}
	ident := fmt.Sprintf("%s\x00%s\x00omp\x00%d\x00%d", s.d.URL(), s.Shown, s.row.Size, s.row.MtimeMs)
	sum := sha256.Sum256([]byte(ident))
	r.Path = filepath.Join(cache, "xdev", "db", "sessions", "db", hex.EncodeToString(sum[:12])+".jsonl")
	if err := os.MkdirAll(filepath.Dir(r.Path), 0o700); err != nil {
		return r, err
	}
	if err := atomicfile.Replace(r.Path, func(w io.Writer) error { return s.WriteTo(ctx, w) }); err != nil {
		return r, err
	}
	return r, nil
}

// Usage builds the usage ledger of the stored sessions (of the project
// cwd, or all when ""), subagents' included, each read through its rows
// as the views of every entry read it, by the rules of a local ledger
// (Catalog.Usage): the machines that synced to the server, counted
// together, each call once.
func (d *Database) Usage(ctx context.Context, cwd string) (*usage.Ledger, UsageStats, error) {
	st := UsageStats{Failed: map[Harness]error{}}
	jobs, err := d.usageJobs(ctx)
	if err != nil {
		return nil, st, err
	}
	l, _, err := ledgerOf(ctx, jobs, usagecache.Open(""), UsageOptions{Cwd: cwd}, &st)
	return l, st, err
}

// The Database as a Place: whose sessions it holds, where it is, and what
// a local place's are (listed, named and costed by the same rules). It
// has no local index: it is searched on its server (Search).

// Harness is DB.
func (d *Database) Harness() Harness { return DB }

// Where is the database as a person is shown it, and that it is there.
func (d *Database) Where() (string, bool) { return d.URL(), true }

// Index is ErrNoIndex: a database is searched on its server (Search).
func (d *Database) Index() (SearchPlace, error) { return SearchPlace{}, ErrNoIndex }

// Writable is false: only xdev sync writes a database (Push).
func (d *Database) Writable() bool { return false }

func (d *Database) named(ctx context.Context, arg string) []Ref {
	return namedRows(ctx, d, arg, func(r Row) Ref { return Ref{Harness: DB, Path: r.Path, ID: r.ID} })
}

// usageJobsAt is never known of a database: no watcher sees it.
func (d *Database) usageJobsAt([]string) ([]usageJob, []string, bool) { return nil, nil, false }

// usageJobs are the stored sessions, each read through its rows; none
// has a file to stamp, so none is cached.
func (d *Database) usageJobs(ctx context.Context) ([]usageJob, error) {
	rows, err := d.List(ctx, ListOptions{Subagents: true})
	if err != nil {
		return nil, err
	}
	jobs := make([]usageJob, 0, len(rows))
	for _, row := range rows {
		jobs = append(jobs, usageJob{key: string(DB) + " " + row.Path,
			read: func() (usage.Session, error) {
				s, err := d.readUsage(ctx, row)
				s.Harness = string(row.Harness)
				return s, err
			}})
	}
	return jobs, nil
}

func (d *Database) readUsage(ctx context.Context, row Row) (usage.Session, error) {
	name := row.ID
	if name == "" {
		name = strings.TrimPrefix(row.Path, "db:")
	}
	ss, err := d.Find(ctx, name)
	if err != nil {
		return usage.Session{}, err
	}
	r, err := ss.Readable(ctx)
	if err != nil {
		return usage.Session{}, err
	}
	x, err := r.OpenIndex()
	if err != nil {
		return usage.Session{}, err
	}
	defer x.Close()
	return usage.ReadIndex(x, row.Path)
}
