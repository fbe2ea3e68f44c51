package pgstore

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Query is a search of the stored sessions.
type Query struct {
	// Text is the query in web search form, as PostgreSQL's
	// websearch_to_tsquery reads it: words (all must match), "a phrase",
	// OR, and -word to exclude. Words are matched whole, case folded,
	// without stemming (the 'simple' configuration).
	Text      string
	Cwd       string // only sessions started in this directory
	Role      string // only entries of this role (search.RoleUser, …)
	Session   string // only this session (an id or id prefix)
	Since     time.Time
	Until     time.Time
	Subagents bool // subagent transcripts too
	Limit     int  // at most this many hits; 0 means 50
}

// Hit is one entry a search found.
type Hit struct {
	Session *Session
	EntryID string
	Line    int   // the entry's line number in the session
	Offset  int64 // where the line starts
	Role    string
	Time    time.Time // zero when unknown
	Snippet string    // the text around the match, the matched words between « and »
}

// commonMatches is how many matching entries make a query's words
// common (see Search).
const commonMatches = 500

// Search finds entries whose text matches q, newest first, through the
// lines' tsvector column and its GIN index: the server does the work,
// so a team's search scales with it, not with a laptop.
func (db *DB) Search(ctx context.Context, q Query) ([]Hit, error) {
	if strings.TrimSpace(q.Text) == "" {
		return nil, fmt.Errorf("empty query")
	}
	args := []any{q.Text}
	lineWhere := []string{"l.tsv @@ q.q"}
	sessWhere := []string{"s.current"}
	add := func(where *[]string, cond string, v any) {
		args = append(args, v)
		*where = append(*where, fmt.Sprintf(cond, len(args)))
	}
	if !q.Subagents {
		sessWhere = append(sessWhere, "NOT s.subagent")
	}
	if q.Cwd != "" {
		add(&sessWhere, "s.cwd = $%d", q.Cwd)
	}
	if q.Session != "" {
		add(&sessWhere, "s.id LIKE $%d", likePrefix(q.Session))
	}
	if q.Role != "" {
		add(&lineWhere, "l.role = $%d", q.Role)
	}
	if !q.Since.IsZero() {
		add(&lineWhere, "l.ts >= $%d", q.Since.UnixMilli())
	}
	if !q.Until.IsZero() {
		add(&lineWhere, "l.ts < $%d", q.Until.UnixMilli())
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	args = append(args, limit)
	// Newest first, two ways. A word in few entries: its matches are
	// found through the GIN index first, then sorted. A word in many:
	// the entries are walked newest first (lines_ts) until enough match.
	// A probe of at most commonMatches matches tells which, since the
	// planner cannot know how rare a word is that it has no statistics of.
	var common bool
	err := db.pool.QueryRow(ctx, `SELECT count(*) >= $2 FROM (SELECT 1 FROM `+db.t("lines")+` l
WHERE l.tsv @@ websearch_to_tsquery('simple', $1) LIMIT $2) m`, q.Text, commonMatches).Scan(&common)
	if err != nil {
		return nil, db.redact(err)
	}
	matches := `SELECT l.session, l.off, l.seq, l.entry_id, l.role, l.ts, l.doc FROM ` + db.t("lines") + ` l, q WHERE ` + strings.Join(lineWhere, " AND ")
	var found string
	if common {
		found = matches + ` AND EXISTS (SELECT 1 FROM ` + db.t("sessions") + ` s WHERE s.key = l.session AND ` + strings.Join(sessWhere, " AND ") + `)
	ORDER BY l.ts DESC NULLS LAST, l.session DESC, l.off DESC LIMIT $` + fmt.Sprint(len(args))
	} else {
		found = `SELECT m.* FROM (` + matches + ` OFFSET 0) m JOIN ` + db.t("sessions") + ` s ON s.key = m.session
	WHERE ` + strings.Join(sessWhere, " AND ") + `
	ORDER BY m.ts DESC NULLS LAST, m.session DESC, m.off DESC LIMIT $` + fmt.Sprint(len(args))
	}
	// The headlines are cut only for the hits returned.
	query := `
WITH q AS (SELECT websearch_to_tsquery('simple', $1) AS q),
hits AS (` + found + `)
SELECT h.off, h.seq, coalesce(h.entry_id, ''), coalesce(h.role, ''), h.ts,
	ts_headline('simple', left(h.doc, 100000), q.q, 'StartSel=«, StopSel=», MaxWords=24, MinWords=10, MaxFragments=1'),
	` + prefixed("s.", sessionColumns) + `
FROM hits h JOIN ` + db.t("sessions") + ` s ON s.key = h.session, q
ORDER BY h.ts DESC NULLS LAST, h.session DESC, h.off DESC`
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, db.redact(err)
	}
	defer rows.Close()
	var hits []Hit
	byKey := map[int64]*Session{}
	for rows.Next() {
		var h Hit
		var ts *int64
		s, err := scanSession(rows, &h.Offset, &h.Line, &h.EntryID, &h.Role, &ts, &h.Snippet)
		if err != nil {
			return nil, db.redact(err)
		}
		if ts != nil {
			h.Time = time.UnixMilli(*ts)
		}
		if prev := byKey[s.Key]; prev != nil {
			s = prev
		} else {
			byKey[s.Key] = s
		}
		h.Session = s
		hits = append(hits, h)
	}
	return hits, db.redact(rows.Err())
}

// prefixed qualifies each of a comma-separated column list.
func prefixed(p, cols string) string {
	fs := strings.Split(cols, ",")
	for i, f := range fs {
		fs[i] = p + strings.TrimSpace(f)
	}
	return strings.Join(fs, ", ")
}
