package search

import (
	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/ext/fts5"
)

// A query of one phrase (a word, "a phrase", a prefix*) is ranked by
// termRank, bm25 without its phrase's inverse document frequency: bm25
// multiplies each hit's score by it, the same for every hit of one
// phrase, so the order is bm25's. What it spares is counting the
// phrase's matches across the whole index (FTS5's bm25 walks the
// phrase's every match for it, once a query): for a word in most
// sessions, 33 of a search page's 72 ms of CPU.
//
// A query of several phrases is ranked by bm25 itself: each phrase's
// frequency then weighs its matches against the others'.

// termRankFunc is termRank's name in SQL.
const termRankFunc = "xdev_term_rank"

// registerFTS5 registers FTS5 and termRank on a connection.
func registerFTS5(c *sqlite3.Conn) error {
	return fts5.RegisterCustom(c, func(api *fts5.API) error {
		return api.CreateFunction(termRankFunc, termRank)
	})
}

// bm25's constants, as FTS5 has them (fts5_aux.c).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// termRank is bm25 of a query of one phrase, its inverse document
// frequency left out: -f·(k1+1) / (f + k1·(1-b+b·D/avgdl)), f the
// phrase's matches in the row, D the row's tokens, avgdl the rows'
// average, as fts5Bm25Function computes them (every column weighs 1).
func termRank(fc fts5.Context, ctx sqlite3.Context, _ ...sqlite3.Value) {
	rows, err := fc.RowCount()
	if err != nil {
		ctx.ResultError(err)
		return
	}
	tokens, err := fc.ColumnTotalSize(-1)
	if err != nil {
		ctx.ResultError(err)
		return
	}
	f, err := fc.InstCount()
	if err != nil {
		ctx.ResultError(err)
		return
	}
	d, err := fc.ColumnSize(-1)
	if err != nil {
		ctx.ResultError(err)
		return
	}
	avgdl := float64(tokens) / float64(rows)
	freq := float64(f)
	ctx.ResultFloat(-(freq * (bm25K1 + 1)) / (freq + bm25K1*(1-bm25B+bm25B*float64(d)/avgdl)))
}
