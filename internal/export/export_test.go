package export

import (
	"bytes"
	"encoding/base64"
	"errors"
	"html"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	chromiumpkg "github.com/xdev/xdev/internal/chromium"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/session"
)

// corpus returns omp's sample sessions, copied with their blob store.
func sampleSessions(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../session/testdata/omp")); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "sessions", "*", "*.jsonl"))
	if len(files) < 8 {
		t.Fatalf("corpus: %v", files)
	}
	return files
}

func index(t *testing.T, path string) *session.Index {
	t.Helper()
	x, err := session.OpenIndex(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

// items lists what an export of x shows.
func items(t *testing.T, x *session.Index, opts *Options) []Item {
	t.Helper()
	var out []Item
	if err := newTranscript(x, opts).each(func(it *Item) error { out = append(out, *it); return nil }, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMarkdownHasEveryEntry(t *testing.T) {
	for _, f := range sampleSessions(t) {
		x := index(t, f)
		var b bytes.Buffer
		if err := Markdown(&b, x, nil); err != nil {
			t.Fatal(err)
		}
		for _, it := range items(t, x, nil) {
			if it.heading() != "" && !strings.Contains(b.String(), it.ID) {
				t.Errorf("%s: entry %s (%s) missing from the Markdown", filepath.Base(f), it.ID, it.Kind)
			}
		}
	}
}

func TestFence(t *testing.T) {
	for in, want := range map[string]string{"": "```", "a ``` b": "````", "`````": "``````"} {
		if got := fence(in); got != want {
			t.Errorf("fence(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEscapeMarkdown: what a person typed reads as typed once a Markdown
// renderer (goldmark, with GitHub's extensions, as viewers render) has
// made HTML of it: for generated strings full of Markdown and HTML syntax,
// the rendered text equals the input, line breaks and all, and no markup
// but paragraphs and line breaks appears. Before, "<in>" vanished.
func TestEscapeMarkdown(t *testing.T) {
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	pieces := []string{"<in>", "<b>bold</b>", "<script>x</script>", "&amp;", "&lt;", "*em*", "**strong**", "_u_", "`code`",
		"[link](http://x)", "![img](y.png)", "# heading", "- item", "+ item", "1. one", "2) two", "> quote", "| a | b |",
		"---", "===", "~~del~~", "\\", "\\*", "    indented", "\ttab", "word", "漢字", "😀", "http://example.com", "a_b_c",
		"<!-- c -->", "[^1]", "\n", "\n\n", " ", "=", "-", "#", "10.", "x|y", "{x}", "$x$"}
	r := rand.New(rand.NewPCG(4, 2))
	for range 2000 {
		var b strings.Builder
		for range 1 + r.IntN(8) {
			b.WriteString(pieces[r.IntN(len(pieces))])
			if r.IntN(3) == 0 {
				b.WriteString(" ")
			}
		}
		checkEscapedMarkdown(t, md, b.String())
	}
}

// FuzzEscapeMarkdown is TestEscapeMarkdown's check on any text.
func FuzzEscapeMarkdown(f *testing.F) {
	f.Add("<in> *em* [x](y) 1. item\n# h")
	f.Add("\\\n  \t`code`")
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	f.Fuzz(func(t *testing.T, in string) {
		if !utf8.ValidString(in) || strings.ContainsAny(in, "\x00\r") {
			return // a renderer replaces these; not what is checked here
		}
		checkEscapedMarkdown(t, md, in)
	})
}

var tags = regexp.MustCompile(`<[^>]*>`)

// checkEscapedMarkdown renders escapeMarkdown(in) and checks that it
// reads as in: no markup but paragraphs, line breaks and the links GFM
// makes of bare URLs, and the same text.
func checkEscapedMarkdown(t *testing.T, md goldmark.Markdown, in string) {
	t.Helper()
	var out bytes.Buffer
	if err := md.Convert([]byte(escapeMarkdown(in)), &out); err != nil {
		t.Fatal(err)
	}
	rendered := out.String()
	for _, tag := range tags.FindAllString(rendered, -1) {
		// GitHub's dialect links bare URLs: the text stays as typed.
		link := strings.HasPrefix(tag, `<a href="`) || tag == "</a>"
		if tag != "<p>" && tag != "</p>" && tag != "<br>" && tag != "<br />" && !link {
			t.Errorf("%q renders markup %s: %s", in, tag, rendered)
			break
		}
	}
	text := html.UnescapeString(strings.ReplaceAll(tags.ReplaceAllStringFunc(rendered, func(tag string) string {
		if strings.HasPrefix(tag, "<br") || tag == "</p>" {
			return "\n"
		}
		return ""
	}), "\n\n", "\n"))
	if norm(text) != norm(in) {
		t.Errorf("%q\nescaped  %q\nrendered %q\nreads    %q", in, escapeMarkdown(in), rendered, text)
	}
}

// norm compares text as a reader sees it: runs of white space are one.
func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestHTMLSanitizesMarkdown: Markdown the model wrote is rendered, and
// nothing in it can add a script, an event handler, a javascript: link, a
// style or a frame to the page.
func TestHTMLSanitizesMarkdown(t *testing.T) {
	hostile := []string{
		"<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "[x](javascript:alert(1))", "<a href=\"javascript:alert(1)\">x</a>",
		"<iframe src=\"http://evil\"></iframe>", "<style>body{display:none}</style>", "<svg onload=alert(1)>", "![x](http://evil/t.png)",
		"<div style=\"background:url(http://evil)\">x</div>", "<object data=x></object>", "<form action=http://evil><input></form>",
		"[x](data:text/html;base64,PHNjcmlwdD4=)", "<meta http-equiv=refresh content=0;url=http://evil>", "<base href=http://evil>",
	}
	for _, h := range hostile {
		got := string(renderMarkdown("Some **bold** text and `code`.\n\n" + h + "\n\n| a | b |\n|---|---|\n| 1 | 2 |"))
		low := strings.ToLower(got)
		for _, bad := range []string{"<script", "onerror", "onload", "javascript:", "<iframe", "<style", "style=", "<object", "<form", "<meta", "<base", "data:text"} {
			if strings.Contains(low, bad) {
				t.Errorf("%q renders %q: %s", h, bad, got)
			}
		}
		if !strings.Contains(got, "<strong>bold</strong>") || !strings.Contains(got, "<table>") {
			t.Errorf("Markdown not rendered: %s", got)
		}
	}
}

// chromium returns Debian's chromium (internal/chromium.Find).
func chromium(t *testing.T) string { return chromiumpkg.Find(t) }

// chromiumAttempts is how many times a page is loaded when Chromium itself
// dies of a signal. Debian's headless Chromium 148 segfaults at start about
// once in 250 launches on a busy 2-core machine, before it has read the
// page (it prints nothing); that is the browser's fault, not the page's, so
// it gets another try. A page that crashes it every time still fails.
const chromiumAttempts = 3

// renderInChromium loads page in headless Chromium and returns the DOM it
// built and what it logged.
func renderInChromium(t *testing.T, bin, page string) (dom, log string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	for attempt := 1; ; attempt++ {
		cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0",
			"--virtual-time-budget=2000", "--dump-dom", "file://"+page)
		stdout.Reset()
		stderr.Reset()
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err == nil {
			break
		}
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ProcessState.Sys().(syscall.WaitStatus).Signaled() && attempt < chromiumAttempts {
			t.Logf("chromium on %s: %v (attempt %d of %d); trying again", page, err, attempt, chromiumAttempts)
			continue
		}
		t.Fatalf("chromium on %s: %v\n%s", page, err, stderr.Bytes())
	}
	if !strings.Contains(stdout.String(), "<main>") {
		t.Fatalf("%s: no DOM:\n%s", page, stderr.Bytes())
	}
	return stdout.String(), stderr.String()
}

// checkQuiet fails on anything Chromium logged from the page: its CSP
// would log any attempted fetch, and a script would have nothing to run.
func checkQuiet(t *testing.T, page, log string) {
	t.Helper()
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "CONSOLE") || strings.Contains(line, "Refused to") {
			t.Errorf("%s: console: %s", page, line)
		}
	}
}

// TestHTMLInChromium renders every exported page in headless Chromium: it
// loads, every entry is in the DOM, images render from data: URIs, turn
// links resolve, and the console stays silent.
func TestHTMLInChromium(t *testing.T) {
	bin := chromium(t)
	out := t.TempDir()
	for _, f := range sampleSessions(t) {
		x := index(t, f)
		page := filepath.Join(out, strings.TrimSuffix(filepath.Base(f), ".jsonl")+".html")
		var b bytes.Buffer
		if err := HTML(&b, x, &PageDefaults); err != nil {
			t.Fatal(err)
		}
		if regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).Match(b.Bytes()) {
			t.Errorf("%s: the page links to the network", page)
		}
		os.WriteFile(page, b.Bytes(), 0o600)
		dom, log := renderInChromium(t, bin, page)
		its := items(t, x, &PageDefaults)
		want := 0
		for _, it := range its {
			if !strings.Contains(dom, `id="e-`+it.ID+`"`) {
				t.Errorf("%s: entry %s (%s) is not in the rendered page", page, it.ID, it.Kind)
			}
			for _, img := range it.Images {
				if imgSrc(img) != "" {
					want++
				}
			}
		}
		if got := strings.Count(dom, `<img alt="image" src="data:`); got != want {
			t.Errorf("%s: %d images rendered, want %d", page, got, want)
		}
		for _, m := range regexp.MustCompile(`href="#([^"]+)"`).FindAllStringSubmatch(dom, -1) {
			if !strings.Contains(dom, `id="`+m[1]+`"`) {
				t.Errorf("%s: a link to #%s, which is not in the page", page, m[1])
			}
		}
		checkQuiet(t, page, log)
	}
}

// TestHTMLHostileInChromium: a session whose assistant writes hostile
// Markdown and HTML renders in Chromium with no script element, no event
// handler, no javascript: link, and nothing logged.
func TestHTMLHostileInChromium(t *testing.T) {
	bin := chromium(t)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s, err := session.Create(path, session.NewOptions{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("<script>alert('user')</script> <in> & \"quotes\""), Timestamp: 1})
	s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.BlockContent(ai.Text(
		"# Answer\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n[click](javascript:alert(3))\n\n<iframe src=\"https://evil\"></iframe>\n\n```go\nfmt.Println(\"hi\")\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")),
		StopReason: ai.StopEnd, Timestamp: 2})
	s.AppendMessage(ai.Message{Role: ai.RoleToolResult, ToolCallID: "c", ToolName: "bash", Content: ai.BlockContent(ai.Text(strings.Repeat("output line\n", 200))), Timestamp: 3})
	s.Close()
	var b bytes.Buffer
	if err := HTML(&b, index(t, path), &PageDefaults); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "p.html")
	os.WriteFile(page, b.Bytes(), 0o600)
	dom, log := renderInChromium(t, bin, page)
	low := strings.ToLower(dom)
	for _, bad := range []string{"<script", "onerror=", "javascript:", "<iframe"} {
		if strings.Contains(low, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	for _, want := range []string{"<h1>Answer</h1>", "<table>", "&lt;in&gt;", "<details><summary>output line · 200 lines</summary>"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	checkQuiet(t, page, log)
}

// TestHTMLBigSessionPage: the default page of a large session stays one a
// browser opens at once: its size is bounded by the budget whatever the
// session's, the newest entries and every compaction are in it, and it
// says what was left out. Chromium renders it.
func TestHTMLBigSessionPage(t *testing.T) {
	path, err := corpus.CachedFile(corpus.Options{Size: 24 << 20, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	x := index(t, path)
	var b bytes.Buffer
	if err := HTML(&b, x, &PageDefaults); err != nil {
		t.Fatal(err)
	}
	if max := PageDefaults.Budget * 3 / 2; int64(b.Len()) > max {
		t.Errorf("the page is %d bytes for a budget of %d", b.Len(), PageDefaults.Budget)
	}
	branch := x.PathTo(x.Leaf())
	page := b.String()
	if !strings.Contains(page, `id="e-`+x.ID(branch[len(branch)-1])+`"`) {
		t.Error("the leaf is not in the page")
	}
	compactions := 0
	for _, i := range branch {
		if x.Type(i) == session.TypeCompaction {
			compactions++
			if !strings.Contains(page, `id="e-`+x.ID(i)+`"`) {
				t.Errorf("compaction %s is not in the page", x.ID(i))
			}
		}
	}
	if compactions == 0 || !strings.Contains(page, "are left out to keep this page") || !strings.Contains(page, "xdev export --full") {
		t.Errorf("%d compactions; the page does not say what it left out", compactions)
	}
	// --full has it all.
	var full bytes.Buffer
	if err := HTML(&full, x, nil); err != nil {
		t.Fatal(err)
	}
	if full.Len() < 20<<20 || strings.Contains(full.String(), "are left out") {
		t.Errorf("the full page is %d bytes", full.Len())
	}
	out := filepath.Join(t.TempDir(), "big.html")
	os.WriteFile(out, b.Bytes(), 0o600)
	dom, log := renderInChromium(t, chromium(t), out)
	if !strings.Contains(dom, `id="omitted"`) {
		t.Error("the rendered page lacks the note on what was left out")
	}
	checkQuiet(t, out, log)
	t.Logf("%d MB session: %s page (%s in full)", fileSize(t, path)>>20, sizeText(int64(b.Len())), sizeText(int64(full.Len())))
}

func fileSize(t *testing.T, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestFenceGenerated: a fence is longer than every run of backticks, and three at
// least, on generated texts of backticks, ASCII and multi-byte characters.
func TestFenceGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	pieces := []string{"`", "``", "a", "日本", "é", "\n", "````", " "}
	for range 5000 {
		var b strings.Builder
		for range r.IntN(30) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		longest, run := 0, 0
		for _, c := range s {
			if c == '`' {
				run++
				longest = max(longest, run)
			} else {
				run = 0
			}
		}
		if got, want := fence(s), strings.Repeat("`", max(3, longest+1)); got != want {
			t.Fatalf("fence(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestNothingLoadsFromElsewhere: of every way Markdown names an image
// (inline, reference, with a title, nested in a link, autolinks, raw
// HTML <img>, <picture>, srcset, CSS url()), × each kind of address
// (http, https, scheme-relative, data:, javascript:, a path), nothing in
// the rendered HTML makes a browser fetch anything: the only <img> a
// page holds is a data: URI of the session's own image bytes. And the
// session's images render only when their bytes are what their type
// says: bad bytes, a type that is no raster image, a reference to a blob
// that is missing show "not available".
func TestNothingLoadsFromElsewhere(t *testing.T) {
	urls := []string{"http://evil.example/t.png", "https://evil.example/t.png", "//evil.example/t.png",
		"data:image/png;base64,iVBORw0KGgo=", "javascript:alert(1)", "t.png", "/etc/passwd", "HTTP://EVIL.EXAMPLE/X"}
	forms := []func(u string) string{
		func(u string) string { return "![alt](" + u + ")" },
		func(u string) string { return `![alt](` + u + ` "a title")` },
		func(u string) string { return "![alt][r]\n\n[r]: " + u },
		func(u string) string { return "[![alt](" + u + ")](https://example.com)" },
		func(u string) string { return "<" + u + ">" },
		func(u string) string { return `<img src="` + u + `">` },
		func(u string) string { return `<picture><source srcset="` + u + `"><img src="` + u + `"></picture>` },
		func(u string) string { return `<img srcset="` + u + ` 2x">` },
		func(u string) string { return `<div style="background:url(` + u + `)">x</div>` },
		func(u string) string { return `<video poster="` + u + `"></video><audio src="` + u + `"></audio>` },
		func(u string) string { return `<link rel="stylesheet" href="` + u + `">` },
	}
	n := 0
	for _, f := range forms {
		for _, u := range urls {
			got := strings.ToLower(string(renderMarkdown("text\n\n" + f(u) + "\n")))
			n++
			for _, bad := range []string{"<img", "srcset", "url(", "<video", "<audio", "<source", "<link", "poster=", "=\"javascript:"} {
				if strings.Contains(got, bad) {
					t.Errorf("%q renders %q: %s", f(u), bad, got)
				}
			}
		}
	}
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR rest of a picture"))
	for _, c := range []struct {
		img Image
		ok  bool
	}{
		{Image{MimeType: "image/png", Data: png}, true},
		{Image{MimeType: "image/jpeg", Data: png}, false}, // a PNG said to be a JPEG
		{Image{MimeType: "image/png", Data: base64.StdEncoding.EncodeToString([]byte("not a picture at all, no"))}, false},
		{Image{MimeType: "image/svg+xml", Data: png}, false},
		{Image{MimeType: "image/png", Data: "blob:sha256:0000000000000000000000000000000000000000000000000000000000000001"}, false},
		{Image{MimeType: "image/png", Data: "iVBO"}, false},
		{Image{MimeType: "image/gif", Data: base64.StdEncoding.EncodeToString([]byte("GIF89a\x01\x00\x01\x00 and more bytes"))}, true},
	} {
		if got := imgSrc(c.img) != ""; got != c.ok {
			t.Errorf("%s %.20s…: shown %v, want %v", c.img.MimeType, c.img.Data, got, c.ok)
		}
	}
	t.Logf("%d Markdown images", n)
}
