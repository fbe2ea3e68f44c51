package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// snippetBytes is about how long a snippet is.
const snippetBytes = 160

// snippetOf cuts the hit's snippet from its entry in the session file
// (the index keeps no text): the stretch around the first place the
// query's tokens meet, on one line, with the matched tokens' ranges.
func snippetOf(h *Hit, toks []token) (string, [][2]int) {
	var text string
	if h.Role == RoleTitle {
		text = h.Title
	} else {
		d, err := docAt(h)
		if err != nil {
			return "", nil
		}
		text = d.text
		if !hasMatch(text, toks) && d.thinking != "" {
			text = d.thinking
		}
	}
	return cutSnippet(text, toks)
}

func matches(tok string, toks []token) bool {
	for _, t := range toks {
		if tok == t.text || t.prefix && strings.HasPrefix(tok, t.text) {
			return true
		}
	}
	return false
}

func hasMatch(text string, toks []token) bool {
	found := false
	forTokens(text, func(_, _ int, tok string) {
		if !found && matches(tok, toks) {
			found = true
		}
	})
	return found
}

// cutSnippet returns about snippetBytes of text around its first match,
// whitespace runs made single spaces, and where the matches are in it.
func cutSnippet(text string, toks []token) (string, [][2]int) {
	first := -1
	forTokens(text, func(start, _ int, tok string) {
		if first < 0 && matches(tok, toks) {
			first = start
		}
	})
	from := 0
	if first > snippetBytes/3 {
		from = first - snippetBytes/3
		for from < first && !utf8.RuneStart(text[from]) {
			from++
		}
		// Start at a word.
		if i := strings.IndexFunc(text[from:first], unicode.IsSpace); i >= 0 {
			from += i + 1
		}
	}
	to := min(len(text), from+snippetBytes)
	for to < len(text) && !utf8.RuneStart(text[to]) {
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
	forTokens(window, func(start, end int, tok string) {
		if !matches(tok, toks) {
			return
		}
		emit(window[lastEnd:start])
		if space && b.Len() > 0 {
			b.WriteByte(' ')
			space = false
		}
		s := b.Len()
		b.WriteString(window[start:end])
		marks = append(marks, [2]int{s, b.Len()})
		lastEnd = end
	})
	emit(window[lastEnd:])
	if to < len(text) {
		b.WriteString("…")
	}
	return b.String(), marks
}
