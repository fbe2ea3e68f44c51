package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"

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
}

// DB is a connection pool to a PostgreSQL database holding sessions.
type DB struct {
	pool      *pgxpool.Pool
	schema    string
	schemaSet bool   // Options.Schema named it (omp's table is then looked for there too)
	secret    string // the URL's password, never printed (see redact)
	shown     string // the URL without its password
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

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
	db := &DB{schema: opts.Schema, schemaSet: opts.Schema != "", secret: urlPassword(rawURL), shown: redactURL(rawURL)}
	if db.schema == "" {
		db.schema = DefaultSchema
	}
	if !identRE.MatchString(db.schema) {
		return nil, fmt.Errorf("schema %q: want a name of letters, digits and _, at most 63 bytes", db.schema)
	}
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, db.redact(fmt.Errorf("database URL %s: %w", db.shown, err))
	}
	cfg.MaxConns = opts.MaxConns
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 4
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "xdev"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, db.redact(fmt.Errorf("database %s: %w", db.shown, err))
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, db.redact(fmt.Errorf("database %s: %w", db.shown, err))
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

// Close closes the pool.
func (db *DB) Close() { db.pool.Close() }

// URL is the database's URL without its password: safe to print.
func (db *DB) URL() string { return db.shown }

// t names table in xdev's schema, quoted.
func (db *DB) t(table string) string { return `"` + db.schema + `".` + table }

// redact removes the URL's password from err's message.
func (db *DB) redact(err error) error {
	if err == nil || db.secret == "" || !strings.Contains(err.Error(), db.secret) {
		return err
	}
	return &redacted{msg: strings.ReplaceAll(err.Error(), db.secret, "xxxxx"), err: err}
}

// redacted is an error whose message has the password taken out; Unwrap
// still reaches the cause (a *pgconn.PgError, say) for errors.As.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }

// urlPassword is rawURL's password, "" if none or not a URL.
func urlPassword(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		// A key=value DSN: password=...
		for _, f := range strings.Fields(rawURL) {
			if v, ok := strings.CutPrefix(f, "password="); ok {
				return strings.Trim(v, "'")
			}
		}
		return ""
	}
	p, _ := u.User.Password()
	return p
}

// redactURL is rawURL with its password replaced, for messages.
func redactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		if p := urlPassword(rawURL); p != "" {
			return strings.ReplaceAll(rawURL, p, "xxxxx")
		}
		return "(a key=value connection string)"
	}
	return u.Redacted()
}

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
	codeInvalidSchema        = "3F000"
)
