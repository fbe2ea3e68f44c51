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

// Search finds entries whose text matches q, newest first, through the
// lines' tsvector column and its GIN index: the server does the work,
// so a team's search scales with it, not with a laptop.
func (db *DB) Search(ctx context.Context, q Query) ([]Hit, error) {
	if strings.TrimSpace(q.Text) == "" {
		return nil, fmt.Errorf("empty query")
	}
	args := []any{q.Text}
	where := []string{"l.tsv @@ q.q", "s.current"}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if !q.Subagents {
		where = append(where, "NOT s.subagent")
	}
	if q.Cwd != "" {
		add("s.cwd = $%d", q.Cwd)
	}
	if q.Role != "" {
		add("l.role = $%d", q.Role)
	}
	if q.Session != "" {
		add("s.id LIKE $%d", likePrefix(q.Session))
	}
	if !q.Since.IsZero() {
		add("l.ts >= $%d", q.Since.UnixMilli())
	}
	if !q.Until.IsZero() {
		add("l.ts < $%d", q.Until.UnixMilli())
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	args = append(args, limit)
	// The matches are found and ordered first; headlines are cut only
	// for the ones returned.
	sql := `
WITH q AS (SELECT websearch_to_tsquery('simple', $1) AS q),
hits AS (
	SELECT l.session, l.off, l.seq, l.entry_id, l.role, l.ts, l.doc
	FROM ` + db.t("lines") + ` l JOIN ` + db.t("sessions") + ` s ON s.key = l.session, q
	WHERE ` + strings.Join(where, " AND ") + `
	ORDER BY l.ts DESC NULLS LAST, l.session DESC, l.off DESC
	LIMIT $` + fmt.Sprint(len(args)) + `
)
SELECT h.off, h.seq, coalesce(h.entry_id, ''), coalesce(h.role, ''), h.ts,
	ts_headline('simple', left(h.doc, 100000), q.q, 'StartSel=«, StopSel=», MaxWords=24, MinWords=10, MaxFragments=1'),
	` + prefixed("s.", sessionColumns) + `
FROM hits h JOIN ` + db.t("sessions") + ` s ON s.key = h.session, q
ORDER BY h.ts DESC NULLS LAST, h.session DESC, h.off DESC`
	rows, err := db.pool.Query(ctx, sql, args...)
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
