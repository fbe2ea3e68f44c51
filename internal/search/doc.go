// Package search finds what was said in any session of a data dir: an
// incremental full-text index, kept as a cache beside the sessions, never
// in their place.
//
// # The index
//
// One SQLite database per data dir (DefaultPath: os.UserCacheDir()/xdev/
// search/<name>-<hash>.db, 0600), through ncruces/go-sqlite3, a pure-Go
// build of SQLite (no cgo), with FTS5. It holds three tables:
//
//   - files: one row per session file: its stat (inode, size, mtime), how
//     far it is indexed (a session.Cursor), a SHA-256 of the 4 KiB before
//     that point, and what a hit shows of its session (id, cwd, title).
//   - entries: one row per entry, text or not (the active branch is walked
//     through all of them): id, parent, type, role, tool, model, time,
//     where its line is, a digest of its text (to fold the copies forks
//     make), and whether it is on the active branch and in the context.
//     An entry's rowid is its file's id and its place in the file
//     (rowid.go), so a match names its file without a read of entries.
//   - docs: an FTS5 table of the entries' text, with the model's thinking
//     in a column of its own. It is contentless (its content option is
//     empty): the index keeps the words' positions, not the text, which
//     the session files hold; a snippet is cut from the entry's line,
//     read back by its offset. Tokens are FTS5's unicode61 with
//     diacritics removed and '_' a token character, so snake_case names
//     are one token; CJK characters are given to it spaced, so each is a
//     token (searchtext.SpaceCJK).
//
// What is searchable is one rule, searchtext.Of: user and assistant text,
// tool calls (name and argument values), tool results and shell runs,
// compaction and branch summaries, custom messages, and the title; the
// thinking apart. At most searchtext.MaxDocBytes of each.
//
// # Refresh
//
// The index has no daemon: DB.Refresh brings it up to date, and a search
// calls it first. It stats every file. One whose stat is unchanged costs
// nothing more. One that grew, whose inode is the same and whose hashed
// 4 KiB are still there, is read from its cursor (session.ReadFrom), so
// an append to a 500 MB session reads only the new lines. Anything else
// (shrunk, replaced, rewritten in place) is read again from the start; a
// file gone is dropped. A last line without its newline is a write in
// progress and waits for the next refresh. Work is committed every 32 MB
// read, each file's rows with its cursor, so an interrupted refresh keeps
// what it did and never holds half a file.
//
// Two refreshes of one index (two processes, or two handles) take turns
// on an flock beside it; searches read the last commit meanwhile (WAL).
// A wait for another process is said (OpenOptions.Waiting) and bounded.
//
// # Damage
//
// Every page carries a checksum SQLite checks as it reads it, and a page
// read back as all zeros, which its checksum cannot tell (the checksum
// of zeros is zeros), is damage too (zeropage.go). An index
// SQLite finds damaged (a failed checksum, a malformed file), at Open, at
// Refresh or at a query, is set aside and rebuilt, once, and DB.Notice
// says so; a query that met the damage runs again on the rebuilt index.
// So is one of another schema version, of another data dir, or without
// checksums. Refresh with Reindex makes a new file. The index's path must
// hold a regular file: a symlink there is refused, never followed. A
// first build that fails leaves no index behind; a full disk is named as
// such (damage.go).
//
// # Queries
//
// Query.Text is what people type, in searchtext's language: words (all
// must match), "exact phrases", prefix*, OR between two terms, -excluded,
// within bounds (searchtext.MaxQueryBytes, MaxQueryTerms), repeats counted
// once. Every word is passed to FTS5 quoted, so no punctuation is read as
// FTS5 syntax; what cannot be run is a *QueryError. Filters narrow by project, time, role, tool,
// model and session; hits come by relevance (bm25) or newest first. An
// entry found in several files under the same id and text (a fork's
// copies) is one hit, with the others in Hit.AlsoIn.
package search
