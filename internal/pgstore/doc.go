// Package pgstore keeps sessions in PostgreSQL, so that they outlive the
// machine that wrote them: a team's server holds every member's sessions,
// and a session pushed from one machine is pulled on another, for omp and
// xdev to continue: with the secrets in its lines masked, since every
// member reads the store (masked.go), or byte for byte (PushOptions.Raw).
//
// # The store
//
// A session file is stored as one row per line (table lines), keyed by
// the session's revision and the line's byte offset, with the line's
// exact bytes (or the line masked, and its offset among the masked lines) and what the core reader read of it (the entry's id,
// parent, type, and its searchable text, indexed for full-text search),
// under a row per revision of the file (table sessions: its path under a
// data dir's sessions directory, id, cwd, title, size). So an append is
// one INSERT, lines come back byte-identical, a listing is one query, and
// a session opens from the server by the file store's own windowed rule:
// session.OpenReader over an io.ReaderAt of the rows (DB.OpenSession).
//
// DB.Push stores what changed in a data dir since the last push from the
// same origin: the lines past each stored revision's end, once the bytes
// before that end are found equal to the file's; a file rewritten (or
// continued differently elsewhere) becomes a new revision, never merged.
// DB.Pull writes stored sessions into a data dir as omp writes its files.
// Every push of a file is one transaction. docs/teams.md has the schema,
// the rules and the guarantees, each with its test.
//
// # omp's table
//
// OmpTable speaks omp's own SQL table, omp_session_files, as omp 18.2.3's
// SqlSessionStorage does: a row per file with the whole file in one
// value, an append as content = content || line, the title columns laid
// over line 1 on reading. What xdev pushes there omp lists and resumes,
// and what omp stores there xdev reads.
//
// # Connecting
//
// Open connects to a URL (EnvURL's value when empty) and applies the
// schema's migrations on first use; Connect connects without touching
// the schema. Credentials come from the URL, the environment or
// ~/.pgpass; no error carries the password; every value is a bound
// parameter.
package pgstore
