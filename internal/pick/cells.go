package pick

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/rivo/uniseg"

	"github.com/xdev/xdev/internal/term"
)

// steady is s with every character a terminal may draw at another width
// than the picker counts replaced: a cluster whose width the measures
// disagree on (term's, by grapheme; Bubble Tea's renderer's, by grapheme
// or by each rune's wcwidth, as the terminal says it draws) by its first
// rune where they agree on that, else by "?". An emoji with a skin tone
// or a ZWJ sequence counts 2 to one measure and 4 to another; a line of
// them would end past the edge in one terminal and short of it in
// another, and the frame would shear.
func steady(s string) string {
	if isASCII(s) || agree(s) && clustersAgree(s) {
		return s
	}
	// A first rune kept may join what follows into a new cluster (a
	// Hangul initial before a syllable): then "?" for every cluster the
	// measures disagree on, and failing that, for every character that
	// is not ASCII.
	for _, firstRune := range []bool{true, false} {
		if out := replaceClusters(s, firstRune); agree(out) {
			return out
		}
	}
	return strings.Map(func(r rune) rune {
		if r >= utf8.RuneSelf {
			return '?'
		}
		return r
	}, s)
}

// clustersAgree reports whether every measure agrees on each cluster of
// s.
func clustersAgree(s string) bool {
	g := uniseg.NewGraphemes(s)
	for g.Next() {
		if c := g.Str(); len(c) > 1 && !agree(c) {
			return false
		}
	}
	return true
}

// replaceClusters is s with each cluster the measures disagree on
// replaced: by its first rune where they agree on that (firstRune), else
// by "?".
func replaceClusters(s string, firstRune bool) string {
	var b strings.Builder
	g := uniseg.NewGraphemes(s)
	for g.Next() {
		c := g.Str()
		if agree(c) {
			b.WriteString(c)
			continue
		}
		r, n := utf8.DecodeRuneInString(c)
		if first := c[:n]; firstRune && r != utf8.RuneError && agree(first) {
			b.WriteString(first)
			continue
		}
		b.WriteByte('?')
	}
	return b.String()
}

// agree reports whether every measure gives cluster c the same width.
func agree(c string) bool {
	w := term.DisplayWidth(c)
	return ansi.StringWidth(c) == w && ansi.StringWidthWc(c) == w
}

func isASCII(s string) bool {
	for k := 0; k < len(s); k++ {
		if s[k] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
