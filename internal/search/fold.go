package search

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// isTokenRune reports whether r belongs to a token, as unicode61 decides:
// letters, numbers and private-use characters, plus '_'.
func isTokenRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r) || unicode.Is(unicode.Mn, r) && r > 0x7f
}

// forTokens calls fn with the byte span and folded text of each token of s.
func forTokens(s string, fn func(start, end int, tok string)) {
	start := -1
	for i, r := range s {
		if isTokenRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			fn(start, i, fold(s[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		fn(start, len(s), fold(s[start:]))
	}
}

// fold lower-cases a token and removes its diacritics, as unicode61's
// remove_diacritics 2 does: é is e, ü is u.
func fold(tok string) string {
	ascii := true
	for i := 0; i < len(tok); i++ {
		if tok[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(tok)
	}
	// unicode61 removes the marks of Latin letters only: й stays й.
	var b strings.Builder
	latin := false
	for _, r := range norm.NFD.String(strings.ToLower(tok)) {
		if unicode.Is(unicode.Mn, r) {
			if latin {
				continue
			}
		} else {
			latin = unicode.Is(unicode.Latin, r)
		}
		b.WriteRune(r)
	}
	return norm.NFC.String(b.String())
}
