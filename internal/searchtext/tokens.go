package searchtext

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// isTokenRune reports whether r belongs to a token, as unicode61 decides:
// letters, numbers and private-use characters, plus '_'.
func isTokenRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r) || unicode.Is(unicode.Mn, r) && r > 0x7f
}

// IsCJK reports whether r is written without spaces between words: Han,
// Hiragana, Katakana and Hangul. Each such character is a token of its
// own, so a word of them is found inside a longer run (日本 in 日本語 and
// in 東日本), as a person reading those scripts expects; a phrase of the
// characters keeps them in order.
func IsCJK(r rune) bool {
	if r < 0x2E80 {
		// Below the CJK radicals only Hangul's jamo are (TestIsCJK):
		// Latin, Cyrillic, arrows… answer without a table's search.
		return r >= 0x1100 && r <= 0x11FF && unicode.Is(unicode.Hangul, r)
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// SpaceCJK is s with a space around each CJK character, as an index is
// given it: FTS5's unicode61 then makes each one a token, as ForTokens
// does.
//
// The text between CJK characters is copied as it is, in one piece (a
// rune at a time, it was a tenth of a first index's CPU on text that
// mixes a few CJK words into English).
func SpaceCJK(s string) string {
	i := indexCJK(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	for ; i >= 0; i = indexCJK(s) {
		_, n := utf8.DecodeRuneInString(s[i:])
		b.WriteString(s[:i])
		b.WriteByte(' ')
		b.WriteString(s[i : i+n])
		b.WriteByte(' ')
		s = s[i+n:]
	}
	b.WriteString(s)
	return b.String()
}

// indexCJK is strings.IndexFunc(s, IsCJK), passing ASCII bytes (never
// CJK) without decoding them.
func indexCJK(s string) int {
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if IsCJK(r) {
			return i
		}
		i += n
	}
	return -1
}

// ForTokens calls fn with the byte span and folded text of each token of
// s: runs of token characters (isTokenRune), each CJK character alone,
// folded as Fold folds them.
func ForTokens(s string, fn func(start, end int, tok string)) {
	forTokens(s, func(start, end int, tok string) bool { fn(start, end, tok); return true })
}

// forTokens is ForTokens until fn returns false.
func forTokens(s string, fn func(start, end int, tok string) bool) {
	start := -1
	for i, r := range s {
		if IsCJK(r) {
			if start >= 0 {
				if !fn(start, i, Fold(s[start:i])) {
					return
				}
				start = -1
			}
			n := utf8.RuneLen(r)
			if !fn(i, i+n, Fold(s[i:i+n])) {
				return
			}
			continue
		}
		if isTokenRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			if !fn(start, i, Fold(s[start:i])) {
				return
			}
			start = -1
		}
	}
	if start >= 0 {
		fn(start, len(s), Fold(s[start:]))
	}
}

// Fold lower-cases a token and removes its diacritics, as unicode61's
// remove_diacritics 2 does: é is e, ü is u.
func Fold(tok string) string {
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

// Tokenize splits s into its tokens (see ForTokens), folded.
func Tokenize(s string) []string {
	var out []string
	ForTokens(s, func(_, _ int, tok string) { out = append(out, tok) })
	return out
}
