package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/xdev/xdev/internal/pgstore"
	"github.com/xdev/xdev/internal/search"
)

// runDB searches the sessions stored in a database, on the server
// (PostgreSQL's full-text search), and prints the hits as a local
// search prints them. The server knows no branch or compaction state:
// each hit is reported on the active branch and in the context.
func (o *searchOptions) runDB(e *env, ctx context.Context, q search.Query) error {
	switch {
	case o.db.ompTable:
		return usagef("--omp-table holds each session in one value, which has no index: search synced sessions with --db alone")
	case o.from != "" || o.withOmp || o.store.explicit():
		return usagef("--db searches the database; --from, --with-omp, --data-dir and --omp choose local sessions")
	case o.thinking || o.tool != "" || o.model != "":
		return usagef("--thinking, --tool and --model search a local index; the database indexes entries' text by role")
	}
	db, err := o.db.open(e, ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	pq := pgstore.Query{Text: q.Text, Cwd: q.Cwd, Role: q.Role, Session: o.sessionArg, Since: q.Since, Until: q.Until,
		Subagents: q.Subagents, Limit: q.Limit}
	if o.sessionsOnly {
		pq.Limit = 100000
	}
	found, err := db.Search(ctx, pq)
	if errors.Is(err, search.ErrQuery) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	hits := make([]search.Hit, 0, len(found))
	for _, h := range found {
		hits = append(hits, search.Hit{Harness: "xdev", Path: h.Session.Name(), SessionID: h.Session.ID, Title: h.Session.Title,
			Cwd: h.Session.Cwd, Subagent: h.Session.Subagent, Modified: h.Session.Updated, EntryID: h.EntryID, Line: h.Line,
			Offset: h.Offset, Role: h.Role, Timestamp: h.Time, Snippet: h.Snippet, Highlights: h.Highlights,
			OnActiveBranch: true, InContext: true})
	}
	if o.sessionsOnly {
		return o.printDBSessions(e, hits, q)
	}
	return o.printHits(e, hits, q)
}

// printDBSessions prints each session with a hit once, newest hit first.
func (o *searchOptions) printDBSessions(e *env, hits []search.Hit, q search.Query) error {
	var out []sessionJSON
	at := map[string]int{}
	for _, h := range hits {
		if i, ok := at[h.Path]; ok {
			out[i].Hits++
			continue
		}
		at[h.Path] = len(out)
		out = append(out, sessionJSON{SessionID: h.SessionID, Path: h.Path, Harness: h.Harness, Title: h.Title, Cwd: h.Cwd,
			Modified: jsonTime(h.Modified), Hits: 1, Subagent: h.Subagent})
	}
	if o.asJSON {
		if out == nil {
			out = []sessionJSON{}
		}
		return writeJSON(e, out)
	}
	if e.IsTTY && len(out) == 0 {
		fmt.Fprintf(e.ErrOut, "No matches for %s.\n", strconv.Quote(q.Text))
	}
	for _, s := range out {
		fmt.Fprintln(e.Out, s.Path)
	}
	return nil
}
