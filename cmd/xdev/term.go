package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rivo/uniseg"
	"golang.org/x/sys/unix"
)

// Session content is untrusted: a message can hold "\x1b]0;PWNED\a\x1b[2J",
// which a terminal would obey (retitle the window, clear the screen, worse).
// Everything a command prints for a person goes through an escapeWriter,
// which shows control characters as escapes instead of sending them: C0
// controls other than newline and tab, DEL, C1 controls (U+0080-U+009F,
// which some terminals read as escape sequences), the bidirectional
// overrides that make text display in another order than it reads, and
// bytes that are not UTF-8. A CR right before a newline (CRLF text) is
// dropped, as the terminal would show nothing for it. JSON output and
// `show --raw` on a pipe bypass it: they are data, byte for byte.

// escapeWriter escapes control characters in what it writes to w (see
// above). A rune split across two writes is held until the next write or
// flush.
type escapeWriter struct {
	w       io.Writer
	pending []byte // an incomplete UTF-8 sequence, or a CR, from the last write
	buf     []byte
}

// escapeChunk is how much escaped text a write holds before passing it on.
const escapeChunk = 32 << 10

func (e *escapeWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(e.pending) > 0 {
		p = append(e.pending, p...)
		e.pending = nil
	}
	e.buf = e.buf[:0]
	for len(p) > 0 {
		if len(e.buf) >= escapeChunk {
			// A long write goes out a piece at a time, not escaped whole
			// first: the text of a message can be tens of MB.
			if _, err := e.w.Write(e.buf); err != nil {
				return 0, err
			}
			e.buf = e.buf[:0]
		}
		c := p[0]
		switch {
		case c == '\n' || c == '\t' || c >= 0x20 && c < 0x7f:
			e.buf = append(e.buf, c)
			p = p[1:]
			continue
		case c == '\r':
			if len(p) == 1 {
				e.pending = append(e.pending[:0], '\r')
				p = nil
				continue
			}
			if p[1] != '\n' {
				e.buf = append(e.buf, `\r`...)
			}
			p = p[1:]
			continue
		case c < 0x80:
			e.buf = fmt.Appendf(e.buf, `\x%02x`, c)
			p = p[1:]
			continue
		}
		if !utf8.FullRune(p) || c == 0xED && len(p) < 3 && (len(p) == 1 || p[1] >= 0xA0 && p[1] <= 0xBF) {
			// An unfinished character, or an unfinished lone surrogate
			// (WTF-8, below): wait for the rest.
			e.pending = append(e.pending[:0], p...)
			break
		}
		r, size := utf8.DecodeRune(p)
		switch {
		case c == 0xED && len(p) >= 3 && p[1] >= 0xA0 && p[1] <= 0xBF && p[2] >= 0x80 && p[2] <= 0xBF:
			// A lone surrogate, held as WTF-8 (see jsonx): shown as the
			// escape the file spells it with.
			e.buf = fmt.Appendf(e.buf, `\u%04x`, rune(c&0x0F)<<12|rune(p[1]&0x3F)<<6|rune(p[2]&0x3F))
			size = 3
		case r == utf8.RuneError && size == 1:
			e.buf = fmt.Appendf(e.buf, `\x%02x`, p[0])
		case escapedRune(r):
			e.buf = fmt.Appendf(e.buf, `\u%04x`, r)
		default:
			e.buf = append(e.buf, p[:size]...)
		}
		p = p[size:]
	}
	if _, err := e.w.Write(e.buf); err != nil {
		return 0, err
	}
	return n, nil
}

// flush writes what a last, incomplete write left pending.
func (e *escapeWriter) flush() error {
	if len(e.pending) == 0 {
		return nil
	}
	p := e.pending
	e.pending = nil
	var out []byte
	for _, c := range p {
		if c == '\r' {
			out = append(out, `\r`...)
		} else {
			out = fmt.Appendf(out, `\x%02x`, c)
		}
	}
	_, err := e.w.Write(out)
	return err
}

// escapedRune reports the non-ASCII runes a terminal must not receive.
func escapedRune(r rune) bool {
	return r >= 0x80 && r <= 0x9f || // C1 controls
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || // bidi embeddings, overrides, isolates
		r == 0x200e || r == 0x200f || r == 0x061c // bidi marks
}

// escapeString applies the escapeWriter's rules to s, and also shows tab
// and newline as \t and \n: for one table cell or one line of a list.
func escapeString(s string) string {
	var b strings.Builder
	w := &escapeWriter{w: &b}
	w.Write([]byte(s))
	w.flush()
	return lineBreaks.Replace(b.String())
}

// lineBreaks spells tabs and newlines out, for a value shown on one line.
var lineBreaks = strings.NewReplacer("\t", `\t`, "\n", `\n`)

// terminalWidth is the width of the terminal stdout is, from $COLUMNS when
// set (so a test or a pager can choose), else the terminal, else 100.
func terminalWidth(f *os.File) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
		return int(ws.Col)
	}
	return 100
}

// displayWidth is how many terminal columns s takes: two for most CJK
// characters and emoji, one for a whole grapheme cluster (a letter and its
// combining marks, a flag, a family emoji joined by ZWJs).
func displayWidth(s string) int { return uniseg.StringWidth(s) }

// fitWidth cuts s to at most n columns, ending in "…" when cut, never in
// the middle of a grapheme cluster or a wide character.
func fitWidth(s string, n int) string {
	if displayWidth(s) <= n {
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

// padWidth pads s with spaces to n columns.
func padWidth(s string, n int) string {
	if w := displayWidth(s); w < n {
		return s + strings.Repeat(" ", n-w)
	}
	return s
}

// homePath shows a path under the home directory as ~/…, as a person
// writes it.
func homePath(p string) string {
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
