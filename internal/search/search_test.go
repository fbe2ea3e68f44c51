package search

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/testscale"

	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/searchtext"
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
	n := testscale.N(100, 300)
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
		// A term given twice is one; a group given twice is one group.
		{in: "lock lock LOCK", expr: `"lock"`},
		{in: "a OR b a OR b", expr: `("a" OR "b")`},
		{in: "a OR a", expr: `"a"`},
		{in: "x -y -y", expr: `("x") NOT "y"`},
		{in: strings.Repeat("pars* ", 5000), err: "at most 4096"},
		{in: strings.Repeat("word ", 800), expr: `"word"`},
		{in: manyWords(searchtext.MaxQueryTerms), expr: manyExpr(searchtext.MaxQueryTerms)},
		{in: manyWords(searchtext.MaxQueryTerms + 1), err: "at most 64"},
		// CJK characters are tokens of their own: a word of them is a
		// phrase of its characters.
		{in: "日本", expr: `"日 本"`},
		{in: "東京タワー", expr: `"東 京 タ ワ ー"`},
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

func manyWords(n int) string {
	var w []string
	for i := range n {
		w = append(w, fmt.Sprintf("w%d", i))
	}
	return strings.Join(w, " ")
}

func manyExpr(n int) string {
	var w []string
	for i := range n {
		w = append(w, fmt.Sprintf(`"w%d"`, i))
	}
	return strings.Join(w, " AND ")
}

// TestCJKAndPhrases: a word of CJK characters is found inside a longer
// run of them, wherever it stands; a snippet marks a phrase's words only
// where they stand together, and each word of a query of several.
func TestCJKAndPhrases(t *testing.T) {
	dir := t.TempDir()
	a := writeSession(t, dir, "/p/a", "日本語の文章を書く")
	b := writeSession(t, dir, "/p/b", "東日本の天気")
	c := writeSession(t, dir, "/p/c", "the lock is held; later a lock timeout happened, and the timeout was long")
	db := openTemp(t, dir)
	refresh(t, db, RefreshOptions{})
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"日本", []string{a, b}},
		{"本語", []string{a}},
		{"日本語", []string{a}},
		{"天気", []string{b}},
		{"語日", nil},
	} {
		got := found(t, db, Query{Text: tc.q})
		slices.Sort(tc.want)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: found %v, want %v", tc.q, got, tc.want)
		}
	}
	marked := func(q string) []string {
		hits, err := db.Search(context.Background(), Query{Text: q, Path: map[bool]string{true: a, false: c}[strings.ContainsFunc(q, searchtext.IsCJK)]})
		if err != nil || len(hits) != 1 {
			t.Fatalf("%q: %d hits, %v", q, len(hits), err)
		}
		var out []string
		for _, m := range hits[0].Highlights {
			out = append(out, hits[0].Snippet[m[0]:m[1]])
		}
		return out
	}
	if got := marked(`"lock timeout"`); !slices.Equal(got, []string{"lock", "timeout"}) {
		t.Errorf("a phrase marks %q, want only the two words where they stand together", got)
	}
	if got := marked("lock timeout"); len(got) != 4 {
		t.Errorf("two words mark %q, want each of their four places", got)
	}
	if got := marked("日本"); !slices.Equal(got, []string{"日", "本"}) {
		t.Errorf("a CJK word marks %q", got)
	}
}

// TestRepeatedTermsCostNothing: a query of one word given 500 times
// answers as the word once does.
func TestRepeatedTermsCostNothing(t *testing.T) {
	dir := writeDir(t, 20, 4)
	db := openTemp(t, dir)
	refresh(t, db, RefreshOptions{})
	w := corpus.Vocabulary(3)
	once := listed(t, db, Query{Text: w})
	start := time.Now()
	many := listed(t, db, Query{Text: strings.Repeat(w+" ", 500)})
	if !slices.Equal(once, many) {
		t.Errorf("%q 500 times finds %d sessions, once %d", w, len(many), len(once))
	}
	t.Logf("500 repeats: %v", time.Since(start))
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

// TestPageOfAnyWord: a page of hits ranked by relevance, for words of
// every frequency (in a few entries to in most of them, past
// RankedMatches): a full page whenever there are that many matches, each
// hit holding the word, in rank order; and for a word with at most
// RankedMatches matches, exactly the first hits of the whole ranking.
func TestPageOfAnyWord(t *testing.T) {
	dir := writeDir(t, 120, 31)
	db := openTemp(t, dir)
	refresh(t, db, RefreshOptions{})
	ctx := context.Background()
	defer func(n int) { rankedMatches = n }(rankedMatches)
	rankedMatches = 300 // past it, and within it, in a small corpus
	capped := 0
	for _, k := range []int{0, 1, 2, 3, 5, 8, 13, 30, 60, 150, 400, 1200, 3000} {
		w := corpus.Vocabulary(k)
		all, err := db.Search(ctx, Query{Text: w, Limit: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		page, err := db.Search(ctx, Query{Text: w, Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		if want := min(20, len(all)); len(page) != want {
			t.Errorf("%q: %d hits on the page, want %d (%d in all)", w, len(page), want, len(all))
		}
		for i, h := range page {
			if !strings.Contains(strings.ToLower(h.Snippet), w) {
				t.Errorf("%q: hit %d does not hold it: %q", w, i, h.Snippet)
			}
			if i > 0 && h.Rank < page[i-1].Rank {
				t.Errorf("%q: hit %d ranks before hit %d", w, i, i-1)
			}
		}
		if len(all) > rankedMatches {
			capped++
			continue
		}
		for i := range page {
			if page[i].Path != all[i].Path || page[i].EntryID != all[i].EntryID {
				t.Errorf("%q: hit %d is %s %s, the whole ranking's %s %s", w, i, page[i].Path, page[i].EntryID, all[i].Path, all[i].EntryID)
				break
			}
		}
	}
	if capped == 0 {
		t.Error("no word had more matches than rankedMatches: the test tests half of it")
	}
}
