package pick

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/xdev/xdev/internal/catalog"
)

func TestSubsequence(t *testing.T) {
	for _, tc := range []struct {
		s, w string
		want bool
	}{
		{"refactor", "rfctr", true},
		{"refactor the parser", "rfctr", true},
		{"first message of", "ref", false},
		{"refactor\x00tor", "rft", true},
		{"re\x00factor", "ref", false}, // not across fields
		{"größe prüfen", "grpr", true},
		{"größe and then prüfen", "grpr", false},
		{"größe", "grß", true},
		{"", "a", false},
		{"aaaa", "aa", true},
		{"a-b-c", "abc", true},
		{"axxxxxxxxxxxbc", "abc", false},
		{"axxxxxxxxxxxbc abc", "abc", true},
	} {
		if got := subsequence(tc.s, tc.w); got != tc.want {
			t.Errorf("subsequence(%q, %q) = %v", tc.s, tc.w, got)
		}
	}
}

func TestParseQuery(t *testing.T) {
	for _, tc := range []struct {
		in    string
		words []string
		text  string
	}{
		{"", nil, ""},
		{"  Refactor  Parser ", []string{"refactor", "parser"}, ""},
		{"/window lock", nil, "window lock"},
		{`"exact phrase" more`, nil, `"exact phrase" more`},
		{`one "quote`, []string{"one", `"quote`}, ""},
		{"/", nil, ""},
	} {
		q := ParseQuery(tc.in)
		if !equal(q.Words, tc.words) || q.Text != tc.text {
			t.Errorf("ParseQuery(%q) = %q %q", tc.in, q.Words, q.Text)
		}
	}
}

// Every way a word is matched, with capitals, ASCII or not, in every
// field, is the same as matching lower-cased copies.
func TestMatchFolds(t *testing.T) {
	texts := []string{"Refactor The Parser", "GRÖSSE größe", "日本語 Title", "/Work/Project-X", "ABC-123-def", "", "ǅungla İstanbul", "\u212Aelvin ſtop"}
	words := []string{"refactor", "the", "größe", "grösse", "title", "project-x", "abc", "rfctr", "prsr", "日本", "istanbul", "ǆ", "123-d", "zzz", "kelvin", "ſtop", "stop"}
	for _, title := range texts {
		for _, msg := range texts {
			for _, cwd := range texts {
				r := catalog.Row{Harness: catalog.Claude, Title: title, FirstMessage: msg, Cwd: cwd, ID: "7F3E-" + title}
				it := newItem(&r, "")
				for _, w := range words {
					q := Query{Words: []string{w}}
					want := noMatch
					fields := []string{strings.ToLower(title), strings.ToLower(msg), strings.ToLower(cwd), strings.ToLower(r.ID), "claude"}
					for _, f := range fields {
						if strings.Contains(f, w) {
							want = exact
						}
					}
					if want == noMatch && utf8.RuneCountInString(w) >= fuzzyLetters {
						for _, f := range fields {
							if subsequence(f, w) {
								want = fuzzy
							}
						}
					}
					if got := q.match(&it); got != want {
						t.Errorf("%q in %q / %q / %q: %d, want %d", w, title, msg, cwd, got, want)
					}
				}
			}
		}
	}
}
