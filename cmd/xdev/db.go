package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/xdev/xdev/internal/atomicfile"
	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/pgstore"
	"github.com/xdev/xdev/internal/session"
)

// dbFlags choose a PostgreSQL database to read sessions from instead of
// a data dir: xdev's tables, or with --omp-table omp's.
type dbFlags struct {
	url      string
	schema   string
	ompTable bool
	table    string
}

func addDBFlags(fs *flag.FlagSet) *dbFlags {
	f := &dbFlags{}
	fs.StringVar(&f.url, "db", "", "read the sessions stored in this PostgreSQL database (a postgres:// URL; see docs/teams.md)")
	fs.StringVar(&f.schema, "schema", "", "with --db: the schema of xdev's tables (default xdev)")
	fs.BoolVar(&f.ompTable, "omp-table", false, "with --db: read omp's SQL table (omp_session_files), as omp's SqlSessionStorage does")
	fs.StringVar(&f.table, "table", "", "with --omp-table: the table's name (default omp_session_files)")
	return f
}

// on reports whether the flags choose a database. The URL is --db's, else
// $XDEV_DATABASE_URL's when --omp-table asks for a database.
func (f *dbFlags) on() bool { return f.url != "" || f.ompTable }

func (f *dbFlags) check() error {
	if !f.ompTable && f.table != "" {
		return usagef("--table names omp's table; it goes with --omp-table")
	}
	if !f.on() && f.schema != "" {
		return usagef("--schema goes with --db")
	}
	return nil
}

// open connects for reading: to xdev's schema, which must be there at
// this version (a read never creates or migrates it), or to omp's table.
func (f *dbFlags) open(e *env, ctx context.Context) (*pgstore.DB, error) {
	return f.connect(e, ctx, pgstore.OpenRead)
}

// openForSync connects for a sync, which makes or migrates xdev's schema
// on first use (omp's table is never touched but by its rows).
func (f *dbFlags) openForSync(e *env, ctx context.Context) (*pgstore.DB, error) {
	return f.connect(e, ctx, pgstore.Open)
}

func (f *dbFlags) connect(e *env, ctx context.Context, open func(context.Context, string, *pgstore.Options) (*pgstore.DB, error)) (*pgstore.DB, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	opts := &pgstore.Options{Schema: f.schema, URLSource: "--db's URL",
		Warn: func(msg string) { fmt.Fprintf(e.ErrOut, "xdev: warning: %s\n", msg) }}
	if f.url == "" {
		opts.URLSource = "$" + pgstore.EnvURL
	}
	if f.ompTable {
		return pgstore.Connect(ctx, f.url, opts)
	}
	return open(ctx, f.url, opts)
}

// dbSession is one session found in a database: a stored revision, or a
// row of omp's table.
type dbSession struct {
	db    *pgstore.DB
	s     *pgstore.Session
	tbl   *pgstore.OmpTable
	row   *pgstore.OmpRow
	shown string // how to print its path
}

// find opens the database and finds the session arg names, as a local
// session is named: an id, an id prefix, a path or a file name.
func (f *dbFlags) find(e *env, ctx context.Context, arg string) (*dbSession, error) {
	db, err := f.open(e, ctx)
	if err != nil {
		return nil, err
	}
	d := &dbSession{db: db}
	if f.ompTable {
		if d.tbl, err = db.OmpTable(f.table); err == nil {
			d.row, err = d.tbl.Find(ctx, arg)
		}
		if err != nil {
			db.Close()
			return nil, err
		}
		d.shown = d.row.Path
		return d, nil
	}
	if d.s, err = db.Find(ctx, arg); err != nil {
		db.Close()
		return nil, err
	}
	d.shown = d.s.Name()
	return d, nil
}

func (d *dbSession) close() { d.db.Close() }

// with finds the session arg names and runs fn with it, interruptible,
// the connection open until fn returns (a store opened from it fetches
// image blobs as it builds the context).
func (f *dbFlags) with(e *env, arg string, fn func(ctx context.Context, d *dbSession) error) error {
	ctx, cancel := interruptible()
	defer cancel()
	d, err := f.find(e, ctx, arg)
	if err != nil {
		return err
	}
	defer d.close()
	return fn(ctx, d)
}

// open opens the session as session.Open opens a file: a stored session
// is read backward from the server, holding only the window.
func (d *dbSession) open(ctx context.Context) (*session.Store, error) {
	if d.row != nil {
		return d.tbl.OpenSession(ctx, d.row, nil)
	}
	return d.db.OpenSession(ctx, d.s, nil)
}

// writeTo writes the session's bytes.
func (d *dbSession) writeTo(ctx context.Context, w io.Writer) error {
	if d.row != nil {
		return d.tbl.WriteContent(ctx, d.row, w)
	}
	return d.db.WriteSession(ctx, d.s, w)
}

// readable is the stored session for the views that read every entry
// (the tree, the raw entries, --at, an export): a synced session is read
// through its rows (pgstore.DB.OpenIndex); a row of omp's table, one value
// with no lines to fetch apart, is written into xdev's cache, a file named
// by the row's identity (the server, the path, its size and time),
// written whole or not at all. Nothing goes to a temp dir that a killed
// command would leave behind.
func (d *dbSession) readable(ctx context.Context) (readable, error) {
	r := readable{Readable: catalog.Readable{Shown: d.shown, Harness: catalog.DB}}
	if d.row == nil {
		// A synced session is read through its rows, a block at a time.
		r.index = func() (*session.Index, error) { return d.db.OpenIndex(ctx, d.s) }
		return r, nil
	}
	// A row of omp's table holds its session as one value: cached whole.
	cache, err := os.UserCacheDir()
	if err != nil {
		return r, err
	}
	ident := fmt.Sprintf("%s\x00%s\x00omp\x00%d\x00%d", d.db.URL(), d.shown, d.row.Size, d.row.MtimeMs)
	sum := sha256.Sum256([]byte(ident))
	r.Path = filepath.Join(cache, "xdev", "db", "sessions", "db", hex.EncodeToString(sum[:12])+".jsonl")
	if err := os.MkdirAll(filepath.Dir(r.Path), 0o700); err != nil {
		return r, err
	}
	if err := atomicfile.Replace(r.Path, func(w io.Writer) error { return d.writeTo(ctx, w) }); err != nil {
		return r, err
	}
	return r, nil
}

// dbListRows lists the database's sessions in `xdev list`'s shape.
func dbListRows(e *env, ctx context.Context, f *dbFlags, cwd string, subagents bool) ([]listJSON, error) {
	db, err := f.open(e, ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var table *string
	if f.ompTable {
		table = &f.table
	}
	rows, err := catalog.ListDB(ctx, db, table, catalog.ListOptions{Cwd: cwd, Subagents: subagents})
	return listRows(rows), err
}
