package export

import (
	"bufio"
	_ "embed"
	"html/template"
	"io"
	"strings"
	"sync"

	"github.com/xdev/xdev/internal/session"
)

// HTML writes the transcript of the session x indexes as one
// self-contained page, one entry at a time: no scripts, inline styles,
// images as data: URIs, and a Content-Security-Policy that lets the page
// load nothing else, so opening it never touches the network.
//
// What the model wrote is rendered from Markdown (goldmark, GitHub's
// dialect, in its safe mode with our rules for links and images:
// markdownhtml.go), so no markup in a session can add a script, a
// handler or a fetch. Tool
// outputs longer than a screen are collapsed; each user turn links to the
// previous and the next, and the page ends with a list of the turns. Use
// PageDefaults for a page a browser opens at once whatever the session's
// size.
func HTML(w io.Writer, x *session.Index, opts *Options) error {
	t := newTranscript(x, opts)
	bw := bufio.NewWriter(w)
	if err := pageHead().Execute(bw, t); err != nil {
		return err
	}
	var turns []turn
	err := t.each(func(it *Item) error {
		v := itemView{Item: it}
		if it.Kind == "user" {
			turns = append(turns, turn{N: len(turns) + 1, ID: it.ID, Text: firstLine(it.Text, 100)})
			v.Turn = len(turns)
		}
		return pageItem().Execute(bw, v)
	}, func() error {
		return pageOmitted().Execute(bw, t.Omitted.note())
	})
	if err != nil {
		return err
	}
	if err := pageTail().Execute(bw, turns); err != nil {
		return err
	}
	return bw.Flush()
}

// Stylesheet is the style of an exported page: inline in an export, and
// served as a file by xdev serve, whose policy allows no inline style.
//
//go:embed style.css
var Stylesheet string

// HTMLEntries writes the entries idx of x (indexes of x, in the order
// given) as an exported page shows them, without the page around them:
// for a page that shows a window of a session and asks for more (xdev
// serve). It returns how many entries it wrote; an entry a transcript
// does not show (a label, a hidden custom message) is not written.
func HTMLEntries(w io.Writer, x *session.Index, idx []int, opts *Options) (int, error) {
	t := &transcript{x: x, labels: x.Labels()}
	if opts != nil {
		t.opts = *opts
	}
	bw := bufio.NewWriter(w)
	n := 0
	err := t.pipe(func(yield func(step) bool) {
		for _, i := range idx {
			e, _ := x.Entry(i)
			if e == nil {
				continue // unreadable: the session's reader says so, a page of it shows the rest
			}
			if it, ok := t.item(e); ok && !yield(step{it: &it, size: x.LineSize(i)}) {
				return
			}
		}
	}, func(s step) error {
		n++
		return pageItem().Execute(bw, itemView{Item: s.it})
	})
	if err != nil {
		return n, err
	}
	return n, bw.Flush()
}

// itemView is an Item as the item template sees it.
type itemView struct {
	*Item
	Turn int // its number when it starts a user turn, else 0
}

// turn is one entry of the list of user turns at the end of a page.
type turn struct {
	N    int
	ID   string
	Text string
}

func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// screenLines is how many lines of tool output show before it collapses.
const screenLines = 25

// collapse reports whether an output is longer than a screen.
func collapse(s string) bool {
	return strings.Count(s, "\n") >= screenLines || len(s) > 4000
}

func classRune(r rune) rune {
	if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
		return r
	}
	return -1
}

var funcs = template.FuncMap{
	"when":       when,
	"orUntitled": orUntitled,
	"plural":     plural,
	"imgSrc":     imgSrc,
	"kindClass":  func(k string) string { return "k-" + strings.Map(classRune, k) },
	"heading":    func(it *Item) string { return it.heading() },
	"markdown":   renderMarkdown,
	"collapse":   collapse,
	"lines":      func(s string) int { return strings.Count(strings.TrimRight(s, "\n"), "\n") + 1 },
	"size":       func(n int) string { return sizeText(int64(n)) },
	"first":      firstLine,
	"add":        func(a, b int) int { return a + b },
	"stylesheet": func() template.CSS { return template.CSS(Stylesheet) },
}

var pageHead = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("head").Funcs(funcs).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{orUntitled .Title}}</title>
<style>{{stylesheet}}</style>
</head>
<body>
<header>
<h1>{{orUntitled .Title}}</h1>
<dl>
<dt>Session</dt><dd>{{.ID}}</dd>
<dt>Directory</dt><dd>{{.Cwd}}</dd>
<dt>Started</dt><dd>{{when .Created}}</dd>
<dt>Branch</dt><dd>{{plural .Entries "entry" "entries"}}{{if .Omitted.Entries}}, the newest shown{{end}} · <a href="#turns">turns</a></dd>
</dl>
</header>
<main>
`))
})

var pageOmitted = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("omitted").Funcs(funcs).Parse(`<article class="omitted" id="omitted"><p><strong>{{.}}</strong></p></article>
`))
})

var pageItem = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("item").Funcs(funcs).Parse(
		`<article id="e-{{.ID}}" class="{{kindClass .Kind}}{{if .IsError}} err{{end}}" data-kind="{{.Kind}}">
{{- if .Turn}}<a id="turn-{{.Turn}}"></a>{{end}}
{{with heading .Item}}<h2>{{.}}{{end}}{{if heading .Item}} {{if .Label}}<span class="label">{{.Label}}</span>{{end}} <small>{{when .Time}} · {{.ID}}</small>
{{- if .Turn}}<nav class="turn">turn {{.Turn}}{{if gt .Turn 1}}<a href="#turn-{{add .Turn -1}}">◀ previous</a>{{end}}<a href="#turn-{{add .Turn 1}}">next ▶</a><a href="#turns">all</a></nav>{{end}}</h2>{{end}}
{{range .Thinking}}<details><summary>Thinking</summary><div class="text">{{.}}</div></details>
{{end}}{{if .Text}}{{if or (eq .Kind "bashExecution") (eq .Kind "pythonExecution")}}<pre>{{.Text}}</pre>{{else if .MarkdownKind}}<div class="md">{{markdown .Text}}</div>{{else}}<div class="text">{{.Text}}</div>{{end}}
{{end}}{{range .Calls}}<details open><summary>→ {{.Name}}</summary><pre>{{.Args}}</pre></details>
{{end}}{{if .CutBefore}}<p class="cut">{{size .CutBefore}} cut here, before what was searched for; xdev export --full has everything.</p>
{{end}}{{if .Output}}{{if collapse .Output}}<details><summary>{{first .Output 80}} · {{lines .Output}} lines</summary><pre>{{.Output}}</pre></details>{{else}}<pre>{{.Output}}</pre>{{end}}
{{end}}{{if .Cut}}<p class="cut">{{size .Cut}} more cut here; xdev export --full has everything.</p>
{{end}}{{range .Images}}{{with imgSrc .}}<img alt="image" src="{{.}}">{{else}}<p><em>[image {{.MimeType}}: not available]</em></p>{{end}}
{{end}}</article>
`))
})

var pageTail = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("tail").Funcs(funcs).Parse(`</main>
<footer id="turns">
<h2>Turns</h2>
{{if .}}<ol>{{range .}}<li><a href="#turn-{{.N}}">{{.Text}}</a></li>{{end}}</ol>{{else}}<p>No user turns on this branch.</p>{{end}}
<a id="turn-{{len . | add 1}}"></a>
</footer>
</body>
</html>
`))
})
