package search

import (
	"strings"

	"github.com/xdev/xdev/internal/searchtext"
)

// QueryError is a query the search cannot run, and why
// (searchtext.Parse's).
type QueryError = searchtext.QueryError

// ErrQuery matches every QueryError (errors.Is).
var ErrQuery = searchtext.ErrQuery

// Roles a hit can have, as --role names them (searchtext's).
const (
	RoleUser      = searchtext.RoleUser
	RoleAssistant = searchtext.RoleAssistant
	RoleTool      = searchtext.RoleTool
	RoleSummary   = searchtext.RoleSummary
	RoleCustom    = searchtext.RoleCustom
	RoleTitle     = searchtext.RoleTitle
)

// parsed is a query as the index runs it: an FTS5 expression, and the
// phrases a snippet highlights.
type parsed struct {
	expr    string
	phrases []searchtext.Phrase
	// rank is how its matches are ranked in SQL: bm25 (FTS5's rank), or
	// for one phrase alone termRank (rank.go).
	rank string
}

// parseQuery reads q by the one query language (searchtext.Parse) and
// writes it as FTS5 runs it: every token quoted, so that nothing a
// person typed is read as FTS5 syntax.
func parseQuery(q string) (parsed, error) {
	p, err := searchtext.Parse(q)
	if err != nil {
		return parsed{}, err
	}
	var groups []string
	for _, g := range p.Groups {
		alts := make([]string, len(g))
		for i, ph := range g {
			alts[i] = ftsPhrase(ph)
		}
		s := strings.Join(alts, " OR ")
		if len(alts) > 1 {
			s = "(" + s + ")"
		}
		groups = append(groups, s)
	}
	expr := strings.Join(groups, " AND ")
	for _, n := range p.Not {
		expr = "(" + expr + ") NOT " + ftsPhrase(n)
	}
	rank := "rank"
	if len(p.Groups) == 1 && len(p.Groups[0]) == 1 && len(p.Not) == 0 {
		rank = termRankFunc + "(docs)"
	}
	return parsed{expr: expr, phrases: p.Highlights(), rank: rank}, nil
}

// ftsPhrase writes a phrase as an FTS5 string.
func ftsPhrase(ph searchtext.Phrase) string {
	s := `"` + strings.Join(ph.Words, " ") + `"`
	if ph.Prefix {
		s += "*"
	}
	return s
}
