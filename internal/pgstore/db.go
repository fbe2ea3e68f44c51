package pgstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvURL is the environment variable a URL is taken from when none is
// given.
const EnvURL = "XDEV_DATABASE_URL"

// DefaultSchema is the schema xdev's tables live in unless Options.Schema
// names another.
const DefaultSchema = "xdev"

// ErrNoURL is returned by Open when no URL is given and EnvURL is unset.
var ErrNoURL = errors.New("no database: give --db URL or set " + EnvURL)

// Options tune Open. The zero value is ready to use.
type Options struct {
	// Schema is the schema of xdev's tables (DefaultSchema when empty). It
	// must be an identifier: letters, digits and '_', at most 63 bytes.
	Schema string
	// MaxConns bounds the connections Open's pool makes (4 when zero).
	MaxConns int32
	// URLSource names where the URL came from ("--db", "$XDEV_DATABASE_URL")
	// in the message for one that does not parse.
	URLSource string
	// Warn, when not nil, is told what a person should know but that does
	// not stop the connection (a password file others may read).
	Warn func(msg string)
}

// DB is a connection pool to a PostgreSQL database holding sessions.
type DB struct {
	pool      *pgxpool.Pool
	schema    string
	schemaSet bool     // Options.Schema named it (omp's table is then looked for there too)
	conn      connInfo // the connection string: secrets, and how to print it
}

var identRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`) })

// Connect connects to the database at rawURL (EnvURL's value when empty)
// without touching its schema: for omp's table (OmpTable), or before
// Migrate. Credentials come only from the URL, the environment pgx reads
// (PGPASSWORD and the like) and ~/.pgpass; TLS settings (sslmode,
// sslrootcert, sslcert, sslkey) are the URL's, handed to pgx. No error
// carries the password.
func Connect(ctx context.Context, rawURL string, opts *Options) (*DB, error) {
	if opts == nil {
		opts = &Options{}
	}
	if rawURL == "" {
		rawURL = os.Getenv(EnvURL)
	}
	if rawURL == "" {
		return nil, ErrNoURL
	}
	info := parseConnInfo(rawURL)
	db := &DB{schema: opts.Schema, schemaSet: opts.Schema != "", conn: info}
	if db.schema == "" {
		db.schema = DefaultSchema
	}
	if !identRE().MatchString(db.schema) {
		return nil, fmt.Errorf("schema %q: want a name of letters, digits and _, at most 63 bytes", db.schema)
	}
	if info.problem != "" {
		src := "the database URL"
		if opts.URLSource != "" {
			src = opts.URLSource
		}
		return nil, fmt.Errorf("%s does not parse: %s (see docs/teams.md; the string is not shown, as it may hold a password)", src, info.problem)
	}
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, info.parseError(err)
	}
	if warning := info.passfileWarning(); warning != "" {
		if opts.Warn != nil {
			opts.Warn(warning)
		}
		// pgx read the file all the same: forget what it found there.
		if cfg.ConnConfig.Password != "" && !info.password {
			cfg.ConnConfig.Password = ""
		}
	}
	cfg.MaxConns = opts.MaxConns
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 4
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "xdev"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", db.conn.shown, db.redact(err))
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database %s: %w", db.conn.shown, db.redact(err))
	}
	db.pool = pool
	return db, nil
}

// Open connects to the database at rawURL and makes sure xdev's schema is
// there at this version, applying the migrations it lacks (see
// migrations) on first use. A role that may only read finds the schema
// ready and is never asked to write.
func Open(ctx context.Context, rawURL string, opts *Options) (*DB, error) {
	db, err := Connect(ctx, rawURL, opts)
	if err != nil {
		return nil, err
	}
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// OpenRead connects to the database at rawURL for reading xdev's tables
// and checks that the schema is there at this version, writing nothing:
// a read command must never create a schema (a mistyped --schema would
// otherwise leave one behind on a shared server) nor migrate one. A
// schema that is missing, older or newer is an error naming it and
// saying what to do.
func OpenRead(ctx context.Context, rawURL string, opts *Options) (*DB, error) {
	db, err := Connect(ctx, rawURL, opts)
	if err != nil {
		return nil, err
	}
	v, err := db.version(ctx)
	switch {
	case err != nil:
	case v == 0:
		err = fmt.Errorf("%w %q is not in database %s: no session was synced there (xdev sync makes it; --schema names another)", ErrSchema, db.schema, db.URL())
	case v < SchemaVersion:
		err = fmt.Errorf("%w %q is at version %d; this xdev reads version %d: run xdev sync once, as a role that may change the schema, to migrate it", ErrSchema, db.schema, v, SchemaVersion)
	case v > SchemaVersion:
		err = fmt.Errorf("%w %q is at version %d; this xdev knows up to %d: upgrade xdev", ErrSchema, db.schema, v, SchemaVersion)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Close closes the pool.
func (db *DB) Close() { db.pool.Close() }

// URL is the database's connection string without its secrets: safe to
// print.
func (db *DB) URL() string { return db.conn.shown }

// t names table in xdev's schema, quoted.
func (db *DB) t(table string) string { return `"` + db.schema + `".` + table }

// redact takes the connection string's secrets out of err's message.
func (db *DB) redact(err error) error { return db.conn.scrubErr(err) }

// tx runs fn in a transaction, committed when fn returns nil and rolled
// back otherwise: a failed or cancelled push leaves nothing half-written.
func (db *DB) tx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return db.redact(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(tx); err != nil {
		if fp := (*fileProblem)(nil); errors.As(err, &fp) {
			return err
		}
		return db.redact(err)
	}
	return db.redact(tx.Commit(ctx))
}

// pgCode is err's SQLSTATE, "" if it is not a server's error.
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// Server errors a push retries: another writer got there first.
const (
	codeUniqueViolation      = "23505"
	codeSerializationFailure = "40001"
	codeDeadlock             = "40P01"
	codeUndefinedTable       = "42P01"
	codeInsufficientPriv     = "42501"
	codeReadOnlyTx           = "25006"
	codeInvalidSchema        = "3F000"
)
