// Package usagecache keeps what a usage ledger read of each session file
// (internal/catalog's Usage), so that a warm ledger reads only the files
// that changed: one file per set of places under xdev's cache dir, named
// by the places and by usage.CacheVersion, the version that sits beside
// the cost rules and changes with them (a cache of another version is
// another file, never read).
//
// For each session file, by its Stamp (size, inode, mtime): the
// session's header, its digest, its calls and the requests they hold
// (cache.go; the bytes in codec.go). An index of every session's
// requests says which sessions share one with another, and are counted
// call by call. A Claude Code transcript that only grew is read on from
// where it ended (Cache.Grown). A file that is torn, damaged or of
// another version is ignored and written again; an entry whose file
// changed, or changed too recently to be sure of (Stamp.Fresh), is read
// again. Save writes the cache only when enough changed (a running
// agent's one session is cheaper to read again than 10,000 to rewrite),
// atomically, and never fails a ledger.
//
// Beside it, a complete ledger's groups (counted.go, Counted): what a
// report takes with no ledger built while no file changed, known by the
// sum of the files' stamps (StampSum), or on the word of the server that
// wrote them (Counted.Server); and their status (usage.Status), a part
// of the file a status line reads alone, with the pages of the sessions'
// sums that hold the names it asks for (by their hashes), decoding no
// other. With them, the files the ledger read (ledgerfiles.go,
// LedgerFiles: each one's stamp, whether its session was counted alone,
// its lineage, the end of one written lately; and the keys of the
// sessions' calls and the names they are known by and link to, as sets
// of hashes), so that where a few of them only grew, or are new and
// share none of that, their sessions are counted (again) into the groups
// (countedreplace.go, ReplaceCounted: the file written anew from its
// groups read again, never held) rather than a ledger built again.
package usagecache
