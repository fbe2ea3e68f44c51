package searchtext

import (
	"slices"
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
	return slices.Contains(phraseMarks(tokensOf(text), phrases), true)
}

// Cut returns about SnippetBytes of text around its first match of one of
// the phrases, whitespace runs made single spaces, and the byte ranges
// of the matches in it: a phrase's words are marked where they stand
// together, in order, and nowhere else.
func Cut(text string, phrases []Phrase) (string, [][2]int) {
	first := -1
	all := tokensOf(text)
	if i := slices.Index(phraseMarks(all, phrases), true); i >= 0 {
		first = all[i].start
	}
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
