package term

import (
	"os"
	"strconv"
	"strings"

	"github.com/rivo/uniseg"
	"golang.org/x/sys/unix"
)

// TerminalWidth is the width of the terminal stdout is, from $COLUMNS when
// set (so a test or a pager can choose), else the terminal, else 100.
func TerminalWidth(f *os.File) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
		return int(ws.Col)
	}
	return 100
}

// DisplayWidth is how many terminal columns s takes: two for most CJK
// characters and emoji, one for a whole grapheme cluster (a letter and its
// combining marks, a flag, a family emoji joined by ZWJs).
func DisplayWidth(s string) int { return uniseg.StringWidth(s) }

// Fit cuts s to at most n columns, ending in "…" when cut, never in
// the middle of a grapheme cluster or a wide character.
func Fit(s string, n int) string {
	if DisplayWidth(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	w := 0
	g := uniseg.NewGraphemes(s)
	for g.Next() {
		cw := g.Width()
		if w+cw > n-1 {
			break
		}
		b.WriteString(g.Str())
		w += cw
	}
	return b.String() + "…"
}

// Pad pads s with spaces to n columns.
func Pad(s string, n int) string {
	if w := DisplayWidth(s); w < n {
		return s + strings.Repeat(" ", n-w)
	}
	return s
}
