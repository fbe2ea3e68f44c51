package pgstore

import (
	"strings"

	"github.com/xdev/xdev/internal/searchtext"
)

// The server's search is the local index's query language on the same
// tokens (package searchtext), not PostgreSQL's own parser, which splits
// and normalises words otherwise (paths, URLs, hyphens, '_', diacritics,
// CJK): so a query means the same thing on both. Each token of an
// entry's searchable text is stored in the column terms as a lexeme of
// the letters a-p alone ("x" and the token's bytes, a nibble a letter),
// which PostgreSQL's 'simple' configuration keeps exactly as it is; a
// query is written as a tsquery of the same lexemes: phrases with <->, a
// prefix as :*, OR as |, an excluded term as !. Encoding keeps prefixes:
// the lexeme of a prefix of a token is a prefix of the token's lexeme.

// maxTermsText bounds the text an entry is indexed by on the server (a
// tsvector holds at most 1 MB, and positions up to 16,383): its first
// 100,000 bytes, as before.
const maxTermsText = 100000

// lexeme is the server's form of a token.
func lexeme(tok string) string {
	const letters = "abcdefghijklmnop"
	b := make([]byte, 1, 1+2*len(tok))
	b[0] = 'x'
	for i := 0; i < len(tok); i++ {
		b = append(b, letters[tok[i]>>4], letters[tok[i]&15])
	}
	return string(b)
}

// terms is the terms column of an entry with searchable text: its
// tokens' lexemes, in order, space-separated.
func terms(text string) string {
	if len(text) > maxTermsText {
		text = searchtext.CapText(text[:maxTermsText])
	}
	var b strings.Builder
	searchtext.ForTokens(text, func(_, _ int, tok string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(lexeme(tok))
	})
	return b.String()
}

// tsquery writes a parsed query as a tsquery of lexemes.
func tsquery(p *searchtext.Parsed) string {
	var groups []string
	for _, g := range p.Groups {
		alts := make([]string, len(g))
		for i, ph := range g {
			alts[i] = tsPhrase(ph)
		}
		groups = append(groups, "("+strings.Join(alts, " | ")+")")
	}
	q := strings.Join(groups, " & ")
	for _, n := range p.Not {
		q += " & !" + tsPhrase(n)
	}
	return q
}

func tsPhrase(ph searchtext.Phrase) string {
	words := make([]string, len(ph.Words))
	for i, w := range ph.Words {
		words[i] = "'" + lexeme(w) + "'"
	}
	if ph.Prefix {
		words[len(words)-1] += ":*"
	}
	return "(" + strings.Join(words, " <-> ") + ")"
}
