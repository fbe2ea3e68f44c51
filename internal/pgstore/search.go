package pgstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/secrets"

	"github.com/xdev/xdev/internal/searchtext"
)

// Query is a search of the stored sessions.
type Query struct {
	// Text is the query in the local index's language (searchtext.Parse),
	// meaning what it means there: words (all must match), "a phrase",
	// prefix*, OR, and -word to exclude, on the same tokens (case and
	// diacritics folded, '_' in a word, each CJK character one token).
	Text      string
	Cwd       string // only sessions started in this directory
	Role      string // only entries of this role (search.RoleUser, …)
	Session   string // only the session of this id (Find names it from what a person gives)
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
	// Snippet is the text around the first match, on one line, and
	// Highlights the byte ranges in it that matched (searchtext.Cut).
	Snippet    string
	Highlights [][2]int
}

// commonMatches is how many matching entries make a query's words
// common (see Search).
const commonMatches = 500

// Search finds entries whose text matches q, newest first, through the
// lines' tsvector column and its GIN index: the server does the work,
// so a team's search scales with it, not with a laptop.
func (db *DB) Search(ctx context.Context, q Query) ([]Hit, error) {
	parsed, err := searchtext.Parse(q.Text)
	if err != nil {
		return nil, err
	}
	args := []any{tsquery(parsed)}
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
		add(&sessWhere, "s.id = $%d", q.Session)
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
	err = db.pool.QueryRow(ctx, `SELECT count(*) >= $2 FROM (SELECT 1 FROM `+db.t("lines")+` l
WHERE l.tsv @@ $1::tsquery LIMIT $2) m`, args[0], commonMatches).Scan(&common)
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
	// Snippets are cut here, by the local index's rule, from the text
	// of the hits returned.
	query := `
WITH q AS (SELECT $1::tsquery AS q),
hits AS (` + found + `)
SELECT h.off, h.seq, coalesce(h.entry_id, ''), coalesce(h.role, ''), h.ts, left(coalesce(h.doc, ''), ` + fmt.Sprint(maxTermsText) + `),
	` + prefixed("s.", sessionColumns) + `
FROM hits h JOIN ` + db.t("sessions") + ` s ON s.key = h.session
ORDER BY h.ts DESC NULLS LAST, h.session DESC, h.off DESC`
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, db.redact(err)
	}
	defer rows.Close()
	var hits []Hit
	highlights := parsed.Highlights()
	byKey := map[int64]*Session{}
	for rows.Next() {
		var h Hit
		var ts *int64
		var doc string
		s, err := scanSession(rows, &h.Offset, &h.Line, &h.EntryID, &h.Role, &ts, &doc)
		if err != nil {
			return nil, db.redact(err)
		}
		// Masked before it is cut, as a local index's hit is.
		h.Snippet, h.Highlights = searchtext.Cut(secrets.Mask(doc), highlights)
		s.Title = secrets.Mask(s.Title)
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
