package searchtext

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"Lock Timeout", []string{"lock", "timeout"}},
		{"Überprüfung café", []string{"uberprufung", "cafe"}},
		{"snake_case Open( --flag a/b", []string{"snake_case", "open", "flag", "a", "b"}},
		{"日本語のテスト", []string{"日", "本", "語", "の", "テ", "ス", "ト"}},
		{"abc日本def", []string{"abc", "日", "本", "def"}},
		{"한국어 문장", []string{"한", "국", "어", "문", "장"}},
		{"й ё", []string{"й", "ё"}}, // unicode61 keeps the marks of other scripts
	} {
		if got := Tokenize(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Tokenize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := SpaceCJK("a日本b"); got != "a 日  本 b" {
		t.Errorf("SpaceCJK = %q", got)
	}
}

// FuzzParse: any query either parses within the bounds or is a
// QueryError; and a snippet of any text marks only matches, inside it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`lock timeout`, `"a b" c*`, `a OR b -c`, `-"x y"`, `Open( --flag`, `"`, `OR`, `ünï 漢字 😀`,
		`a* OR "b c"*`, `NEAR(a b)`, `a:b`, `{text}: x`, `^a`, `a a a`, `a OR a -a`} {
		f.Add(s, "the lock timeout Open( ünï 漢字 😀 flag\n\tsnake_case b c")
	}
	f.Fuzz(func(t *testing.T, q, text string) {
		p, err := Parse(q)
		if err != nil {
			if !errors.Is(err, ErrQuery) {
				t.Fatalf("%q: %v is not a QueryError", q, err)
			}
			return
		}
		if len(q) > MaxQueryBytes || len(p.Groups) == 0 {
			t.Fatalf("%q parsed: %+v", q, p)
		}
		n := len(p.Not)
		for _, g := range p.Groups {
			n += len(g)
			for _, ph := range g {
				if len(ph.Words) == 0 {
					t.Fatalf("%q: an empty phrase", q)
				}
			}
		}
		if n > MaxQueryTerms*MaxQueryTerms {
			t.Fatalf("%q: %d terms", q, n)
		}
		OfTruncated([]byte(text)) // any prefix of a line: no panic
		s, marks := Cut(text, p.Highlights())
		if utf8.ValidString(text) && !utf8.ValidString(s) {
			t.Fatalf("snippet %q of valid text is not valid UTF-8", s)
		}
		last := 0
		for _, m := range marks {
			if m[0] < last || m[1] > len(s) || m[0] >= m[1] {
				t.Fatalf("highlight %v out of %q", m, s)
			}
			if !Matches(Fold(s[m[0]:m[1]]), p.Highlights()) {
				t.Fatalf("highlight %q is no match for %v", s[m[0]:m[1]], p.Highlights())
			}
			last = m[1]
		}

	})
}

// TestCutInvalidUTF8 cuts snippets out of texts that are partly or wholly
// continuation bytes, a match before, inside or after them: the window's
// ends back up to a rune start and never past each other (a text of
// continuation bytes alone once backed up to index -1).
func TestCutInvalidUTF8(t *testing.T) {
	p, err := Parse("lock")
	if err != nil {
		t.Fatal(err)
	}
	for _, junk := range []string{"\x80", "\xa4", "\xbf\x80", "\xe2\x82"} {
		for n := 0; n <= 2*SnippetBytes; n += 7 {
			bad := strings.Repeat(junk, n)
			for _, text := range []string{bad, bad + " lock", "lock " + bad, bad + " lock " + bad, "é" + bad} {
				s, marks := Cut(text, p.Highlights())
				// A stray byte shows as U+FFFD, one rune for one byte.
				if !utf8.ValidString(s) || utf8.RuneCountInString(s) > SnippetBytes+1 {
					t.Fatalf("%d×%q: snippet %q", n, junk, s)
				}
				for _, m := range marks {
					if s[m[0]:m[1]] != "lock" {
						t.Fatalf("%d×%q: mark %q", n, junk, s[m[0]:m[1]])
					}
				}
			}
		}
	}
}
