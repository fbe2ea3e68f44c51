package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/xdev/xdev/internal/catalog"
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

// config is the catalog's description of the database the flags choose.
func (f *dbFlags) config(e *env) catalog.DatabaseConfig {
	return catalog.DatabaseConfig{URL: f.url, URLSource: "--db's URL", Schema: f.schema, OmpTable: f.ompTable, Table: f.table,
		Warn: func(msg string) { fmt.Fprintf(e.ErrOut, "xdev: warning: %s\n", msg) }}
}

// open connects for reading: to xdev's schema, which must be there at
// this version (a read never creates or migrates it), or to omp's table.
func (f *dbFlags) open(e *env, ctx context.Context) (*catalog.Database, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	return catalog.OpenDatabase(ctx, f.config(e))
}

// openForSync connects for a sync, which makes or migrates xdev's schema
// on first use (omp's table is never touched but by its rows).
func (f *dbFlags) openForSync(e *env, ctx context.Context) (*catalog.Database, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	return catalog.OpenDatabaseForSync(ctx, f.config(e))
}

// with finds the stored session arg names and runs fn with it,
// interruptible, the connection open until fn returns (a store opened
// from it fetches image blobs as it builds the context).
func (f *dbFlags) with(e *env, arg string, fn func(ctx context.Context, s *catalog.StoredSession) error) error {
	ctx, cancel := interruptible()
	defer cancel()
	db, err := f.open(e, ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	s, err := db.Find(ctx, arg)
	if err != nil {
		return err
	}
	return fn(ctx, s)
}
