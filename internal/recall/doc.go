// Package recall is xdev's MCP server (`xdev mcp`): the tools an agent
// calls to recall what was done in earlier sessions, of every harness on
// this machine, through the catalog as the CLI and `xdev serve` reach
// them.
//
// # Tools
//
//   - search_sessions: the query language of `xdev search` (words,
//     "phrases", prefix*, OR, -excluded) over every harness's index, with
//     filters (harness, project, since, until, role, subagents, in-context
//     only); hits with session id, harness, title, project, time, entry
//     id, line and a snippet.
//   - list_sessions: sessions newest first, with the same filters and a
//     title filter.
//   - get_session: a session by id, id prefix or path (the catalog's one
//     rule, catalog.Resolve): its summary (title, project, harness,
//     models, size, status, parent, forks and subagents, cost) and a page
//     of its entries, by position or around an entry id, of some roles.
//   - get_context: what a resume would send the model, a page of its
//     messages.
//   - usage_summary: the usage ledger (`xdev usage`) for a period, by day,
//     week, month, session, model, project or harness.
//
// # Bounds
//
// Every result is bounded: a call's output is at most its max_tokens
// (default DefaultTokens, at most MaxTokens), counted as bytes/4, and
// says what it used. A text longer than its share (a tool's output, a
// long message) is cut and says how much was cut. A session's summary
// takes at most a quarter of the budget (fitSummary): past that it names
// fewer of its forks and subagents, keeping their counts, and then cuts
// its texts. A page that did not fit
// gives next_cursor, an opaque string the next call passes as cursor; a
// cursor is bound to the tool that gave it and refused elsewhere.
//
// Every call answers within the server's time limit (Options.TimeLimit,
// DefaultTimeLimit). A search refreshes the indexes for refreshShare of
// it and answers from what is indexed when the refresh is stopped,
// naming the harnesses still being indexed (SearchResult.Indexing); the
// refresh keeps what it read and the next search goes on. get_session
// and get_context stop a page at the limit (at least one item) and say
// so, with the cursor that goes on. A handler still busy past the limit
// is answered for with an error (addTool), its work dropped.
//
// The content is the sessions' own text, quoted: each result says so
// (Quoted), and nothing of it is an instruction of this server's.
//
// # Safety
//
// The server never writes a session: it lists, opens and searches through
// the catalog, whose indexes and mirrors live in xdev's cache. Arguments
// are checked against each tool's schema by the SDK and then by the tool;
// a bad one is a tool error saying what was wrong, and the server stays
// up. A request line over MaxRequestBytes is answered with an error for
// its id and dropped unread (Transport); a handler that panics answers an
// error.
//
// # Freshness
//
// Each search refreshes the indexes first, as `xdev search` does: or,
// while `xdev serve` keeps them fresh, asks it (internal/live) and walks
// nothing. Listings and the ledger are read anew on each call through
// the catalog's caches.
package recall
