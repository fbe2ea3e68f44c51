// Package serve is the local web app of `xdev serve`: every session of
// every harness the catalog reads, in a browser, live, from one binary.
//
// # Pages
//
// Every page is rendered on the server (html/template, the templates and
// assets embedded with go:embed), with a little plain JavaScript for what
// a page does after it loads (search as you type, keyboard moves, live
// entries, copying a command); without it every page still works.
//
//   - / (Sessions): every harness's sessions, newest first, a page of 50
//     at a time; forks, branches and subagents nested under the session
//     they came from; filters by harness, project, time, status, text
//     and whether subagents show. Each row has its title, project,
//     harness, model, status, size and cost (from the usage ledger).
//   - /search: the index's query language (`xdev search`'s), with its
//     filters; results replace themselves as the query is typed
//     (debounced, ?fragment=1 is the result list alone); each hit opens
//     its session at its entry.
//   - /s/KEY (Session): a window of the session's branch (100 entries) as
//     the HTML export renders them (internal/export.HTMLEntries), with
//     links to older and newer windows, to any entry (?at=ID) and to any
//     branch (?leaf=ID, from the list of the session tree's leaves); the
//     commands that resume or fork it, to copy; downloads as Markdown and
//     HTML. A session is opened through its index (session.OpenIndex,
//     kept open for the next request while it is unchanged), so a page of
//     a 500 MB session sends 100 entries, never the file.
//   - /usage: the usage ledger (internal/usage) by day, model, project and
//     harness: SVG bars drawn here, and tables.
//
// KEY is a digest of a session's harness and path, looked up in the
// server's own list of sessions: no path from a request reaches the
// file system, so a request can name only a session the catalog listed.
//
// # Live
//
// Server.Run watches (fsnotify) the directory tree of every place the
// catalog reads (catalog.SearchPlace.Watched). A change marks that place's
// index dirty at once (its live marker, internal/live, which is what
// lets `xdev search` skip its own stat walk while the server runs), and
// once the burst settles (200 ms after the last change, at most 1 s
// after the first) the server refreshes that index (renames, rewrites,
// deletions and torn lines as the index handles them) and tells the open
// pages of the files that changed over server-sent events (/events); a
// session's page then asks for the entries after the last one it shows
// (/s/KEY/after). A views loop, apart from the watcher's so that the
// watcher answers the CLI's questions meanwhile, lists again the
// harnesses whose places changed (at most every 2 s; the list's pages
// are told), patching its library with the rows that changed (an
// append moves one row: library.patched), and rebuilds the usage ledger
// while usage is looked at (a page open, or one that shows usage or a
// terminal's ledger asked for within a minute: at most every 30 s; else
// at the next such request). Nothing polls: with no change the server
// sleeps, and once idle after heavy work (a whole listing, a ledger) it
// hands back the memory that work used (SQLite's with the connection:
// the indexes are reopened 300 ms after the last search, 2 s after a
// refresh that read a MiB or more).
//
// # Safe by default
//
// Transcripts hold secrets, so every request passes a Guard first:
//
//   - It answers only requests whose Host header is one of the names it
//     listens under (Hosts: for a loopback address, 127.0.0.1, localhost
//     and [::1] at its port), so that a page of another site cannot reach
//     it through a name it rebinds to 127.0.0.1 (DNS rebinding).
//   - It answers only a request that carries its token: a random 256-bit
//     secret printed in the URL the user opens. The first request's
//     ?token= is exchanged for a cookie (HttpOnly, SameSite=Strict) and
//     the user sent on to the same URL without it, so that the token
//     leaves the address bar and the history; after that the cookie
//     carries it. A script may send it as "Authorization: Bearer TOKEN".
//     Tokens are compared in constant time.
//   - A request that may change state (any method but GET, HEAD and
//     OPTIONS) must come from the server's own origin: an Origin header
//     naming one of its hosts, and no Sec-Fetch-Site of another site.
//     (No page changes anything: the server never writes a session.)
//   - Every answer forbids what a transcript's content could misuse: a
//     Content-Security-Policy of the server's own scripts and styles
//     only (no inline script, no object, no frame, no base), nosniff, no
//     referrer, no framing, no caching.
//
// Session content is always escaped by html/template; what the model
// wrote is Markdown rendered and sanitized as the export does.
package serve
