package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/xdev/xdev/internal/catalog"
)

// runDB searches the sessions stored in a database, on the server
// (PostgreSQL's full-text search), and prints the hits as a local
// search prints them. The server knows no branch or compaction state:
// each hit is reported on the active branch and in the context.
func (o *searchOptions) runDB(e *env, ctx context.Context, q catalog.Query) error {
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
	limit := 0
	if o.sessionsOnly {
		limit = 100000
	}
	hits, err := db.Search(ctx, q, o.sessionArg, limit)
	if errors.Is(err, catalog.ErrQuery) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	if o.sessionsOnly {
		return o.printDBSessions(e, hits, q)
	}
	return o.printHits(e, hits, q)
}

// printDBSessions prints each session with a hit once, newest hit first.
func (o *searchOptions) printDBSessions(e *env, hits []catalog.Hit, q catalog.Query) error {
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
