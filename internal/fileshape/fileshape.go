// Package fileshape gives the shapes other writers, editors and crashes
// leave on a session file that omp still resumes: a byte order mark, CRLF
// line endings, blank and NUL-padded lines, a NUL-filled tail, a missing,
// narrow or odd title slot, a header title that is a number, v1 and v2
// headers. Tests apply each to sessions of their own and check that every
// xdev reader and writer treats the result as omp does.
//
// It depends on nothing of xdev but jsonx, so that the tests of the
// session package itself can use it.
package fileshape

import (
	"math/rand/v2"
	"strings"

	"github.com/xdev/xdev/internal/jsonx"
)

// File is a session file as its physical lines, without their newlines.
type File struct {
	Lines []string
	Torn  bool // the last line has no newline
}

// Bytes is the file's content.
func (f *File) Bytes() []byte {
	var b strings.Builder
	for i, l := range f.Lines {
		b.WriteString(l)
		if i < len(f.Lines)-1 || !f.Torn {
			b.WriteByte('\n')
		}
	}
	return []byte(b.String())
}

// Parse splits content into a File.
func Parse(content []byte) *File {
	s := string(content)
	f := &File{Torn: s != "" && !strings.HasSuffix(s, "\n")}
	s = strings.TrimSuffix(s, "\n")
	if s != "" {
		f.Lines = strings.Split(s, "\n")
	}
	return f
}

// Shape is one way a file can look.
type Shape struct {
	Name  string
	Apply func(r *rand.Rand, f *File)
}

const bom = "\ufeff"

// hasSlot reports whether line 1 is a title slot.
func (f *File) hasSlot() bool {
	if len(f.Lines) == 0 {
		return false
	}
	v, err := jsonx.Parse([]byte(strings.TrimPrefix(f.Lines[0], bom)))
	return err == nil && v.Get("type").Is("title")
}

func (f *File) dropSlot() {
	if f.hasSlot() {
		f.Lines = f.Lines[1:]
	}
}

// header returns the index of the header line, -1 when there is none.
func (f *File) header() int {
	for i, l := range f.Lines {
		v, err := jsonx.Parse([]byte(strings.TrimPrefix(l, bom)))
		if err == nil && v.Get("type").Is("session") {
			return i
		}
	}
	return -1
}

// insertAfterHeader puts line at a random place after the header.
func (f *File) insertAfterHeader(r *rand.Rand, line string) {
	h := f.header()
	if h < 0 {
		return
	}
	at := h + 1 + r.IntN(len(f.Lines)-h)
	f.Lines = append(f.Lines[:at], append([]string{line}, f.Lines[at:]...)...)
}

// editHeader applies edit to the header's JSON text.
func (f *File) editHeader(edit func(*jsonx.Editor)) {
	h := f.header()
	if h < 0 {
		return
	}
	l := strings.TrimSuffix(strings.TrimPrefix(f.Lines[h], bom), "\r")
	ed := jsonx.Edit([]byte(l))
	edit(ed)
	if b, err := ed.Bytes(); err == nil {
		f.Lines[h] = string(b)
	}
}

// Slot returns a title slot line omp accepts, padded to width bytes with
// its newline (256 is omp's; less is a narrow slot another writer made).
// title is JSON string text, escapes allowed.
func Slot(title string, width int) string {
	head := `{"type":"title","v":1,"title":"` + title + `","source":"user","updatedAt":"2026-03-01T12:00:00.000Z","pad":"`
	return head + strings.Repeat(" ", max(0, width-1-len(head)-2)) + `"}`
}

// Shapes are every shape, "plain" (none) first.
var Shapes = []Shape{
	{"plain", func(*rand.Rand, *File) {}},
	{"bom", func(_ *rand.Rand, f *File) { f.Lines[0] = bom + strings.TrimPrefix(f.Lines[0], bom) }},
	{"bom-no-slot", func(_ *rand.Rand, f *File) {
		f.dropSlot()
		f.Lines[0] = bom + strings.TrimPrefix(f.Lines[0], bom)
	}},
	{"crlf", func(_ *rand.Rand, f *File) {
		for i := range f.Lines {
			f.Lines[i] = strings.TrimSuffix(f.Lines[i], "\r") + "\r"
		}
	}},
	{"crlf-some", func(r *rand.Rand, f *File) {
		for i := range f.Lines {
			if i > 0 && r.IntN(3) == 0 {
				f.Lines[i] = strings.TrimSuffix(f.Lines[i], "\r") + "\r"
			}
		}
	}},
	{"blank-lines", func(r *rand.Rand, f *File) {
		for range 1 + r.IntN(3) {
			f.insertAfterHeader(r, []string{"", "   ", "\t", "\r"}[r.IntN(4)])
		}
	}},
	{"nul-line", func(r *rand.Rand, f *File) {
		f.insertAfterHeader(r, strings.Repeat("\x00", 1+r.IntN(64)))
	}},
	{"nul-tail", func(r *rand.Rand, f *File) {
		// What a crash on some filesystems leaves: the last block
		// zero-filled past the last complete line.
		if f.Torn {
			f.Lines = f.Lines[:len(f.Lines)-1]
		}
		f.Lines = append(f.Lines, strings.Repeat("\x00", 1+r.IntN(512)))
		f.Torn = true
	}},
	{"no-slot", func(_ *rand.Rand, f *File) { f.dropSlot() }},
	{"narrow-slot", func(_ *rand.Rand, f *File) {
		f.dropSlot()
		f.Lines = append([]string{Slot("Short", 140)}, f.Lines...)
	}},
	{"empty-title-slot", func(_ *rand.Rand, f *File) {
		f.dropSlot()
		f.Lines = append([]string{Slot("", 256)}, f.Lines...)
	}},
	{"surrogate-slot", func(_ *rand.Rand, f *File) {
		f.dropSlot()
		f.Lines = append([]string{Slot(`lone \udc00 title`, 256)}, f.Lines...)
	}},
	{"number-header-title", func(_ *rand.Rand, f *File) {
		f.dropSlot()
		f.editHeader(func(ed *jsonx.Editor) { ed.SetRaw("title", []byte("42")) })
	}},
	{"v1-header", func(_ *rand.Rand, f *File) { f.editHeader(func(ed *jsonx.Editor) { ed.Remove("version") }) }},
	{"v2-header", func(_ *rand.Rand, f *File) {
		f.editHeader(func(ed *jsonx.Editor) { ed.SetRaw("version", []byte("2")) })
	}},
}
