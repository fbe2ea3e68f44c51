package term

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Session content is untrusted: a message can hold "\x1b]0;PWNED\a\x1b[2J",
// which a terminal would obey (retitle the window, clear the screen, worse).
// Everything a command prints for a person goes through an EscapeWriter,
// which shows control characters as escapes instead of sending them: C0
// controls other than newline and tab, DEL, C1 controls (U+0080-U+009F,
// which some terminals read as escape sequences), the bidirectional
// overrides that make text display in another order than it reads, and
// bytes that are not UTF-8. A CR right before a newline (CRLF text) is
// dropped, as the terminal would show nothing for it. JSON output and
// `show --raw` on a pipe bypass it: they are data, byte for byte.

// EscapeWriter escapes control characters in what it writes to its
// writer (see above). A rune split across two writes is held until the
// next write or Flush.
type EscapeWriter struct {
	w       io.Writer
	pending []byte // an incomplete UTF-8 sequence, or a CR, from the last write
	buf     []byte
}

// NewEscapeWriter returns an EscapeWriter writing to w.
func NewEscapeWriter(w io.Writer) *EscapeWriter { return &EscapeWriter{w: w} }

// escapeChunk is how much escaped text a write holds before passing it on.
const escapeChunk = 32 << 10

func (e *EscapeWriter) Write(p []byte) (int, error) {
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
		// The run of printable ASCII (with newline and tab) that most text
		// is goes over at once.
		i := 0
		for i < len(p) && i < escapeChunk && (p[i] >= 0x20 && p[i] < 0x7f || p[i] == '\n' || p[i] == '\t') {
			i++
		}
		if i > 0 {
			e.buf = append(e.buf, p[:i]...)
			p = p[i:]
			continue
		}
		c := p[0]
		switch {
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

// Flush writes what a last, incomplete write left pending.
func (e *EscapeWriter) Flush() error {
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

// FirstUnsafe returns the offset of the first byte of b that a terminal
// would act on (a control but newline and tab, DEL, a C1 control, a
// bidirectional override or mark, a byte that is not UTF-8), or -1 when
// there is none: what an EscapeWriter's output never holds.
func FirstUnsafe(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 || r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || escapedRune(r) {
			return i
		}
		i += size
	}
	return -1
}

// escapedRune reports the non-ASCII runes a terminal must not receive.
func escapedRune(r rune) bool {
	return r >= 0x80 && r <= 0x9f || // C1 controls
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || // bidi embeddings, overrides, isolates
		r == 0x200e || r == 0x200f || r == 0x061c // bidi marks
}

// Escape applies the EscapeWriter's rules to s, and also shows tab
// and newline as \t and \n: for one table cell or one line of a list.
func Escape(s string) string {
	if plain(s) {
		return s // nearly every cell: nothing to escape, nothing to copy
	}
	return escapeAll(s)
}

// escapeAll is Escape without the shortcut.
func escapeAll(s string) string {
	var b strings.Builder
	w := NewEscapeWriter(&b)
	w.Write([]byte(s))
	w.Flush()
	return lineBreaks.Replace(b.String())
}

// plain reports whether Escape leaves s as it is: printable ASCII, and
// UTF-8 characters no terminal acts on.
func plain(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		if c < 0x80 {
			return false
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || escapedRune(r) {
			return false
		}
		i += size
	}
	return true
}

// lineBreaks spells tabs and newlines out, for a value shown on one line.
var lineBreaks = strings.NewReplacer("\t", `\t`, "\n", `\n`)
