package serve

import (
	"html"
	"strings"
	"testing"
)

// FuzzMarked: a snippet with any marks (in range or not, overlapping,
// reversed) renders as its own text, escaped, with only <mark> tags
// added: no markup of the snippet's survives.
func FuzzMarked(f *testing.F) {
	f.Add("the <b>quokka</b> & co", 4, 11, 12, 14)
	f.Add("<script>x</script>", 0, 8, -1, 99)
	f.Add("héllo wörld", 1, 3, 2, 5)
	f.Fuzz(func(t *testing.T, snippet string, a, b, c, d int) {
		got := string(marked(snippet, [][2]int{{a, b}, {c, d}}))
		plain := strings.ReplaceAll(strings.ReplaceAll(got, "<mark>", ""), "</mark>", "")
		if strings.ContainsAny(plain, "<>") {
			t.Fatalf("markup in %q", got)
		}
		// html/template's escaper turns NUL into U+FFFD, as a browser would.
		if html.UnescapeString(plain) != strings.ReplaceAll(snippet, "\x00", "\uFFFD") {
			t.Fatalf("%q renders as %q", snippet, got)
		}
	})
}
