package pick

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// A Query is what was typed, read: words to filter the list by, or a
// full-text search of the index.
type Query struct {
	// Words filter the list (lower-cased); none keeps every row.
	Words []string
	// Text is the index's query when the query is a full-text search:
	// what follows a leading "/", or the whole of a query that holds a
	// quoted phrase.
	Text string
}

// ParseQuery reads what was typed.
func ParseQuery(s string) Query {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "/"); ok {
		return Query{Text: strings.TrimSpace(rest)}
	}
	if strings.Count(s, `"`) >= 2 {
		return Query{Text: s}
	}
	return Query{Words: strings.Fields(strings.ToLower(s))}
}

// FullText reports whether q is a search of the index.
func (q Query) FullText() bool { return q.Text != "" }

// Exact and fuzzy are the tiers of a match: every word is in the row as
// written, or some word only as a subsequence of its letters.
const (
	exact = iota
	fuzzy
	noMatch
)

// fuzzyLetters is the shortest word matched fuzzily: the letters of a
// shorter one are in almost every row.
const fuzzyLetters = 3

// match is the tier of it's match of q's words: each is looked for in
// its title, first message, directory, id and harness, whatever their
// case.
func (q Query) match(it *item) int {
	if len(q.Words) == 0 {
		return exact
	}
	low := it.lower()
	fields := [...]field{{it.title, low.title}, {it.message, low.message}, {it.cwd, low.cwd}, {it.id, low.id},
		{string(it.harness), ""}}
	tier := exact
	for _, w := range q.Words {
		if letterSet(w)&^low.letters != 0 {
			return noMatch // a letter of w is in none of the texts
		}
		if slices.ContainsFunc(fields[:], func(f field) bool { return f.contains(w) }) {
			continue
		}
		if utf8.RuneCountInString(w) < fuzzyLetters || !slices.ContainsFunc(fields[:], func(f field) bool { return f.subsequence(w) }) {
			return noMatch
		}
		tier = fuzzy
	}
	return tier
}

// A field is a text a word is looked for in, and its lower-cased form
// where it is not ASCII (lowered), else "": an ASCII text is compared a
// byte at a time, folded, so that 25,000 rows need no lower-cased copy.
type field struct{ text, low string }

// lowered is s lower-cased for a field: "" for ASCII (folded as it is
// compared), s itself where it has no capitals.
func lowered(s string) string {
	if isASCII(s) {
		return ""
	}
	return strings.ToLower(s)
}

// contains reports whether the field holds w (lower-case).
func (f field) contains(w string) bool {
	if f.low != "" || !isASCII(f.text) {
		return strings.Contains(f.low, w)
	}
	return containsFoldASCII(f.text, w)
}

// subsequence is subsequence of the field, folded.
func (f field) subsequence(w string) bool {
	if f.low != "" || !isASCII(f.text) {
		return subsequence(f.low, w)
	}
	return subsequenceFold(f.text, w, true)
}

// containsFoldASCII reports whether s, ASCII, holds w with s's capitals
// taken as small letters.
func containsFoldASCII(s, w string) bool {
	n := len(w)
	if n == 0 {
		return true
	}
outer:
	for k := 0; k+n <= len(s); k++ {
		for j := range n {
			c := s[k+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != w[j] {
				continue outer
			}
		}
		return true
	}
	return false
}

// subsequence reports whether the letters of w are in s in order, close
// together (their span at most twice w's letters and two more: "rfctr"
// is in "refactor", "ref" is not in "first message of"), and not across
// a NUL.
func subsequence(s, w string) bool { return subsequenceFold(s, w, false) }

// subsequenceFold is subsequence, with s's ASCII capitals taken as small
// letters when fold is set.
func subsequenceFold(s, w string, fold bool) bool {
	lower := func(r rune) rune {
		if fold && 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	first, n := utf8.DecodeRuneInString(w)
	limit := 2*utf8.RuneCountInString(w) + 2
	for start := 0; start < len(s); {
		r, size := utf8.DecodeRuneInString(s[start:])
		start += size
		if lower(r) != first {
			continue
		}
		rest, span := w[n:], 1
		for _, r := range s[start:] {
			if rest == "" || r == 0 || span >= limit {
				break
			}
			span++
			if c, m := utf8.DecodeRuneInString(rest); lower(r) == c {
				rest = rest[m:]
			}
		}
		if rest == "" {
			return true
		}
	}
	return false
}
