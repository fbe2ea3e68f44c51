package catalog

import (
	"context"

	"github.com/xdev/xdev/internal/pgstore"
)

// SearchDB runs q on the sessions stored in db, on the server
// (PostgreSQL's full-text search, by the same query language), limited
// to the stored session session names when not empty, and returns the
// hits as a local search gives them. The server knows no branch or
// compaction state: each hit is reported on the active branch and in the
// context. limit is how many hits at most (q.Limit when 0).
func SearchDB(ctx context.Context, db *pgstore.DB, q Query, session string, limit int) ([]Hit, error) {
	if limit == 0 {
		limit = q.Limit
	}
	found, err := db.Search(ctx, pgstore.Query{Text: q.Text, Cwd: q.Cwd, Role: q.Role, Session: session, Since: q.Since,
		Until: q.Until, Subagents: q.Subagents, Limit: limit})
	if err != nil {
		return nil, err
	}
	hits := make([]Hit, 0, len(found))
	for _, h := range found {
		hits = append(hits, Hit{Harness: string(Xdev), Path: h.Session.Name(), SessionID: h.Session.ID, Title: h.Session.Title,
			Cwd: h.Session.Cwd, Subagent: h.Session.Subagent, Modified: h.Session.Updated, EntryID: h.EntryID, Line: h.Line,
			Offset: h.Offset, Role: h.Role, Timestamp: h.Time, Snippet: h.Snippet, Highlights: h.Highlights,
			OnActiveBranch: true, InContext: true})
	}
	return hits, nil
}
