package search

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/secrets"

	"github.com/ncruces/go-sqlite3"

	"github.com/xdev/xdev/internal/searchtext"
	"github.com/xdev/xdev/internal/session"
)

// Query is one search: the words, and filters on where they are.
type Query struct {
	// Text is what the user typed: words (all must match), "exact
	// phrases", prefix*, OR between two terms, -excluded.
	Text string
	// Thinking searches the model's thinking too.
	Thinking bool
	// Cwd keeps the sessions of one project (its directory as the header
	// says it); "" keeps all.
	Cwd string
	// Since and Until keep entries written in [Since, Until); zero is open.
	Since, Until time.Time
	// Role keeps hits of one role (RoleUser, RoleAssistant, RoleTool, …).
	Role string
	// Tool keeps tool calls and results of the tool of this name.
	Tool string
	// Model keeps assistant messages whose model contains this.
	Model string
	// Path keeps the hits of one session file.
	Path string
	// Subagents includes hits in subagent transcripts (always indexed).
	Subagents bool
	// InContext keeps the entries a resumed session still sends the
	// model: on the active branch, not summarized away by a compaction.
	InContext bool
	// Limit is how many hits to return; 0 is DefaultLimit.
	Limit int
	// Newest orders hits by time, newest first, rather than by relevance.
	Newest bool
	// NoSnippets leaves the hits' snippets empty, for a caller that keeps
	// some of them only (a merge of several indexes' hits keeps a third
	// of them) and cuts those (DB.Snippets): a snippet reads its entry
	// from the session file, most of a search's time.
	NoSnippets bool
	// PathsOnly leaves Sessions' id, title and cwd empty, for a caller
	// that shows the paths alone (`search -l`): a word in every session
	// read and masked 25,000 titles for nothing.
	PathsOnly bool
}

// DefaultLimit is how many hits a query returns unless told.
const DefaultLimit = 20

// Hit is one entry that matched: where it is and what it says.
type Hit struct {
	Harness   string // "xdev", "omp", …
	Path      string
	SessionID string
	Title     string
	// FirstMessage is the start of the session's first message where it
	// has no title (filled by the catalog, as its listing says it): what
	// a person tells untitled sessions apart by.
	FirstMessage string
	Cwd          string
	Subagent     bool
	Modified     time.Time // the session file's modification time
	EntryID      string    // the entry's id as the index keys it; "" for a title
	Line         int       // 1-based line of the entry in the file
	Offset       int64     // where its line starts
	Role         string
	Tool         string
	Model        string
	Timestamp    time.Time // zero when the entry has none
	// Snippet is a short excerpt of the entry around the match, on one
	// line; Highlights are the byte ranges in it that matched.
	Snippet    string
	Highlights [][2]int
	// OnActiveBranch: the entry is on the path from the session's leaf,
	// what omp resumes; false for an abandoned branch.
	OnActiveBranch bool
	// InContext: on the active branch and not summarized away by a
	// compaction, so a resumed session still sends it to the model.
	InContext bool
	// AlsoIn are the other session files holding the same entry (same id
	// and text): forks, which copy entries verbatim.
	AlsoIn []string
	// Rank orders hits by relevance: lower is better (FTS5's bm25; of a
	// query of one phrase, bm25 without the phrase's inverse document
	// frequency, the same factor for every hit: rank.go).
	Rank float64

	version, headerLine int // to read the entry back (entryAt)
}

// Search runs q on the index as it is; call Refresh first for a fresh
// answer. An unreadable query is a *QueryError. An index found damaged
// on the way is rebuilt and refreshed, and q runs again.
func (db *DB) Search(ctx context.Context, q Query) ([]Hit, error) {
	return retryDamaged(db, ctx, func() ([]Hit, error) { return db.search(ctx, q) })
}

// Sessions returns every session file with at least one hit for q (its
// Limit and order aside), most recently modified first: what grep -l
// gives, without reading the files for snippets. An index found damaged
// on the way is rebuilt and refreshed, and q runs again.
func (db *DB) Sessions(ctx context.Context, q Query) ([]Session, error) {
	return retryDamaged(db, ctx, func() ([]Session, error) { return db.sessions(ctx, q) })
}

// retryDamaged runs query; if it finds the index damaged, it rebuilds the
// index, refreshes it as the last Refresh did, and runs query again.
func retryDamaged[T any](db *DB, ctx context.Context, query func() (T, error)) (T, error) {
	out, err := query()
	if !isDamaged(err) {
		return out, err
	}
	unlock, lerr := db.lockRefresh(ctx)
	if lerr != nil {
		return out, lerr
	}
	rerr := db.rebuild(*damaged(err))
	unlock()
	if rerr != nil {
		return out, rerr
	}
	if _, err := db.Refresh(ctx, db.last); err != nil {
		return out, err
	}
	return query()
}

// RankedMatches bounds the matches a search ranks by relevance for a
// page of hits: the newest that many (by when the index read them), of
// which the best come first. A word with fewer matches is ranked whole.
const RankedMatches = 2000

// rankedMatches is RankedMatches, which a test lowers.
var rankedMatches = RankedMatches

func (db *DB) search(ctx context.Context, q Query) ([]Hit, error) {
	if db.conn == nil {
		return nil, errClosed
	}
	p, err := parseQuery(q.Text)
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	from, args := q.from(p)
	// Ties (a fork's copies of an entry score alike) go to the oldest
	// session, the one the others were forked from.
	order := p.rank + ", f.created, f.path"
	if q.Newest {
		order = "e.ts DESC, f.created, f.path, e.id DESC"
	}
	const cols = `e.id, e.entry_id, e.role, e.tool, e.model, e.ts, e.off, e.line, e.digest, e.on_branch, e.in_context,
		f.path, f.harness, f.session_id, f.title, f.cwd, f.subagent, f.mtime, f.version, f.header_line`
	sql := `SELECT ` + cols + `, ` + p.rank + ` ` + from + " ORDER BY " + order + " LIMIT ?"
	// Forks hold the same entries: ask for more rows than hits, to fill
	// the limit once copies are folded.
	rows := limit*4 + 16
	if !q.Newest && rows < rankedMatches {
		// A page ranked by relevance ranks at most the newest
		// RankedMatches matches (FTS5 walks a word's matches by rowid
		// without scoring them): bm25 of every match of a word in most
		// sessions took seconds for a page of 20.
		sql = `SELECT ` + cols + `, m.rk FROM (SELECT docs.rowid AS r, ` + p.rank + ` AS rk ` + from +
			` ORDER BY docs.rowid DESC LIMIT ` + strconv.Itoa(rankedMatches) + `) m
			JOIN entries e ON e.id = m.r JOIN files f ON f.id = e.file
			ORDER BY m.rk, f.created, f.path LIMIT ?`
	}
	args = append(args, rows)

	old := db.conn.SetInterrupt(ctx)
	defer db.conn.SetInterrupt(old)
	st, _, err := db.conn.Prepare(sql)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if err := bind(st, args...); err != nil {
		return nil, err
	}
	var hits []Hit
	var digests []uint64
	seen := map[uint64]bool{}
	for len(hits) < limit && st.Step() {
		dg := uint64(st.ColumnInt64(8))
		if dg != 0 && seen[dg] {
			continue
		}
		seen[dg] = true
		h := Hit{
			EntryID: st.ColumnText(1), Role: st.ColumnText(2), Tool: st.ColumnText(3), Model: st.ColumnText(4),
			Offset: st.ColumnInt64(6), Line: st.ColumnInt(7), OnActiveBranch: st.ColumnBool(9), InContext: st.ColumnBool(10),
			Path: st.ColumnText(11), Harness: st.ColumnText(12), SessionID: st.ColumnText(13), Title: secrets.Mask(st.ColumnText(14)),
			Cwd: st.ColumnText(15), Subagent: st.ColumnBool(16), Modified: time.Unix(0, st.ColumnInt64(17)),
			version: st.ColumnInt(18), headerLine: st.ColumnInt(19), Rank: st.ColumnFloat(20),
		}
		if ts := st.ColumnInt64(5); ts != 0 {
			h.Timestamp = time.UnixMilli(ts)
		}
		hits = append(hits, h)
		digests = append(digests, dg)
	}
	if err := st.Err(); err != nil {
		return nil, queryErr(q.Text, err)
	}
	for i := range hits {
		if digests[i] != 0 {
			if hits[i].AlsoIn, err = db.copies(digests[i], hits[i].Path); err != nil {
				return nil, err
			}
		}
		if !q.NoSnippets {
			hits[i].Snippet, hits[i].Highlights = db.snippetOf(&hits[i], p.phrases)
		}
	}
	return hits, nil
}

// Snippets cuts the snippets of hits this index's Search returned for q
// with q.NoSnippets.
func (db *DB) Snippets(q Query, hits []*Hit) error {
	p, err := parseQuery(q.Text)
	if err != nil {
		return err
	}
	for _, h := range hits {
		h.Snippet, h.Highlights = db.snippetOf(h, p.phrases)
	}
	return nil
}

// from is the FROM and WHERE of a query: the match and its filters.
func (q *Query) from(p parsed) (string, []any) {
	sql := "FROM docs JOIN entries e ON e.id = docs.rowid JOIN files f ON f.id = e.file WHERE docs MATCH ?"
	args := []any{q.match(p)}
	c := q.conditions()
	for _, c := range append(c.files, c.entries...) {
		sql += " AND " + c.sql
		args = append(args, c.args...)
	}
	return sql, args
}

// match is the FTS5 expression of a query: its words, in the text
// column unless the thinking is searched too.
func (q *Query) match(p parsed) string {
	if !q.Thinking {
		return "{text} : (" + p.expr + ")"
	}
	return p.expr
}

// condition is one SQL condition of a query's filters, with its
// arguments.
type condition struct {
	sql  string
	args []any
}

// conditions are a query's filters: on what files rows hold (f), and on
// what only entries rows hold (e).
func (q *Query) conditions() (c struct{ files, entries []condition }) {
	file := func(sql string, a ...any) { c.files = append(c.files, condition{sql, a}) }
	entry := func(sql string, a ...any) { c.entries = append(c.entries, condition{sql, a}) }
	if q.Cwd != "" {
		file("f.cwd = ?", q.Cwd)
	}
	if q.Path != "" {
		file("f.path = ?", q.Path)
	} else if !q.Subagents {
		file("f.subagent = 0")
	}
	if !q.Since.IsZero() {
		entry("e.ts >= ?", q.Since.UnixMilli())
	}
	if !q.Until.IsZero() {
		entry("e.ts < ?", q.Until.UnixMilli())
	}
	if q.Role != "" {
		entry("e.role = ?", q.Role)
	}
	if q.Tool != "" {
		entry(`(' ' || e.tool || ' ') LIKE ? ESCAPE '\'`, "% "+likeEscape(q.Tool)+" %")
	}
	if q.Model != "" {
		entry(`e.model LIKE ? ESCAPE '\'`, "%"+likeEscape(q.Model)+"%")
	}
	if q.InContext {
		entry(`e.in_context = 1 AND e.type != 'title'`)
	}
	return c
}

// Session is a session file with hits, as Sessions lists it.
type Session struct {
	Harness, Path, SessionID, Title, Cwd string
	Subagent                             bool
	Modified                             time.Time
	Hits                                 int // entries that matched
}

func (db *DB) sessions(ctx context.Context, q Query) ([]Session, error) {
	if db.conn == nil {
		return nil, errClosed
	}
	p, err := parseQuery(q.Text)
	if err != nil {
		return nil, err
	}
	sql, args := q.sessionsSQL(p)
	old := db.conn.SetInterrupt(ctx)
	defer db.conn.SetInterrupt(old)
	// The matches are counted by their rowids, each page of the doclists
	// read once: the query cache buys nothing, and its pages would stay
	// (SQLite's heap never shrinks). 32 MB of them took a `search -l` of
	// a word in every session from 81 to 101 MiB, in the same time
	// (sessionsCacheKiB).
	if db.conn.Exec(fmt.Sprintf(`PRAGMA cache_size=-%d`, sessionsCacheKiB)) == nil {
		defer db.conn.Exec(fmt.Sprintf(`PRAGMA cache_size=-%d`, queryCacheKiB))
	}
	st, _, err := db.conn.Prepare(sql)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if err := bind(st, args...); err != nil {
		return nil, err
	}
	var out []Session
	for st.Step() {
		s := Session{Harness: st.ColumnText(0), Path: st.ColumnText(1), Subagent: st.ColumnBool(5),
			Modified: time.Unix(0, st.ColumnInt64(6)), Hits: st.ColumnInt(7)}
		if !q.PathsOnly {
			s.SessionID, s.Title, s.Cwd = st.ColumnText(2), secrets.Mask(st.ColumnText(3)), st.ColumnText(4)
		}
		out = append(out, s)
	}
	if err := st.Err(); err != nil {
		return nil, queryErr(q.Text, err)
	}
	// Most recently modified first, sorted here rather than by SQLite,
	// whose sorter would hold every row (titles, paths) in its heap,
	// which never shrinks: 6 MB more of a `search -l` of a word in
	// 25,000 sessions.
	slices.SortFunc(out, func(a, b Session) int {
		if c := b.Modified.Compare(a.Modified); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	return out, nil
}

// sessionsSQL is the statement of Sessions, its rows in no order (sessions
// sorts them). Filtered by files rows alone, the matches are counted by
// the file their rowid names (rowid.go), so entries is not read; a filter
// on entries joins them.
func (q *Query) sessionsSQL(p parsed) (string, []any) {
	const cols = `SELECT f.harness, f.path, f.session_id, f.title, f.cwd, f.subagent, f.mtime, `
	c := q.conditions()
	if len(c.entries) > 0 {
		from, args := q.from(p)
		return cols + `count(*) ` + from + ` GROUP BY f.id`, args
	}
	sql := cols + fmt.Sprintf(`m.n FROM (SELECT rowid >> %d AS file, count(*) AS n FROM docs WHERE docs MATCH ? GROUP BY 1) m
		JOIN files f ON f.id = m.file WHERE 1`, seqBits)
	args := []any{q.match(p)}
	for _, c := range c.files {
		sql += " AND " + c.sql
		args = append(args, c.args...)
	}
	return sql, args
}

// copies returns the other files that hold an entry of this digest.
func (db *DB) copies(dg uint64, path string) ([]string, error) {
	st, _, err := db.conn.Prepare(`SELECT DISTINCT f.path FROM entries e JOIN files f ON f.id = e.file
		WHERE e.digest = ? AND e.digest != 0 AND f.path != ? ORDER BY f.path`) // "!= 0": the partial index is used only when the query says so
	if err != nil {
		return nil, err
	}
	defer st.Close()
	bind(st, dg, path)
	var out []string
	for st.Step() {
		out = append(out, st.ColumnText(0))
	}
	return out, st.Err()
}

// queryErr makes an FTS5 complaint about a query a QueryError.
func queryErr(q string, err error) error {
	var e *sqlite3.Error
	if errors.As(err, &e) && !isDamaged(err) && (strings.Contains(e.Error(), "fts5") || e.Code() == sqlite3.ERROR) {
		return &QueryError{Query: q, Reason: e.Error()}
	}
	return err
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// snippetOf cuts the hit's snippet from its entry in the session file
// (the index keeps no text): the stretch around the first place the
// query's phrases meet, on one line, with the matches' ranges.
func (db *DB) snippetOf(h *Hit, phrases []searchtext.Phrase) (string, [][2]int) {
	var text string
	if h.Role == RoleTitle {
		text = h.Title
	} else {
		read := docAt
		if db.opts.Source != nil {
			read = db.sourceDoc
		}
		d, err := read(h)
		if err != nil {
			return "", nil
		}
		text = d.Text
		if !searchtext.HasMatch(text, phrases) && d.Thinking != "" {
			text = d.Thinking
		}
	}
	// Masked before it is cut: a cut could leave part of a key no rule
	// knows. The index keeps the text as it is (a local cache, 0600);
	// nothing read from it leaves unmasked.
	return searchtext.Cut(secrets.Mask(text), phrases)
}

// docAt reads back the searchable text of the entry whose line starts at
// h.Offset, by the rule the index read it.
func docAt(h *Hit) (searchtext.Doc, error) {
	var d searchtext.Doc
	found := false
	c := session.Cursor{Offset: h.Offset, Line: h.Line - 1, HeaderLine: h.headerLine, Version: h.version, Entries: 1}
	_, _, err := session.ReadFrom(h.Path, c, searchtext.ReadOptions, func(r session.Read) error {
		if r.Entry != nil {
			d = searchtext.Of(r.Entry)
		} else {
			_, _, _, d = searchtext.OfTruncated(r.Truncated)
		}
		found = true
		return errFound
	})
	if err != nil && err != errFound {
		return d, err
	}
	if !found {
		return d, fmt.Errorf("%s: line %d: no entry there any more", h.Path, h.Line)
	}
	return d, nil
}

var errFound = errors.New("found")
