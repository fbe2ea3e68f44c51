package term

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Ago says how long ago t was, the way a person reads it.
func Ago(t time.Time, now time.Time) string {
	d := now.Sub(t)
	switch {
	case t.IsZero():
		return "-"
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return Plural(int(d/time.Minute), "minute") + " ago"
	case d < 24*time.Hour:
		return Plural(int(d/time.Hour), "hour") + " ago"
	case d < 30*24*time.Hour:
		return Plural(int(d/(24*time.Hour)), "day") + " ago"
	}
	return t.Local().Format("Jan 2, 2006")
}

// Plural is n units, the unit plural but for one.
func Plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// Size formats a byte count for a person.
func Size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
}

// OneLine joins the lines of s into one, its runs of white space into one
// space: a message's start, as a table or tree shows it.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Truncate cuts s to one line of at most n display columns: Fit(OneLine(s),
// n), reading only as much of s as can show. A summary of a 200 KB tool
// output needs its first words, not the width of every grapheme in it
// (show --tree measured every entry whole and spent most of its time so).
func Truncate(s string, n int) string {
	// A column takes at least a byte; perColumn bytes a column is past what
	// any text but one of zero-width characters needs.
	const perColumn = 8
	limit := perColumn * (max(n, 0) + 1)
	var b strings.Builder
	cut := false
	for i := 0; ; {
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			if !unicode.IsSpace(r) {
				break
			}
			i += size
		}
		if i >= len(s) {
			break
		}
		if b.Len() >= limit {
			cut = true
			break
		}
		j := i
		for j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if unicode.IsSpace(r) {
				break
			}
			j += size
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		word := s[i:j]
		if room := limit - b.Len(); len(word) > room {
			for room > 0 && !utf8.RuneStart(word[room]) {
				room--
			}
			b.WriteString(word[:room])
			cut = true
			break
		}
		b.WriteString(word)
		i = j
	}
	line := b.String()
	out := Fit(line, n)
	if cut && out == line && n > 0 {
		// Cut here, though what was read fits: say so.
		if DisplayWidth(out) < n {
			return out + "…"
		}
		return Fit(out+" ", n) // one column more than fits: Fit cuts it and marks the cut
	}
	return out
}

// HomePath shows a path under the home directory as ~/…, as a person
// writes it.
func HomePath(p string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		return p
	}
	if p == home {
		return "~"
	}
	if rel, ok := strings.CutPrefix(p, home+string(filepath.Separator)); ok {
		return "~" + string(filepath.Separator) + rel
	}
	return p
}
