package export

import (
	"html/template"
	"io"
	"strings"
)

// HTML writes d as one self-contained page: no scripts, inline styles,
// images as data: URIs, and a Content-Security-Policy that lets the page
// load nothing else, so opening it never touches the network.
func HTML(w io.Writer, d Doc) error {
	return page.Execute(w, d)
}

// imgSrc allows a data: URI for an image of a known raster type only.
func imgSrc(img Image) template.URL {
	switch img.MimeType {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
	default:
		return ""
	}
	for _, c := range img.Data {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			return ""
		}
	}
	return template.URL("data:" + img.MimeType + ";base64," + img.Data)
}

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"when":       when,
	"orUntitled": orUntitled,
	"plural":     plural,
	"imgSrc":     imgSrc,
	"kindClass":  func(k string) string { return "k-" + strings.Map(classRune, k) },
	"heading":    func(it Item) string { return it.heading() },
}).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{orUntitled .Title}}</title>
<style>
:root { color-scheme: light dark; --fg: #1f2328; --bg: #fff; --muted: #656d76; --line: #d0d7de; --user: #ddf4ff; --tool: #f6f8fa; --err: #ffebe9; --note: #fff8c5; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #8d96a0; --line: #30363d; --user: #0c2d4a; --tool: #161b22; --err: #3c1618; --note: #3b2e00; } }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }
header { border-bottom: 1px solid var(--line); margin-bottom: 1.5rem; }
header dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; color: var(--muted); }
header dd { margin: 0; font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
article { border: 1px solid var(--line); border-radius: 8px; padding: .6rem 1rem; margin: .8rem 0; }
article h2 { font-size: 1rem; margin: 0 0 .4rem; display: flex; gap: .6rem; align-items: baseline; flex-wrap: wrap; }
article h2 small { color: var(--muted); font-weight: normal; }
.k-user { background: var(--user); }
.k-toolResult, .k-bashExecution, .k-pythonExecution { background: var(--tool); }
.err { background: var(--err); }
.k-compaction, .k-branch { background: var(--note); }
.k-model, .k-note { border: none; padding: 0 1rem; color: var(--muted); font-style: italic; }
.label { border: 1px solid var(--line); border-radius: 1rem; padding: 0 .5rem; font-size: .8rem; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; margin: .4rem 0; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
details { margin: .4rem 0; color: var(--muted); }
img { max-width: 100%; border: 1px solid var(--line); }
</style>
</head>
<body>
<header>
<h1>{{orUntitled .Title}}</h1>
<dl>
<dt>Session</dt><dd>{{.ID}}</dd>
<dt>Directory</dt><dd>{{.Cwd}}</dd>
<dt>Started</dt><dd>{{when .Created}}</dd>
<dt>Entries</dt><dd>{{plural (len .Items) "entry" "entries"}}</dd>
</dl>
</header>
<main>
{{range .Items}}<article id="e-{{.ID}}" class="{{kindClass .Kind}}{{if .IsError}} err{{end}}" data-kind="{{.Kind}}">
{{with heading .}}<h2>{{.}}{{end}}{{if heading .}} {{if .Label}}<span class="label">{{.Label}}</span>{{end}} <small>{{when .Time}} · {{.ID}}</small></h2>{{end}}
{{range .Thinking}}<details><summary>Thinking</summary><div class="text">{{.}}</div></details>
{{end}}{{if .Text}}{{if or (eq .Kind "bashExecution") (eq .Kind "pythonExecution")}}<pre>{{.Text}}</pre>{{else}}<div class="text">{{.Text}}</div>{{end}}
{{end}}{{range .Calls}}<details open><summary>→ {{.Name}}</summary><pre>{{.Args}}</pre></details>
{{end}}{{if .Output}}<pre>{{.Output}}</pre>
{{end}}{{range .Images}}{{with imgSrc .}}<img alt="image" src="{{.}}">{{else}}<p><em>[image {{.MimeType}}: not available]</em></p>{{end}}
{{end}}</article>
{{end}}</main>
</body>
</html>
`))

func classRune(r rune) rune {
	if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
		return r
	}
	return -1
}
