package searchtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// SnippetBytes is about how long a snippet is.
const SnippetBytes = 160

// tokenAt is one token of a text: where it is, and its folded form.
type tokenAt struct {
	start, end int
	tok        string
}

func tokensOf(text string) []tokenAt {
	var out []tokenAt
	ForTokens(text, func(start, end int, tok string) { out = append(out, tokenAt{start, end, tok}) })
	return out
}

// wordMatches reports whether tok is the k-th word of ph (or, for ph's
// prefix word, starts with it).
func wordMatches(tok string, ph Phrase, k int) bool {
	w := ph.Words[k]
	return tok == w || ph.Prefix && k == len(ph.Words)-1 && strings.HasPrefix(tok, w)
}

// Matches reports whether tok matches some word of one of the phrases: a
// highlight's check.
func Matches(tok string, phrases []Phrase) bool {
	for _, ph := range phrases {
		for k := range ph.Words {
			if wordMatches(tok, ph, k) {
				return true
			}
		}
	}
	return false
}

// phraseMarks returns, for each of toks, whether it is part of a run that
// matches one of the phrases whole: a phrase's words are marked only
// where they stand together, in order.
func phraseMarks(toks []tokenAt, phrases []Phrase) []bool {
	marks := make([]bool, len(toks))
	for i := range toks {
		for _, ph := range phrases {
			if i+len(ph.Words) > len(toks) {
				continue
			}
			ok := true
			for k := range ph.Words {
				if !wordMatches(toks[i+k].tok, ph, k) {
					ok = false
					break
				}
			}
			if ok {
				for k := range ph.Words {
					marks[i+k] = true
				}
			}
		}
	}
	return marks
}

// HasMatch reports whether text holds one of the phrases.
func HasMatch(text string, phrases []Phrase) bool {
	return firstMatch(text, phrases) >= 0
}

// firstMatch is where the first token phraseMarks would mark in text
// starts, or -1: the tokens are read only as far as it, not the whole
// text (a hit's entry may be a tool's output of megabytes, and a
// snippet of a rare word cut from it tokenized all of it, twice).
func firstMatch(text string, phrases []Phrase) int {
	longest := 0
	for _, ph := range phrases {
		longest = max(longest, len(ph.Words))
	}
	if longest == 0 {
		return -1
	}
	skip := skipTo(text, phrases)
	// The last longest tokens, by their index modulo longest.
	ring := make([]tokenAt, longest)
	n := 0     // tokens read
	best := -1 // the index of the first token of the earliest match found
	bestStart := -1
	forTokens(text[skip:], func(start, end int, tok string) bool {
		ring[n%longest] = tokenAt{skip + start, skip + end, tok}
		n++
		for _, ph := range phrases {
			l := len(ph.Words)
			first := n - l // the index of the phrase's first token, were it to end here
			if l == 0 || first < 0 || best >= 0 && first >= best {
				continue
			}
			ok := true
			for k := range l {
				if !wordMatches(ring[(first+k)%longest].tok, ph, k) {
					ok = false
					break
				}
			}
			if ok {
				best, bestStart = first, ring[first%longest].start
			}
		}
		// A match that starts before best ends within longest tokens of it.
		return best < 0 || n < best+longest
	})
	return bestStart
}

// skipTo is where in text firstMatch may begin to read tokens and still
// find the first match. A token of ASCII alone folds to its lower case,
// so one that matches a phrase's first word holds it ignoring ASCII case
// where it starts: a byte search finds the first such place, many times
// as fast as reading tokens. A token with a rune past ASCII folds by
// Unicode's rules (É is e, K is k), so each one before that place is
// read as the whole text's reading would read it, and the first of them
// that matches is where to begin. A rare word's snippet is cut from an
// entry of up to megabytes, whose tokens, all read, were most of a
// search page's time.
func skipTo(text string, phrases []Phrase) int {
	at := len(text)
	for _, ph := range phrases {
		if len(ph.Words) == 0 {
			continue
		}
		w := ph.Words[0]
		if w == "" || !isASCII(w) {
			return 0
		}
		if i := indexASCIIFold(text[:min(len(text), at+len(w)-1)], w); i >= 0 {
			at = i
		}
	}
	at = tokenStart(text, at)
	for i := 0; i < at; {
		j := indexNonASCII(text[i:at])
		if j < 0 {
			break
		}
		j += i
		// On from the rune there, past it at least (a byte that is no
		// rune's start is a rune of its own).
		if r, n := utf8.DecodeRuneInString(text[j:]); !isTokenRune(r) {
			i = j + n // a dash, a quote: no token's
			continue
		}
		from, to := tokenStart(text, j), tokenEnd(text, j)
		found := -1
		forTokens(text[from:to], func(start, _ int, tok string) bool {
			if startsPhrase(tok, phrases) {
				found = from + start
				return false
			}
			return true
		})
		if found >= 0 {
			return min(found, at)
		}
		i = to
	}
	return at
}

// startsPhrase reports whether tok matches the first word of one of the
// phrases.
func startsPhrase(tok string, phrases []Phrase) bool {
	for _, ph := range phrases {
		if len(ph.Words) > 0 && wordMatches(tok, ph, 0) {
			return true
		}
	}
	return false
}

// tokenStart is the start of the run of token runes around i (i itself
// when the rune before it is none): a place where reading tokens begins
// as the whole text's reading does.
func tokenStart(text string, i int) int {
	for i > 0 && i < len(text) && !utf8.RuneStart(text[i]) {
		i--
	}
	for i > 0 {
		r, n := utf8.DecodeLastRuneInString(text[:i])
		if !isTokenRune(r) {
			break
		}
		i -= n
	}
	return i
}

// tokenEnd is the end of the run of token runes from i, a rune's start.
func tokenEnd(text string, i int) int {
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !isTokenRune(r) {
			break
		}
		i += n
	}
	return i
}

// indexNonASCII is the index of the first byte of s past ASCII, or -1.
func indexNonASCII(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return i
		}
	}
	return -1
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// indexASCIIFold is the first index of w in s, w being lower-case ASCII
// and s matched ignoring ASCII case only, or -1.
func indexASCIIFold(s, w string) int {
	lo, up := w[0], w[0]
	if 'a' <= lo && lo <= 'z' {
		up = lo - 'a' + 'A'
	}
	// The next place of each case of w's first byte at or after from,
	// each searched for again only once from passes it (-1: none left).
	nextLo, nextUp := -2, -2
	next := func(c byte, at, from int) int {
		if at == -1 || at >= from {
			return at
		}
		if i := strings.IndexByte(s[from:], c); i >= 0 {
			return from + i
		}
		return -1
	}
	for from := 0; from+len(w) <= len(s); {
		nextLo = next(lo, nextLo, from)
		i := nextLo
		if up != lo {
			nextUp = next(up, nextUp, from)
			if nextUp >= 0 && (i < 0 || nextUp < i) {
				i = nextUp
			}
		}
		if i < 0 || i+len(w) > len(s) {
			return -1
		}
		if equalASCIIFold(s[i:i+len(w)], w) {
			return i
		}
		from = i + 1
	}
	return -1
}

// equalASCIIFold reports whether s is w (lower-case ASCII) ignoring
// ASCII case.
func equalASCIIFold(s, w string) bool {
	for i := 0; i < len(w); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

// Cut returns about SnippetBytes of text around its first match of one of
// the phrases, whitespace runs made single spaces, and the byte ranges
// of the matches in it: a phrase's words are marked where they stand
// together, in order, and nowhere else.
func Cut(text string, phrases []Phrase) (string, [][2]int) {
	first := firstMatch(text, phrases)
	from := 0
	if first > SnippetBytes/3 {
		from = first - SnippetBytes/3
		for from < first && !utf8.RuneStart(text[from]) {
			from++
		}
		// Start at a word.
		if i := strings.IndexFunc(text[from:first], unicode.IsSpace); i >= 0 {
			from += i + 1
		}
	}
	to := min(len(text), from+SnippetBytes)
	// End before a rune that would be cut, never before the start: a
	// text of continuation bytes alone has no rune start to back up to.
	for to > from && to < len(text) && !utf8.RuneStart(text[to]) {
		to--
	}
	window := text[from:to]
	// One line: whitespace runs become one space.
	var b strings.Builder
	var marks [][2]int
	space := false
	if from > 0 {
		b.WriteString("…")
	}
	lastEnd := 0
	emit := func(s string) {
		for _, r := range s {
			if unicode.IsSpace(r) {
				space = true
				continue
			}
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		}
	}
	wtoks := tokensOf(window)
	for i, marked := range phraseMarks(wtoks, phrases) {
		if !marked {
			continue
		}
		start, end := wtoks[i].start, wtoks[i].end
		emit(window[lastEnd:start])
		if space && b.Len() > 0 {
			b.WriteByte(' ')
			space = false
		}
		s := b.Len()
		b.WriteString(window[start:end])
		marks = append(marks, [2]int{s, b.Len()})
		lastEnd = end
	}
	emit(window[lastEnd:])
	if to < len(text) {
		b.WriteString("…")
	}
	return b.String(), marks
}
