package export

import (
	"bytes"
	"encoding/base64"
	"html/template"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// What a page shows of the images a session holds, and of those its
// Markdown names. A page (an export opened anywhere, a page of xdev
// serve) must load nothing from elsewhere: a remote image would tell
// its server who read the transcript and when, whatever the page's
// Content-Security-Policy says where one is kept. And an image that is
// not what it claims to be shows as not available, not as a broken
// picture.

// markdownImage renders a Markdown image (![alt](url)) as a link to it,
// never loaded: "[image: alt]" (the text alone where a link may not go:
// linkTarget).
type markdownImage struct{}

func (markdownImage) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindImage, func(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		n := node.(*ast.Image)
		href, link := linkTarget(util.URLEscape(n.Destination, true))
		if link {
			w.WriteString(`<a href="`)
			w.WriteString(template.HTMLEscapeString(href))
			w.WriteString(`">`)
		}
		w.WriteString(`[image: `)
		w.Write(util.EscapeHTML(altText(n, source)))
		w.WriteString(`]`)
		if link {
			w.WriteString(`</a>`)
		}
		return ast.WalkSkipChildren, nil
	})
}

// altText is the text under a node.
func altText(n ast.Node, source []byte) []byte {
	var b bytes.Buffer
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(source))
		case *ast.String:
			b.Write(c.Value)
		default:
			b.Write(altText(c, source))
		}
	}
	return b.Bytes()
}

// markdownImages is markdownImage as a goldmark option, before the
// HTML renderer's own image (whose priority is 1000).
var markdownImages = renderer.WithNodeRenderers(util.Prioritized(markdownImage{}, 100))

// imgSrc is the data: URI of an image of a known raster type whose bytes
// begin as that type's do; "" for any other, which the page shows as
// not available.
func imgSrc(img Image) template.URL {
	magic := map[string][]string{
		"image/png":  {"\x89PNG\r\n\x1a\n"},
		"image/jpeg": {"\xff\xd8\xff"},
		"image/gif":  {"GIF87a", "GIF89a"},
		"image/webp": {"RIFF"},
	}[img.MimeType]
	if magic == nil {
		return ""
	}
	for _, c := range img.Data {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			return ""
		}
	}
	head, err := base64.StdEncoding.DecodeString(img.Data[:min(len(img.Data), 16)])
	if err != nil || len(img.Data) < 16 {
		return ""
	}
	ok := false
	for _, m := range magic {
		ok = ok || bytes.HasPrefix(head, []byte(m))
	}
	if !ok || img.MimeType == "image/webp" && !bytes.Contains(head, []byte("WEBP")) {
		return ""
	}
	return template.URL("data:" + img.MimeType + ";base64," + img.Data)
}
