package export

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/microcosm-cc/bluemonday"
	"golang.org/x/net/html"
)

// oraclePolicy is bluemonday's policy for user content, the sanitizer
// pages ran through until the Markdown renderer's own rules made it
// redundant, with the three inert things the renderer emits allowed:
// safe mode's "raw HTML omitted" comments, task list checkboxes, a list
// that starts at 0, and a
// code block's language class whatever the language's name (c++, f#).
// It adds nofollow to links, which removes nothing, so that is off.
func oraclePolicy() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.RequireNoFollowOnLinks(false)
	p.AllowComments()
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").OnElements("input")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-`)).OnElements("code")
	p.AllowAttrs("start").Matching(regexp.MustCompile(`^[0-9]+$`)).OnElements("ol") // bluemonday's wants 1 or more
	return p
}

// hostileMarkdown returns Markdown made of every pairing of a way to
// write markup (raw HTML, links, autolinks, images, tables, code fences,
// task lists) with a hostile address or payload: scripts, handlers,
// styles, frames, forms, and addresses of every scheme in several cases
// and encodings.
func hostileMarkdown() []string {
	urls := []string{
		"javascript:alert(1)", "JaVaScRiPt:alert(1)", "java&#x09;script:alert(1)", "&#106;avascript:alert(1)",
		"vbscript:msgbox(1)", "data:text/html;base64,PHNjcmlwdD4=", "data:image/png;base64,iVBORw0KGgo=",
		"file:///etc/passwd", "chrome://settings", "ftp://evil.example/x", "//evil.example/x", "http://evil.example/x",
		"https://example.com/a?b=c&d=e#f", "mailto:a@example.com", "relative/path", "#frag", "/abs", "x:y", "%6Aavascript:alert(1)",
		"\"onmouseover=\"alert(1)", "a'b\"c<d>e",
	}
	forms := []func(u string) string{
		func(u string) string { return "[text](" + u + ")" },
		func(u string) string { return "[text](<" + u + "> \"ti\\\"tle\")" },
		func(u string) string { return "[text][r]\n\n[r]: " + u },
		func(u string) string { return "<" + u + ">" },
		func(u string) string { return "see " + u + " and www.example.com/" + u },
		func(u string) string { return "![alt *em*](" + u + ")" },
		func(u string) string { return "[![alt](" + u + ")](" + u + ")" },
		func(u string) string { return `<a href="` + u + `">x</a>` },
		func(u string) string { return `<img src="` + u + `" onerror="alert(1)">` },
		func(u string) string { return "| a | b |\n|:--|--:|\n| [x](" + u + ") | <b>" + u + "</b> |" },
		func(u string) string { return "- [x] done [l](" + u + ")\n- [ ] todo ~~" + u + "~~" },
		func(u string) string { return "```" + strings.Fields(u + " x")[0] + "\n" + u + "\n```" },
		func(u string) string { return "> quote <" + u + ">\n>\n> **b** `" + u + "`" },
	}
	raws := []string{
		"<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "<svg onload=alert(1)>", "<iframe src=\"http://evil\"></iframe>",
		"<style>body{display:none}</style>", "<div style=\"background:url(http://evil)\">x</div>", "<object data=x></object>",
		"<form action=http://evil><input name=q></form>", "<meta http-equiv=refresh content=0;url=http://evil>", "<base href=http://evil>",
		"<details open ontoggle=alert(1)>", "<math><mi xlink:href=\"javascript:alert(1)\">x</mi></math>", "<!-- comment --><x-y onclick=1>",
		"<table><tr><td background=javascript:alert(1)>", "<p/onmouseover=alert(1)>", "&lt;script&gt; &amp; &#60;b&#62;", "<textarea><script>",
		"*a <b>b</b> c*", "<https://example.com/<script>>", "[x](\n<javascript:alert(1)>)", "<sc<script>ript>alert(1)</script>",
	}
	var docs []string
	for _, f := range forms {
		for _, u := range urls {
			docs = append(docs, "# Title\n\nSome **bold** and `code`.\n\n"+f(u)+"\n")
		}
	}
	for _, r := range raws {
		docs = append(docs, r, "para "+r+" inline", "- item\n\n  "+r, "| a |\n|---|\n| "+r+" |")
	}
	return docs
}

// TestMarkdownNeedsNoSanitizer: bluemonday's policy (oraclePolicy), run
// over the HTML made of every hostile Markdown document, finds nothing to
// remove. The renderer's safe mode and its link rules are what keep a
// page safe; this is their oracle.
func TestMarkdownNeedsNoSanitizer(t *testing.T) {
	p := oraclePolicy()
	docs := hostileMarkdown()
	for _, doc := range docs {
		checkNeedsNoSanitizer(t, p, doc)
	}
	t.Logf("%d hostile documents", len(docs))
}

// FuzzMarkdownNeedsNoSanitizer is TestMarkdownNeedsNoSanitizer's check
// on any text.
func FuzzMarkdownNeedsNoSanitizer(f *testing.F) {
	for _, doc := range hostileMarkdown() {
		f.Add(doc)
	}
	p := oraclePolicy()
	f.Fuzz(func(t *testing.T, doc string) { checkNeedsNoSanitizer(t, p, doc) })
}

func checkNeedsNoSanitizer(t *testing.T, p *bluemonday.Policy, doc string) {
	t.Helper()
	got := string(renderMarkdown(doc))
	clean := p.Sanitize(got)
	if a, b := htmlTokens(got), htmlTokens(clean); !slices.Equal(a, b) {
		i := 0
		for i < min(len(a), len(b)) && a[i] == b[i] {
			i++
		}
		t.Errorf("bluemonday changes the HTML of %q\nrendered  %s\nsanitized %s\nfirst difference at token %d: %q vs %q",
			doc, got, clean, i, at(a, i), at(b, i))
	}
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(end)"
}

// htmlTokens is HTML as a browser's tokenizer reads it: tags with their
// attributes sorted, text and attribute values unescaped, text runs
// joined, so that two serializations of the same markup are equal.
func htmlTokens(s string) []string {
	z := html.NewTokenizer(strings.NewReader(s))
	var out []string
	text := ""
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		tok := z.Token()
		if tt == html.TextToken {
			text += tok.Data
			continue
		}
		if text != "" {
			out = append(out, "text:"+text)
			text = ""
		}
		attrs := make([]string, len(tok.Attr))
		for i, a := range tok.Attr {
			attrs[i] = fmt.Sprintf("%s=%q", a.Key, a.Val)
		}
		slices.Sort(attrs)
		kind := map[html.TokenType]string{html.StartTagToken: "<", html.EndTagToken: "</", html.SelfClosingTagToken: "<", html.CommentToken: "<!--", html.DoctypeToken: "<!"}[tt]
		out = append(out, kind+tok.Data+" "+strings.Join(attrs, " "))
	}
	if text != "" {
		out = append(out, "text:"+text)
	}
	return out
}
