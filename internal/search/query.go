package search

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// QueryError is a query the search cannot run, and why.
type QueryError struct {
	Query  string
	Reason string
}

func (e *QueryError) Error() string { return fmt.Sprintf("query %q: %s", e.Query, e.Reason) }

// ErrQuery matches every QueryError (errors.Is).
var ErrQuery = errors.New("bad query")

func (e *QueryError) Is(target error) bool { return target == ErrQuery }

// term is one element of a parsed query.
type term struct {
	words  []string // its tokens: one for a word, several for a phrase
	prefix bool     // word*: the last token is a prefix
	not    bool     // -word
	or     bool     // joined to the term before it by OR
}

// parsed is a query as the index runs it: an FTS5 expression, and the
// tokens a snippet highlights.
type parsed struct {
	expr   string
	tokens []token
}

// token is a search token as the index folds it.
type token struct {
	text   string
	prefix bool
}

// parseQuery reads what people type: words (all must match), "exact
// phrases", prefix*, OR between two terms, -excluded. Every word is passed
// to FTS5 quoted, so punctuation in it (Open(, --flag, a/b) is split into
// tokens as the text was, never read as FTS5 syntax.
func parseQuery(q string) (parsed, error) {
	var terms []term
	bad := func(format string, a ...any) (parsed, error) {
		return parsed{}, &QueryError{Query: q, Reason: fmt.Sprintf(format, a...)}
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
				t.prefix = true
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
				t.prefix = true
				raw = strings.TrimRight(raw, "*")
			}
		}
		t.words = tokenize(raw)
		if len(t.words) == 0 {
			if t.prefix || t.not || orNext {
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
	var pos, neg []string
	var p parsed
	for k, t := range terms {
		s := phrase(t)
		if t.not {
			neg = append(neg, s)
			continue
		}
		for _, w := range t.words {
			p.tokens = append(p.tokens, token{text: w})
		}
		if t.prefix {
			p.tokens[len(p.tokens)-1].prefix = true
		}
		if t.or {
			pos[len(pos)-1] += " OR " + s
			continue
		}
		if k+1 < len(terms) && terms[k+1].or {
			s = "(" + s
		}
		pos = append(pos, s)
	}
	for k := range pos {
		if strings.HasPrefix(pos[k], "(") {
			pos[k] += ")"
		}
	}
	if len(pos) == 0 {
		if len(neg) > 0 {
			return bad("only excluded terms: say what to search for too")
		}
		return bad("nothing to search for")
	}
	p.expr = strings.Join(pos, " AND ")
	for _, n := range neg {
		p.expr = "(" + p.expr + ") NOT " + n
	}
	return p, nil
}

// phrase writes a term as an FTS5 string (a phrase of its tokens).
func phrase(t term) string {
	s := `"` + strings.Join(t.words, " ") + `"`
	if t.prefix {
		s += "*"
	}
	return s
}

// tokenize splits s into tokens as the index's tokenizer (FTS5's
// unicode61 with remove_diacritics 2 and '_' as a token character) does,
// folded to lower case without diacritics.
func tokenize(s string) []string {
	var out []string
	forTokens(s, func(_, _ int, tok string) { out = append(out, tok) })
	return out
}
