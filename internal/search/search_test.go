package search

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/session"
)

// TestBruteForce: for many random words and phrases, the sessions a query
// finds are those a plain scan of the decoded texts finds, with thinking
// and without.
func TestBruteForce(t *testing.T) {
	dir := writeDir(t, 60, 11)
	// A fork: its copies of the entries are found as the source's.
	infos, err := session.List(dir, nil)
	if err != nil || len(infos) == 0 {
		t.Fatal(err)
	}
	fork := filepath.Join(filepath.Dir(infos[0].Path), "fork.jsonl")
	if _, err := session.ForkSession(infos[0].Path, fork, ""); err != nil {
		t.Fatal(err)
	}
	db := openTemp(t, dir)
	refresh(t, db, RefreshOptions{})
	ct := readCorpus(t, dir, false)
	r := rand.New(rand.NewPCG(20261130, 14))
	n := 300
	if testing.Short() {
		n = 60
	}
	nonEmpty := 0
	for range n {
		phrases := ct.randomPhrases(r)
		thinking := r.IntN(2) == 0
		q := quote(phrases)
		want := ct.bruteForce(phrases, thinking)
		got := found(t, db, Query{Text: q, Thinking: thinking})
		if l := listed(t, db, Query{Text: q, Thinking: thinking}); !slices.Equal(l, got) {
			t.Errorf("query %q: Sessions lists %d, Search finds %d", q, len(l), len(got))
		}
		if !slices.Equal(got, want) {
			t.Errorf("query %q (thinking %v): found %d sessions, the scan %d\n got %.300v\nwant %.300v", q, thinking, len(got), len(want), got, want)
		}
		if len(want) > 0 {
			nonEmpty++
		}
	}
	if nonEmpty < n/3 {
		t.Errorf("only %d of %d queries found anything: the test tests little", nonEmpty, n)
	}
}

func TestParseQuery(t *testing.T) {
	for _, tc := range []struct{ in, expr, err string }{
		{in: "lock timeout", expr: `"lock" AND "timeout"`},
		{in: `"exact phrase" word`, expr: `"exact phrase" AND "word"`},
		{in: "pref*", expr: `"pref"*`},
		{in: "a OR b", expr: `("a" OR "b")`},
		{in: "x a OR b OR c y", expr: `"x" AND ("a" OR "b" OR "c") AND "y"`},
		{in: "lock -session", expr: `("lock") NOT "session"`},
		{in: "Open( --flag", expr: `"open" AND "flag"`},
		{in: "Überprüfen Café", expr: `"uberprufen" AND "cafe"`},
		{in: "snake_case", expr: `"snake_case"`},
		{in: `"a b"*`, expr: `"a b"*`},
		{in: `"unclosed`, err: "not closed"},
		{in: "OR a", err: "OR needs a term before"},
		{in: "a OR", err: "OR needs a term after"},
		{in: "-a", err: "only excluded"},
		{in: "a OR -b", err: "OR cannot join"},
		{in: "  ", err: "nothing to search"},
		{in: "-- ((", err: "nothing to search"},
		{in: "***", err: "no letters"},
	} {
		p, err := parseQuery(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrQuery) {
				t.Errorf("%q: error %v, want one saying %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case p.expr != tc.expr:
			t.Errorf("%q: expression %s, want %s", tc.in, p.expr, tc.expr)
		}
	}
}

// TestQueryOperators: OR, NOT and prefixes find what they say, on a
// data dir small enough to know by heart.
func TestQueryOperators(t *testing.T) {
	dir := t.TempDir()
	a := writeSession(t, dir, "/p/a", "alpha beta", "gamma delta")
	b := writeSession(t, dir, "/p/b", "alpha epsilon", "zeta")
	c := writeSession(t, dir, "/p/c", "theta betamax")
	db := openTemp(t, dir)
	refresh(t, db, RefreshOptions{})
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"alpha", []string{a, b}},
		{"alpha -epsilon", []string{a}},
		{"beta OR zeta", []string{a, b}},
		{"beta*", []string{a, c}},
		{`"alpha beta"`, []string{a}},
		{`"beta alpha"`, nil},
		{"alpha gamma", nil}, // two entries of one session: each hit is one entry
		{"ALPHA", []string{a, b}},
	} {
		got := found(t, db, Query{Text: tc.q})
		slices.Sort(tc.want)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: found %v, want %v", tc.q, got, tc.want)
		}
	}
}

// writeSession writes a session of user messages in project cwd.
func writeSession(t testing.TB, dataDir, cwd string, texts ...string) string {
	t.Helper()
	path, _, err := session.NewSessionPath(dataDir, cwd)
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.Create(path, session.NewOptions{Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, x := range texts {
		if _, err := s.AppendMessage(userMessage(x)); err != nil {
			t.Fatal(err)
		}
	}
	return path
}
