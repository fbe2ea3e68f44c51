package term

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/testscale"
)

// TestTableFits: a terminal table never runs past the terminal's width,
// measured in display columns, whatever the titles and directories hold
// (CJK, emoji, combining marks, escapes), and the id column is never cut.
func TestTableFits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"fix", "the", "漢字", "テスト", "😀", "👩‍💻", "e\u0301", "🇫🇷", "\x1b[2J", "long-directory-name", "ü"}
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[r.IntN(len(words))] + " ")
		}
		return b.String()
	}
	for range 300 {
		width := 40 + r.IntN(120)
		var out bytes.Buffer
		e := New(nil, &out, &bytes.Buffer{}, true, width)
		tb := &Table{IO: e, Header: []string{"ID", "TITLE", "STATUS", "DIRECTORY"}, Flex: []bool{false, true, false, true}}
		var ids []string
		for range 1 + r.IntN(5) {
			id := fmt.Sprintf("%08x", r.Uint32())
			ids = append(ids, id)
			tb.Add(id, text(r.IntN(20)), "complete", "~/"+text(r.IntN(10)))
		}
		tb.Print()
		e.Flush()
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		for _, l := range lines {
			if w := DisplayWidth(l); w > width && w > 8+columnGap+minFlexWidth+columnGap+8+columnGap+minFlexWidth {
				t.Errorf("width %d: a line of %d columns: %q", width, w, l)
			}
		}
		for i, id := range ids {
			if !strings.HasPrefix(lines[i+1], id+" ") {
				t.Errorf("row %d does not start with its whole id %s: %q", i, id, lines[i+1])
			}
		}
	}
}

// FuzzEscapeWriter: whatever bytes a session holds, and however the
// writes split them, what reaches the terminal is safe, and every byte
// that was safe to show comes out as it went in.
func FuzzEscapeWriter(f *testing.F) {
	f.Add([]byte("hi \x1b]0;PWNED\x07\x1b[2J there\r\n\u202e\xff\xc3"), uint8(3))
	f.Add([]byte("漢字😀\r"), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, split uint8) {
		var out bytes.Buffer
		w := NewEscapeWriter(&out)
		for rest := in; len(rest) > 0; {
			n := min(len(rest), int(split)+1)
			w.Write(rest[:n])
			rest = rest[n:]
		}
		w.Flush()
		if i := FirstUnsafe(out.Bytes()); i >= 0 {
			t.Fatalf("byte %d of %q is one a terminal acts on", i, out.Bytes())
		}
		var whole bytes.Buffer
		w = NewEscapeWriter(&whole)
		w.Write(in)
		w.Flush()
		if whole.String() != out.String() {
			t.Fatalf("split writes give %q, one write %q", out.String(), whole.String())
		}
		// A cell: the shortcut for plain text changes nothing.
		if got, want := Escape(string(in)), escapeAll(string(in)); got != want {
			t.Fatalf("Escape(%q) = %q, want %q", in, got, want)
		}
	})
}

// TestIsTerminal: /dev/null, a file and a pipe are no terminals, though
// /dev/null is a character device: progress written to `2>>log` with
// stdout on /dev/null would be noise in the log.
func TestIsTerminal(t *testing.T) {
	t.Setenv("XDEV_FORCE_TTY", "")
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, f := range map[string]*os.File{"/dev/null": null, "a file": file, "a pipe": w} {
		if IsTerminal(f) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
	// Progress follows stderr: with stdout on a terminal and stderr not,
	// none is written.
	var out, errb bytes.Buffer
	e := New(strings.NewReader(""), &out, &errb, true, 80)
	e.ErrIsTTY = false
	p := &Progress{IO: e, What: "working"}
	p.Update(1, 2)
	p.Update(2, 2)
	p.Done()
	if errb.Len() != 0 {
		t.Errorf("progress on a stderr that is no terminal: %q", errb.String())
	}
}

// TestTruncateReadsOnlyWhatShows: Truncate, which reads only the head of
// a text, says what Fit(OneLine(s), n) says of the whole text, on
// generated texts of ASCII, accented, CJK, emoji and combining
// characters, runs of white space of every kind, and words far longer
// than the line, for every width up to 80.
func TestTruncateReadsOnlyWhatShows(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	pieces := []string{"a", "word", "ünïcödé", "日本語", "😀", "e\u0301", " ", "  ", "\t", "\n", "\u00a0", "\u3000", "\r\n",
		strings.Repeat("x", 300), strings.Repeat("日", 200), strings.Repeat(" ", 500)}
	for range testscale.N(3000, 3000) {
		var b strings.Builder
		for range r.IntN(60) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		for n := 0; n <= 80; n += 1 + r.IntN(7) {
			if got, want := Truncate(s, n), Fit(OneLine(s), n); got != want {
				t.Fatalf("Truncate(%q, %d) = %q, Fit(OneLine(s)) = %q", s, n, got, want)
			}
		}
	}
}
