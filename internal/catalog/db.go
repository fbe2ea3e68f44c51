package catalog

import (
	"context"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/pgstore"
	"github.com/xdev/xdev/internal/session"
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

// ListDB lists the sessions stored in db, newest first, as Rows by the
// rules a local file is listed by (each row's stored head and tail give
// its status, first message and fallback title): the synced sessions, or
// with table the rows of omp's SQL table of that name ("" for omp's).
func ListDB(ctx context.Context, db *pgstore.DB, table *string, opts ListOptions) ([]Row, error) {
	var out []Row
	if table != nil {
		tbl, err := db.OmpTable(*table)
		if err != nil {
			return nil, err
		}
		rows, err := tbl.Rows(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if opts.Cwd != "" && !sameDir(r.Cwd, opts.Cwd) || r.Listing.Subagent && !opts.Subagents {
				continue
			}
			row := Row{Harness: Omp, ID: r.ID, Title: r.Title, TitleSource: r.TitleSource, Cwd: r.Cwd, Path: r.Path,
				Created: r.Created, Modified: time.UnixMilli(r.MtimeMs), Size: r.Size, ParentSession: r.ParentSession, Err: r.Err}
			row.fill(r.Listing)
			out = append(out, row)
		}
		return out, nil
	}
	list, err := db.List(ctx, pgstore.ListOptions{Cwd: opts.Cwd, Subagents: opts.Subagents})
	if err != nil {
		return nil, err
	}
	for _, s := range list {
		row := Row{Harness: Xdev, ID: s.ID, Title: s.Title, TitleSource: s.TitleSource, Cwd: s.Cwd, Path: s.Name(),
			Created: s.Created, Modified: s.Updated, Size: s.Size, ParentSession: s.ParentSession, Subagent: s.Subagent}
		row.fill(s.Listing)
		out = append(out, row)
	}
	return out, nil
}

// fill fills a stored session's row with what its stored head and tail
// say, as a local file's row is filled: the last turn's status, the first
// message, and the title a listing falls back on when there is none.
func (r *Row) fill(info session.SessionInfo) {
	if info.Err != nil {
		return
	}
	r.Status, r.FirstMessage, r.ShortSummary = info.Status, info.FirstMessage, info.ShortSummary
	if strings.TrimSpace(r.Title) == "" {
		r.Title = info.ListTitle()
	}
	r.Subagent = r.Subagent || info.Subagent
}
