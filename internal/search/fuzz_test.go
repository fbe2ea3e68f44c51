package search

import (
	"context"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/xdev/xdev/internal/searchtext"
)

// FuzzQuery: any query either parses into an expression FTS5 runs, or is
// a QueryError; and any text gives a snippet whose highlights are matched
// tokens inside it.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{`lock timeout`, `"a b" c*`, `a OR b -c`, `-"x y"`, `Open( --flag`, `"`, `OR`, `ünï 漢字 😀`, `a* OR "b c"*`, `NEAR(a b)`, `a:b`, `{text}: x`, `^a`} {
		f.Add(s, "the lock timeout Open( ünï 漢字 😀 flag\n\tsnake_case b c")
	}
	db, err := Open(f.TempDir()+"/fuzz.db", f.TempDir(), nil)
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	f.Fuzz(func(t *testing.T, q, text string) {
		p, err := parseQuery(q)
		if err != nil {
			if !errors.Is(err, ErrQuery) {
				t.Fatalf("%q: %v is not a QueryError", q, err)
			}
			return
		}
		if _, err := db.Search(context.Background(), Query{Text: q}); err != nil {
			t.Fatalf("%q parsed as %s, but: %v", q, p.expr, err)
		}
		searchtext.OfTruncated([]byte(text)) // any prefix of a line: no panic
		s, marks := searchtext.Cut(text, p.phrases)
		if utf8.ValidString(text) && !utf8.ValidString(s) {
			t.Fatalf("snippet %q of valid text is not valid UTF-8", s)
		}
		last := 0
		for _, m := range marks {
			if m[0] < last || m[1] > len(s) || m[0] >= m[1] {
				t.Fatalf("highlight %v out of %q", m, s)
			}
			if !searchtext.Matches(searchtext.Fold(s[m[0]:m[1]]), p.phrases) {
				t.Fatalf("highlight %q is no match for %v", s[m[0]:m[1]], p.phrases)
			}
			last = m[1]
		}
	})
}
