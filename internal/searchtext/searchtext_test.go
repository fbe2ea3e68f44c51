package searchtext

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
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

// TestFirstMatchIsFirstMark: firstMatch, which reads tokens only as far
// as the first match, finds the token phraseMarks marks first over the
// whole text, on seeded texts of a small vocabulary (so that phrases
// overlap, repeat and nest) and phrases of one to four words, prefix or
// not, several at once.
func TestFirstMatchIsFirstMark(t *testing.T) {
	ascii := []string{"a", "ab", "abc", "b", "A", "aB", "ABC", "x", "_x", "x1", "B"}
	words := append([]string{"É", "é", "日", "本", "İ", "\u212a", "Ü", "ß", "—", "x\u0301", "\xe2\x80", "\x80", "é\xff"}, ascii...)
	rng := rand.New(rand.NewPCG(7, 42))
	seps := []string{" ", "  ", "-", "\n", ".", ""}
	for round := range 40000 {
		// Half the texts are ASCII, where firstMatch skips to the first
		// place a phrase may start (skipTo); the others have runes that
		// fold to ASCII (É, the Kelvin sign), that join a token (a
		// combining accent) or end one (a dash), and bytes that are no
		// UTF-8, before and after it.
		vocabulary := words
		if round%2 == 0 {
			vocabulary = ascii
		}
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(vocabulary[rng.IntN(len(vocabulary))])
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		text := b.String()
		all := tokensOf(text)
		var phrases []Phrase
		for range 1 + rng.IntN(3) {
			var ph Phrase
			n := 1 + rng.IntN(4)
			if i := rng.IntN(len(all) + 1); i+n <= len(all) && rng.IntN(3) > 0 {
				// A run of the text's own tokens: matches, nested in
				// and overlapping others.
				for _, tk := range all[i : i+n] {
					ph.Words = append(ph.Words, tk.tok)
				}
			} else {
				for range n {
					ph.Words = append(ph.Words, Fold(words[rng.IntN(len(words))]))
				}
			}
			if ph.Prefix = rng.IntN(3) == 0; ph.Prefix {
				last := ph.Words[len(ph.Words)-1]
				ph.Words[len(ph.Words)-1] = last[:len(last)-len(last)/2]
			}
			phrases = append(phrases, ph)
		}
		want := -1
		if i := slices.Index(phraseMarks(all, phrases), true); i >= 0 {
			want = all[i].start
		}
		if got := firstMatch(text, phrases); got != want {
			t.Fatalf("round %d: firstMatch(%q, %+v) = %d, want %d", round, text, phrases, got, want)
		}
		if HasMatch(text, phrases) != (want >= 0) {
			t.Fatalf("round %d: HasMatch(%q, %+v) = %v", round, text, phrases, want < 0)
		}
	}
}

// BenchmarkCutRareWord: a snippet of a word that first appears at the end
// of a megabyte of text, as a search hit in a tool's output cuts one: of
// ASCII, and of prose with runes past it (dashes, umlauts, Greek).
func BenchmarkCutRareWord(b *testing.B) {
	for _, bc := range []struct{ name, line string }{
		{"ascii", "Compiling module_42 (tests, 17 files) ok\n"},
		{"prose", "the store — überprüfen λ again, the run’s “last” line\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			text := strings.Repeat(bc.line, 1<<20/len(bc.line)) + "and hihepa at last"
			phrases := []Phrase{{Words: []string{"hihepa"}}}
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				Cut(text, phrases)
			}
		})
	}
}

// spaceCJKByRune is SpaceCJK a rune at a time, as it was written first.
func spaceCJKByRune(s string) string {
	var b strings.Builder
	for _, r := range s {
		if IsCJK(r) {
			b.WriteString(" " + string(r) + " ")
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestSpaceCJKAsByRune: SpaceCJK, which copies the text between CJK
// characters in one piece, spaces what a rune at a time spaces, over
// random texts of ASCII, Latin, CJK, emoji and marks (valid UTF-8, as
// decoded JSON strings are).
func TestSpaceCJKAsByRune(t *testing.T) {
	alphabet := []rune("ab _-\n\téüй→😀日本語テスト한국あ\u0301\u3000\uFF21")
	rng := rand.New(rand.NewPCG(7, 8))
	for range 5000 {
		rs := make([]rune, rng.IntN(40))
		for i := range rs {
			rs[i] = alphabet[rng.IntN(len(alphabet))]
		}
		s := string(rs)
		if got, want := SpaceCJK(s), spaceCJKByRune(s); got != want {
			t.Fatalf("SpaceCJK(%q) = %q, want %q", s, got, want)
		}
	}
}

func BenchmarkSpaceCJK(b *testing.B) {
	s := strings.Repeat("The loader reads 日本語 text and checks the café's größe → done. ", 200)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		SpaceCJK(s)
	}
}

func BenchmarkSpaceCJKByRune(b *testing.B) {
	s := strings.Repeat("The loader reads 日本語 text and checks the café's größe → done. ", 200)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		spaceCJKByRune(s)
	}
}

// TestIsCJK: IsCJK is the four scripts' tables for every code point.
func TestIsCJK(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
		if IsCJK(r) != want {
			t.Fatalf("IsCJK(%U) = %v", r, !want)
		}
	}
}
