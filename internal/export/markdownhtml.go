package export

import (
	"bytes"
	"html/template"
	"net/url"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"

	"github.com/xdev/xdev/internal/gfm"
)

// What the model wrote in Markdown becomes HTML by goldmark (GitHub's
// dialect) in its safe mode, which emits no raw HTML (a tag in the text
// is dropped, leaving a comment) and no link to a javascript:, vbscript:,
// file: or data: address. Three rules of ours close what safe mode leaves
// open:
//
//   - a link goes to an http, https or mailto address or a relative one;
//     any other is shown as its text alone (markdownLinks);
//   - an image is never loaded, only linked (markdownImages, images.go);
//   - table cells align by the align attribute, not a style.
//
// The output is then what bluemonday's policy for user content lets
// through: the export tests run that sanitizer over every hostile page
// as an oracle and require it to find nothing to remove. It is not run
// here: it costs every process that links it 7 ms of package
// initialization (its CSS parser's tables), which every command paid.
// The page's Content-Security-Policy (no script, nothing fetched) stands
// behind all of it.

// maxMarkdownBytes is the longest text rendered as Markdown. Rendering
// takes several times the text; a longer one (a model's text of many MB)
// is shown as it is, escaped, which is also what a browser can show.
const maxMarkdownBytes = 1 << 20

// markdown is the converter, built on first use.
var markdown = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		// GitHub's dialect with tables aligned by attribute (internal/gfm:
		// goldmark's extensions, their expressions compiled on first use).
		goldmark.WithExtensions(gfm.Extensions...),
		goldmark.WithRendererOptions(markdownImages, markdownLinks))
})

// renderMarkdown renders Markdown the model wrote as safe HTML.
func renderMarkdown(s string) template.HTML {
	if len(s) > maxMarkdownBytes {
		return template.HTML("<pre>" + template.HTMLEscapeString(s) + "</pre>")
	}
	var b bytes.Buffer
	if err := markdown().Convert([]byte(s), &b); err != nil {
		return template.HTML("<pre>" + template.HTMLEscapeString(s) + "</pre>")
	}
	return template.HTML(b.String())
}

// markdownLink renders links and autolinks: an <a> for an address a link
// may go to (linkTarget), the text alone for any other. A link's title
// is left out: a tooltip the model wrote is not worth an attribute of
// text from the session.
type markdownLink struct{}

func (markdownLink) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindLink, func(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
		n := node.(*ast.Link)
		href, ok := linkTarget(util.URLEscape(n.Destination, true))
		if !ok {
			return ast.WalkContinue, nil
		}
		if !entering {
			w.WriteString("</a>")
			return ast.WalkContinue, nil
		}
		w.WriteString(`<a href="`)
		w.WriteString(template.HTMLEscapeString(href))
		w.WriteString(`">`)
		return ast.WalkContinue, nil
	})
	reg.Register(ast.KindAutoLink, func(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		n := node.(*ast.AutoLink)
		url := util.URLEscape(n.URL(source), false)
		if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(url), []byte("mailto:")) {
			url = append([]byte("mailto:"), url...)
		}
		label := util.EscapeHTML(n.Label(source))
		href, ok := linkTarget(url)
		if !ok {
			w.Write(label)
			return ast.WalkContinue, nil
		}
		w.WriteString(`<a href="`)
		w.WriteString(template.HTMLEscapeString(href))
		w.WriteString(`">`)
		w.Write(label)
		w.WriteString("</a>")
		return ast.WalkContinue, nil
	})
}

// markdownLinks is markdownLink as a goldmark option, before the HTML
// renderer's own (whose priority is 1000).
var markdownLinks = renderer.WithNodeRenderers(util.Prioritized(markdownLink{}, 100))

// linkTarget returns the address a link to dest (escaped) goes to, as
// net/url writes it, and whether a link may go there: a URL that parses,
// of the http, https or mailto scheme or of none (a relative address, a
// fragment) and not empty. These are the addresses bluemonday's policy
// for user content keeps, written as it writes them.
func linkTarget(dest []byte) (string, bool) {
	u, err := url.Parse(string(dest))
	if err != nil {
		return "", false
	}
	switch u.Scheme {
	case "http", "https", "mailto":
	case "":
		if u.String() == "" {
			return "", false
		}
	default:
		return "", false
	}
	return u.String(), true
}
