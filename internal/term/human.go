package term

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
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

// Truncate cuts s to one line of at most n display columns.
func Truncate(s string, n int) string { return Fit(OneLine(s), n) }

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
