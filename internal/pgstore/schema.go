package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// migrations are the schema's versions, in order: migrations[i] takes a
// schema at version i to version i+1. One is never edited once released;
// a change is a new one. {{s}} is the schema, quoted.
var migrations = []string{
	// 1: sessions, lines, the pushes of each origin, and search.
	`
CREATE TABLE {{s}}.sessions (
	key             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	path            text NOT NULL,
	revision        int NOT NULL,
	current         boolean NOT NULL DEFAULT true,
	id              text NOT NULL,
	origin          text NOT NULL,
	cwd             text NOT NULL DEFAULT '',
	title           text NOT NULL DEFAULT '',
	title_source    text NOT NULL DEFAULT '',
	created         timestamptz,
	updated         timestamptz NOT NULL DEFAULT now(),
	parent_session  text NOT NULL DEFAULT '',
	subagent        boolean NOT NULL DEFAULT false,
	size            bigint NOT NULL DEFAULT 0,
	lines           int NOT NULL DEFAULT 0,
	entries         int NOT NULL DEFAULT 0,
	header_line     int NOT NULL DEFAULT 0,
	version         int NOT NULL DEFAULT 0,
	last_id         text NOT NULL DEFAULT '',
	pushed          timestamptz NOT NULL DEFAULT now(),
	UNIQUE (path, revision)
);
CREATE UNIQUE INDEX sessions_current ON {{s}}.sessions (path) WHERE current;
CREATE INDEX sessions_id ON {{s}}.sessions (id text_pattern_ops);
CREATE INDEX sessions_updated ON {{s}}.sessions (updated DESC) WHERE current;

CREATE TABLE {{s}}.lines (
	session    bigint NOT NULL REFERENCES {{s}}.sessions (key) ON DELETE CASCADE,
	off        bigint NOT NULL,
	seq        int NOT NULL,
	entry_id   text,
	parent_id  text,
	type       text,
	role       text,
	ts         bigint,
	line       bytea NOT NULL,
	doc        text,
	tsv        tsvector GENERATED ALWAYS AS (to_tsvector('simple', left(coalesce(doc, ''), 100000))) STORED,
	PRIMARY KEY (session, off)
);
CREATE INDEX lines_tsv ON {{s}}.lines USING gin (tsv);
CREATE INDEX lines_ts ON {{s}}.lines (ts DESC NULLS LAST, session DESC, off DESC);

CREATE TABLE {{s}}.pushes (
	origin   text NOT NULL,
	path     text NOT NULL,
	session  bigint NOT NULL REFERENCES {{s}}.sessions (key) ON DELETE CASCADE,
	size     bigint NOT NULL,
	mtime_ns bigint NOT NULL,
	ino      bigint NOT NULL,
	PRIMARY KEY (origin, path)
);
`,
	// 2: the blob store: images omp's writer keeps out of the lines, by
	// the sha256 of their bytes.
	`
CREATE TABLE {{s}}.blobs (
	name text PRIMARY KEY,
	data bytea NOT NULL
);
`,
	// 3: search reads the local index's tokens (terms.go), not
	// PostgreSQL's parse of the text: the terms of the rows there are
	// written by backfillTerms, in the same transaction.
	`
ALTER TABLE {{s}}.lines ADD COLUMN terms text;
DROP INDEX {{s}}.lines_tsv;
ALTER TABLE {{s}}.lines DROP COLUMN tsv;
ALTER TABLE {{s}}.lines ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', coalesce(terms, ''))) STORED;
CREATE INDEX lines_tsv ON {{s}}.lines USING gin (tsv);
`,
	// 4: a push masks secrets unless told not to (masked.go): a revision
	// says whether its lines were masked, and a push record where the
	// masked lines stood against the file it pushed, and a digest of the
	// file's bytes before that point.
	`
ALTER TABLE {{s}}.sessions ADD COLUMN masked boolean NOT NULL DEFAULT false;
ALTER TABLE {{s}}.pushes ADD COLUMN masked boolean NOT NULL DEFAULT false;
ALTER TABLE {{s}}.pushes ADD COLUMN src_end bigint NOT NULL DEFAULT 0;
ALTER TABLE {{s}}.pushes ADD COLUMN stored_end bigint NOT NULL DEFAULT 0;
ALTER TABLE {{s}}.pushes ADD COLUMN tail bytea;
`,
}

// afterMigration is Go work a migration needs, by the version it makes:
// what SQL alone cannot compute.
var afterMigration = map[int]func(ctx context.Context, tx pgx.Tx, db *DB) error{
	3: backfillTerms,
}

// backfillTerms writes the terms of the lines stored before migration 3,
// from their searchable text.
func backfillTerms(ctx context.Context, tx pgx.Tx, db *DB) error {
	for {
		rows, err := tx.Query(ctx, `SELECT session, off, doc FROM `+db.t("lines")+` WHERE doc IS NOT NULL AND terms IS NULL LIMIT 2000`)
		if err != nil {
			return err
		}
		type row struct {
			session, off int64
			doc          string
		}
		var batch []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.session, &r.off, &r.doc); err != nil {
				rows.Close()
				return err
			}
			batch = append(batch, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil
		}
		b := &pgx.Batch{}
		for _, r := range batch {
			b.Queue(`UPDATE `+db.t("lines")+` SET terms = $3 WHERE session = $1 AND off = $2`, r.session, r.off, terms(r.doc))
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
	}
}

// SchemaVersion is the version of the schema this code reads and writes.
var SchemaVersion = len(migrations)

// ErrSchema is returned (wrapped) when the schema is of another version
// than this code's and cannot be brought to it.
var ErrSchema = errors.New("database schema")

// migrate brings the schema to SchemaVersion. The version lives in
// schema_version; migrations run in one transaction under an advisory
// lock, so two first uses at once apply them once. A schema already at
// this version is only read.
func (db *DB) migrate(ctx context.Context) error {
	v, err := db.version(ctx)
	if err != nil {
		return err
	}
	if v == SchemaVersion {
		return nil
	}
	if v > SchemaVersion {
		return fmt.Errorf("%w %s is at version %d; this xdev knows up to %d: upgrade xdev", ErrSchema, db.schema, v, SchemaVersion)
	}
	err = db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "xdev schema "+db.schema); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS "`+db.schema+`"`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+db.t("schema_version")+` (version int NOT NULL)`); err != nil {
			return err
		}
		var cur int
		err := tx.QueryRow(ctx, `SELECT version FROM `+db.t("schema_version")).Scan(&cur)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			if _, err := tx.Exec(ctx, `INSERT INTO `+db.t("schema_version")+` VALUES (0)`); err != nil {
				return err
			}
		case err != nil:
			return err
		}
		for i := cur; i < SchemaVersion; i++ {
			sql := strings.ReplaceAll(migrations[i], "{{s}}", `"`+db.schema+`"`)
			if _, err := tx.Exec(ctx, sql); err != nil {
				return fmt.Errorf("migration %d: %w", i+1, err)
			}
			if after := afterMigration[i+1]; after != nil {
				if err := after(ctx, tx, db); err != nil {
					return fmt.Errorf("migration %d: %w", i+1, err)
				}
			}
		}
		_, err = tx.Exec(ctx, `UPDATE `+db.t("schema_version")+` SET version = $1`, SchemaVersion)
		return err
	})
	if err != nil {
		if c := pgCode(err); c == codeInsufficientPriv {
			return fmt.Errorf("%w %s is at version %d, want %d, and this role may not create it: run xdev sync once as a role that may: %v",
				ErrSchema, db.schema, v, SchemaVersion, err)
		}
		return fmt.Errorf("%w %s: %v", ErrSchema, db.schema, err)
	}
	return nil
}

// version is the schema's version: 0 when it has no tables yet.
func (db *DB) version(ctx context.Context) (int, error) {
	var v int
	err := db.pool.QueryRow(ctx, `SELECT version FROM `+db.t("schema_version")).Scan(&v)
	switch c := pgCode(err); {
	case err == nil:
		return v, nil
	case errors.Is(err, pgx.ErrNoRows), c == codeUndefinedTable, c == codeInvalidSchema:
		return 0, nil
	case c == codeInsufficientPriv:
		return 0, db.redact(fmt.Errorf("%w %s: this role may not read it: %v", ErrSchema, db.schema, err))
	}
	return 0, fmt.Errorf("database %s: %w", db.conn.shown, db.redact(err))
}
