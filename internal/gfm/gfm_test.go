package gfm_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/xdev/xdev/internal/gfm"
)

// goldmarks are the converter of gfm's extensions and that of goldmark's
// own, configured as xdev's was (tables aligned by attribute): the tests
// alone link goldmark's.
func goldmarks() (ours, theirs goldmark.Markdown) {
	return goldmark.New(goldmark.WithExtensions(gfm.Extensions...)),
		goldmark.New(goldmark.WithExtensions(extension.Linkify, extension.Strikethrough, extension.TaskList,
			extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute))))
}

// TestSameAsGoldmark: gfm's extensions render every text as goldmark's
// own do: the cases below, and 5,000 texts made of the pieces they parse
// (tables of every alignment with escaped pipes in code, URLs with
// trailing punctuation, parentheses and entities, e-mail addresses,
// strikethroughs of one to three tildes, task lists, nested lists),
// joined by random text.
func TestSameAsGoldmark(t *testing.T) {
	ours, theirs := goldmarks()
	same := func(src string) {
		t.Helper()
		var a, b bytes.Buffer
		errA, errB := ours.Convert([]byte(src), &a), theirs.Convert([]byte(src), &b)
		if a.String() != b.String() || (errA == nil) != (errB == nil) {
			t.Fatalf("%q:\nours:\n%s\ngoldmark's:\n%s", src, a.String(), b.String())
		}
	}
	for _, src := range []string{
		"", "plain", "| a | b |\n|---|:-:|\n| 1 | 2 |", "a | b\n--|--\n`x \\| y` | z\n",
		"| a |\n|:--|\n", "| a | b |\n| - | - |\n| 1 |\n| 1 | 2 | 3 |", "text\n| a |\n| --- |\n| b |",
		"see https://example.com/a_(b)?c=1&d=2. and www.example.org, or ftp://x.y/z!",
		"mail me@example.com. or a@b or x@y.z_", "&amp; http://a.b/c&amp; http://a.b/c&lt;x;",
		"~~gone~~ ~one~ ~~~three~~~ a~~b~~c", "- [ ] todo\n- [x] done\n- [X] Done\n  - [ ] nested\n* [] not",
		"1. [x] ordered\n2. [ ]\n", "> - [ ] quoted\n", "**https://bold.example**", "(https://paren.example)",
		"_www.under.example_", "`https://code.example`", "[link https://in.label](https://x.y)",
		"<https://angle.example>", "http://" + strings.Repeat("a", 300) + ".com", "www.a.b.c.d.com/" + strings.Repeat("x", 50),
	} {
		same(src)
	}
	r := rand.New(rand.NewPCG(7, 11))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	piece := func() string {
		switch r.IntN(9) {
		case 0:
			cols := 1 + r.IntN(4)
			var b strings.Builder
			for range cols {
				b.WriteString(pick("| h ", "|`a\\|b`", "| **x** ", "|", "| https://t.example "))
			}
			b.WriteString(pick("|\n", "\n"))
			for range cols + r.IntN(2) - r.IntN(2) {
				b.WriteString(pick("|---", "|:--", "|--:", "|:-:", "| - ", "|:", "|-|"))
			}
			b.WriteString(pick("|\n", "\n"))
			for range r.IntN(4) {
				for range 1 + r.IntN(cols+1) {
					b.WriteString(pick("| c ", "|`p\\|q`", "| ~~s~~ ", "|", "| a@b.co "))
				}
				b.WriteString("\n")
			}
			return b.String()
		case 1:
			return pick("http", "https", "ftp", "HTTP") + "://" + pick("a.b", "example.com", "x", "a.b.c:8080", "1.2.3.4") +
				pick("", "/", "/p_(q)", "/p?x=1&y=2", "#f", "/a.b,") + pick("", ".", "!", ")", "),", ";", "&amp;", "&x;", "*", "_", "~")
		case 2:
			return pick("www.", "www") + pick("ex.com", "a.b.c", "x") + pick("", "/p", "/(x)") + pick("", ".", ")")
		case 3:
			return pick("", "(", "*", "_", "~") + pick("me", "a.b", "x+y", "-", "_") + "@" + pick("ex.com", "a.b", "x", "a.b.") + pick("", ".", "-", "_", ",")
		case 4:
			return pick("~", "~~", "~~~") + pick("a", "a b", " a", "") + pick("~", "~~", "~~~")
		case 5:
			return pick("- ", "* ", "1. ", "  - ", "    - ", "> - ") + pick("[ ] ", "[x] ", "[X] ", "[]", "[ x] ", "[y] ", "") + pick("task", "", "https://t.example", "~~no~~")
		case 6:
			return "`" + pick("code", "a | b", "https://c.example", "~~") + "`"
		case 7:
			return pick("**", "_", "*", "[", "](", ")", "<", ">", "\\", "|", ":", "-", "&")
		}
		return pick("word", "two words", "é ü", "\t", "  ", "x.y", "a-b")
	}
	for range 5000 {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteString(piece())
			b.WriteString(pick(" ", "\n", "", "\n\n", " | "))
		}
		same(b.String())
	}
}

// BenchmarkRender: a page of a model's Markdown (a table, links, a task
// list) rendered by each, its expressions compiled once.
func BenchmarkRender(b *testing.B) {
	src := []byte(strings.Repeat("| a | b |\n|:--|--:|\n| https://x.example | ~~y~~ |\n\n- [x] done, see www.example.org.\n\n", 20))
	ours, theirs := goldmarks()
	for _, c := range []struct {
		name string
		md   goldmark.Markdown
	}{{"gfm", ours}, {"goldmark", theirs}} {
		b.Run(c.name, func(b *testing.B) {
			var out bytes.Buffer
			for b.Loop() {
				out.Reset()
				if err := c.md.Convert(src, &out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzSameAsGoldmark: any text renders as goldmark's own extensions
// render it.
func FuzzSameAsGoldmark(f *testing.F) {
	for _, s := range []string{"| a | b |\n|:-|-:|\n| `x\\|y` | https://z.example). |", "- [x] ~~a~~ www.b.c, d@e.fg_", "~~~a~~~"} {
		f.Add(s)
	}
	ours, theirs := goldmarks()
	f.Fuzz(func(t *testing.T, src string) {
		var a, b bytes.Buffer
		errA, errB := ours.Convert([]byte(src), &a), theirs.Convert([]byte(src), &b)
		if a.String() != b.String() || (errA == nil) != (errB == nil) {
			t.Fatalf("%q:\nours:\n%s\ngoldmark's:\n%s", src, a.String(), b.String())
		}
	})
}
