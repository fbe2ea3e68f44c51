package searchtext

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// QueryError is a query that cannot run, and why.
type QueryError struct {
	Query  string
	Reason string
}

func (e *QueryError) Error() string { return fmt.Sprintf("query %q: %s", e.Query, e.Reason) }

// ErrQuery matches every QueryError (errors.Is).
var ErrQuery = errors.New("bad query")

func (e *QueryError) Is(target error) bool { return target == ErrQuery }

// The bounds of a query: past them it is a QueryError, so that no query
// can cost more than a bounded amount of work (each term is a scan of an
// index's lists, and a snippet is matched against every term). A term
// given twice counts once, and costs nothing more.
const (
	MaxQueryBytes = 4096
	MaxQueryTerms = 64
)

// Phrase is one term of a query: its tokens, in order (one for a word,
// several for a "phrase" or a word of several tokens, such as Open( or
// a word of CJK characters), the last a prefix when Prefix.
type Phrase struct {
	Words  []string
	Prefix bool
}

// key identifies a phrase, for telling repeats.
func (p Phrase) key() string {
	k := strings.Join(p.Words, "\x00")
	if p.Prefix {
		k += "*"
	}
	return k
}

// Parsed is a query as an index runs it: every group must match (a group
// is one phrase, or several joined by OR, any of which matches), and no
// phrase of Not may. Repeats are gone: a group given twice is one group,
// a phrase given twice in a group one phrase.
type Parsed struct {
	Groups [][]Phrase
	Not    []Phrase
}

// Highlights are the phrases a snippet marks: each positive phrase once.
func (p *Parsed) Highlights() []Phrase {
	var out []Phrase
	seen := map[string]bool{}
	for _, g := range p.Groups {
		for _, ph := range g {
			if !seen[ph.key()] {
				seen[ph.key()] = true
				out = append(out, ph)
			}
		}
	}
	return out
}

// term is one element of a query as typed.
type term struct {
	Phrase
	not bool // -word
	or  bool // joined to the term before it by OR
}

// Parse reads what people type: words (all must match), "exact phrases",
// prefix*, OR between two terms, -excluded. A word's punctuation (Open(,
// --flag, a/b) splits it into tokens as the text was split, and is never
// read as an operator. What cannot run is a *QueryError: an unclosed
// quote, OR with nothing on a side, only excluded terms, a query past
// MaxQueryBytes or with more than MaxQueryTerms different terms.
func Parse(q string) (*Parsed, error) {
	var terms []term
	bad := func(format string, a ...any) (*Parsed, error) {
		return nil, &QueryError{Query: shorten(q), Reason: fmt.Sprintf(format, a...)}
	}
	if len(q) > MaxQueryBytes {
		return bad("the query is %d bytes; a query is at most %d", len(q), MaxQueryBytes)
	}
	orNext := false
	for i := 0; i < len(q); {
		r, n := utf8.DecodeRuneInString(q[i:])
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		var t term
		if q[i] == '-' && i+1 < len(q) {
			// -word and -"phrase" exclude; --flag is a word.
			if next, _ := utf8.DecodeRuneInString(q[i+1:]); next == '"' || isTokenRune(next) {
				t.not = true
				i++
			}
		}
		var raw string
		if q[i] == '"' {
			end := strings.IndexByte(q[i+1:], '"')
			if end < 0 {
				return bad("a quote at byte %d is not closed", i)
			}
			raw = q[i+1 : i+1+end]
			i += end + 2
			if i < len(q) && q[i] == '*' {
				t.Prefix = true
				i++
			}
		} else {
			j := i
			for j < len(q) {
				r, n := utf8.DecodeRuneInString(q[j:])
				if unicode.IsSpace(r) || r == '"' {
					break
				}
				j += n
			}
			raw = q[i:j]
			i = j
			if raw == "OR" && !t.not {
				if len(terms) == 0 || orNext {
					return bad("OR needs a term before it")
				}
				orNext = true
				continue
			}
			if strings.HasSuffix(raw, "*") {
				t.Prefix = true
				raw = strings.TrimRight(raw, "*")
			}
		}
		t.Words = Tokenize(raw)
		if len(t.Words) == 0 {
			if t.Prefix || t.not || orNext {
				return bad("%q has no letters or digits to search for", raw)
			}
			continue // punctuation alone matches nothing and everything
		}
		t.or = orNext
		if t.or && (t.not || terms[len(terms)-1].not) {
			return bad("OR cannot join an excluded term")
		}
		orNext = false
		terms = append(terms, t)
	}
	if orNext {
		return bad("OR needs a term after it")
	}
	p := &Parsed{}
	seenGroup, seenNot, distinct := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for k := 0; k < len(terms); {
		if terms[k].not {
			if key := terms[k].key(); !seenNot[key] {
				seenNot[key], distinct["-"+key] = true, true
				p.Not = append(p.Not, terms[k].Phrase)
			}
			k++
			continue
		}
		var g []Phrase
		inGroup := map[string]bool{}
		for ; k < len(terms) && (len(g) == 0 || terms[k].or); k++ {
			if key := terms[k].key(); !inGroup[key] {
				inGroup[key], distinct[key] = true, true
				g = append(g, terms[k].Phrase)
			}
		}
		var keys []string
		for _, ph := range g {
			keys = append(keys, ph.key())
		}
		if gk := strings.Join(keys, "\x01"); !seenGroup[gk] {
			seenGroup[gk] = true
			p.Groups = append(p.Groups, g)
		}
	}
	if len(distinct) > MaxQueryTerms {
		return bad("%d different terms; a query has at most %d", len(distinct), MaxQueryTerms)
	}
	if len(p.Groups) == 0 {
		if len(p.Not) > 0 {
			return bad("only excluded terms: say what to search for too")
		}
		return bad("nothing to search for")
	}
	return p, nil
}

// shorten cuts a long query for a message.
func shorten(q string) string {
	if len(q) <= 200 {
		return q
	}
	i := 200
	for i > 0 && !utf8.RuneStart(q[i]) {
		i--
	}
	return q[:i] + "…"
}
