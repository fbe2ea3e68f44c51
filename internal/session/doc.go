// Package session reads and writes coding-agent session files in the
// format omp (oh-my-pi) 18.2.3 writes, so that a session either program
// wrote resumes in the other.
//
// # The file
//
// A session is one JSONL file: UTF-8, one JSON object per line, every line
// ending in '\n'.
//
//	line 1    title slot   exactly 256 bytes including the '\n'
//	line 2    header       {"type":"session","version":3,"id":…,"timestamp":…,"cwd":…}
//	line 3+   entries      an append-only tree, one entry per line
//
// The title slot is a fixed-width line so that a retitle can overwrite it
// in place without moving a byte of the rest of the file:
//
//	{"type":"title","v":1,"title":"Fix the build","source":"auto","updatedAt":"2026-11-29T20:34:52.605Z","pad":"      …"}
//
// Its fields come in that order; "source" is "auto" or "user" (a person's
// choice, TitleManual in the API) or absent; "pad" is spaces that fill the
// line to 256 bytes. A title too long to fit is cut one rune at a time,
// measured on its escaped UTF-8 form. omp refuses to resume a file whose
// line 1 is a slot it does not accept (a "manual", "subagent" or null
// source, a "v" other than 1, no pad), so xdev reads those (the slot is
// only a cached title) but never writes them, and Verify reports them. A
// file may also start with its header; the slot is then simply absent. A
// UTF-8 byte order mark before line 1, and lines that are not JSON before
// the header, are skipped, as omp skips them.
//
// The header names the session (a UUIDv7 id), its creation time and
// working directory, and optionally parentSession: the source's id for a
// fork, the parent's file path for a subagent or a branched copy. A header
// without "version" is format v1.
//
// # Entries
//
// Every entry has an envelope and a body:
//
//	{"type":"message","id":"1a2b3c4d","parentId":"0f0e0d0c","timestamp":"2026-11-29T20:34:53.001Z","message":{…}}
//
// id is 8 lowercase hex digits; parentId is the id of the entry it follows,
// or null for a root ("" in memory); timestamps are ISO-8601 UTC with
// milliseconds, except inside messages, where they are epoch milliseconds.
// The parent links form a tree: going back and continuing from an earlier
// entry starts a branch. The leaf, where the conversation continues, is the
// last entry in the file; its path to the root is the active branch. To move
// the leaf durably, xdev appends a branch marker,
//
//	{"type":"custom","customType":"branch","data":{"to":"<id>"},"id":…,"parentId":"<id>",…}
//
// whose parentId is the target, so omp, which knows no marker, resumes on
// the same branch.
//
// Bodies are typed for every entry type omp writes (see the Type
// constants and the Body implementations). An entry of any other type is a
// node of the tree like any other and never reaches the model. A line that
// is not a JSON object (a torn write, garbage, null) is skipped and
// counted: partial history beats none.
//
// # Read as JavaScript reads it
//
// omp reads each line with JSON.parse and uses what it returns without
// validating it, so a file from another writer may hold values of other
// types than these: numeric ids, entries without a type or an id, a float
// token count, a timestamp string inside a message, duplicate names. xdev
// reads such files exactly as omp does (package jsonx is JSON.parse and
// JSON.stringify): the last of duplicate names wins; every JSON object is
// an entry; an id is a key, so the number 5 and the string "5" are
// different ids, as in a JavaScript Map, and a falsy parentId makes a
// root; an id-less last line is still the leaf; typed fields of another
// type read as zero and never drop an entry; a message reaches the model
// as JSON.stringify writes the parsed value, lone surrogates included; the
// header's version is compared as JavaScript compares it ("3" is 3).
//
// # What a model sees
//
// BuildContext walks the path from the leaf to the root and rebuilds the
// messages exactly as omp's buildSessionContext does. The later of the last
// compaction and the last reset_boundary on the path governs: after a
// reset, only what follows it; after a compaction, a compactionSummary
// message, the entries from its firstKeptEntryId up to it, and everything
// after it (an OpenAI remote compaction replays its own window instead; a
// notes-backed rollover also keeps the latest user request before the kept
// entries; a snapcompact archive comes back as the summary's blocks and
// images). branch_summary and custom_message entries become messages, and
// a context notebook (a custom entry, experimental_context_notes) becomes
// the first message; tool calls without a result are stripped; aborted
// and errored turns are dropped with their tool results. Synthesized
// messages carry omp's fields and its timestamp rule (new Date(x).getTime(),
// null when that is NaN). Images whose data lives in the blob store
// (blob:sha256:<hex>, the sha256 of the decoded bytes, under
// <dataDir>/blobs/) are resolved back to base64 wherever omp resolves them,
// without checking the hash, as omp reads them.
//
// # Reading
//
// Open never writes. It reads the file once from the end, parsing only each
// line's envelope: the last entry is the leaf, so reading backward walks
// the leaf's path, and Open holds nothing but the entries of that path from
// the window's start (the governing compaction's kept entry, or the latest
// reset) to the leaf, plus the few settings entries before it that still
// apply (and the context notebook revisions since the latest reset).
// Entries of other branches, and everything before the window, are
// counted and dropped. It then decodes only the kept lines. Memory follows
// the window, not the file; a path without any compaction or reset is kept
// whole. Older formats are migrated in memory: v1 entries get ids derived
// from their position and are chained in file order, v2's hookMessage role
// reads as custom.
//
// Reading every line's envelope is what a long session's open costs. With
// OpenOptions.Checkpoints, the load of a file of 8 MiB or more keeps what
// it read of the lines (each one's verdict and envelope, last first) in
// that directory, and the next load of the same file, grown by appends
// only, reads the new lines from the file and the rest from the
// checkpoint, taking the same steps in the same order as a load of the
// whole file. A checkpoint is trusted only for the same inode, entries
// offset, format and line bound, a file at least as long (its time the
// same if no longer) whose bytes agree at 18 samples of the region; it
// carries its own checksum, and goes after 30 days unwritten
// (checkpoint.go).
//
// A listing's cost at thousands of sessions is opening and reading each
// file's head and tail. With ListOptions.Cache, List keeps what it read
// of each file in that directory, and the next listing stats every file
// and reads only those whose size, inode, modification or change time
// differ (listcache.go); a file changed within a second of the listing,
// or one List could not read, is never kept. A caller told which files
// changed (a watcher) need not list at all: ListPaths describes just
// those files as List would, and says when only a whole List can tell
// (a directory made or renamed into place).
//
// Work over a whole file (every entry, the tree, verifying, exporting,
// copying a branch) goes through an Index instead: where each line is and
// how it hangs in the tree, with entries read and decoded one at a time.
// A reader that follows a growing file (a search index) uses ReadFrom: the
// same forward rule, from a Cursor where its last read stopped, leaving an
// unfinished last line for the next read. A reader that wants a few of a
// file's entries once (a usage ledger's calls) uses Scan: Index's rule in
// one pass that keeps nothing, each entry's type and JSON handed on as
// its line is read, for the reader to decode only those it wants.
//
// A session kept elsewhere than in a file (a database row per line) is
// read by the same rules through an io.ReaderAt: OpenReader is Open over
// it, windowed and read-only, ReadFromReader is ReadFrom, and
// NewBlobSource serves its image blobs. A copy of a session that has
// lines this file lacks is brought in by AppendRaw (whole lines, byte for
// byte, under the lockfile) and ReplaceSlot.
//
// Each rule lives in one file: the slot in slot.go, the header in
// header.go, the preamble (slot, header, title) in preamble.go, what a
// line's envelope says in envelope.go, the forward step every forward
// reader takes in scan.go, ids in ids.go, migrations in
// migrate.go, what a window keeps in keep.go, checkpoints in checkpoint.go, a listing's cache in listcache.go,
// labels in labels.go, the
// context in context.go (with context_omp.go and snapcompact.go), the
// lockfile in lock.go. docs/format.md maps the rest.
//
// # Writing
//
// An append is one write(2) of complete lines on an O_APPEND descriptor,
// under omp's lockfile (.<name>.jsonl.lock, created O_EXCL and holding
// "<pid>:<ms>\n"), so an omp process on the same machine never races it.
// The lockfile is kept for DefaultLockLinger (1 ms) after a write, so a burst of
// appends creates it once; omp, polling every 2 ms, waits at most a poll.
// Under the lock, before writing, the store takes in what other writers
// did since it last looked (entries appended, a retitle, a rewrite), so an
// entry appended without an explicit parent hangs from the file's real
// last entry and concurrent writers never fork the session. A failed write
// is truncated back, and an operation that fails part-way (a retitle whose
// slot write fails) takes back what it wrote: a failed call leaves the
// file as it was. A torn last line (no '\n') gets a newline first, so the
// new entry never glues onto it. A header claiming a
// version above 3 is read as v3 but never written. New files appear
// atomically with their slot and header (a temp file linked into place,
// never over an existing file); whole-file rewrites go to a temp file that
// is synced and renamed. Files are 0600 and directories 0700. xdev never
// re-encodes a line it did not write: copies emit the original bytes. New
// lines are encoded as JavaScript's JSON.stringify would encode them.
package session
