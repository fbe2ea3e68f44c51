package serve

import (
	"fmt"
	"html/template"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/secrets"
	"github.com/xdev/xdev/internal/term"
)

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"size":   term.Size,
	"cost":   costText,
	"ago":    agoText,
	"iso":    func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"short":  shortPath,
	"tokens": tokensText,
	"sel":    func(a, b string) bool { return a == b },
	"add":    func(a, b int) int { return a + b },
	"list":   func(n ...int) []int { return n },
}

// costText is a cost in dollars; unpriced calls make it a lower bound
// (≥), no calls a dash.
func costText(cost float64, calls, unpriced int) string {
	if calls == 0 {
		return "—"
	}
	s := fmt.Sprintf("$%.2f", cost)
	if cost > 0 && cost < 0.01 {
		s = "<$0.01"
	}
	if unpriced > 0 {
		s = "≥" + s
	}
	return s
}

// tokensText is a token count, short: 1.2M, 340k.
func tokensText(n float64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.0f", n)
}

// agoText is how long ago t was, for a listing.
func agoText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	case d < 7*24*time.Hour:
		return fmt.Sprintf("%d d ago", int(d.Hours()/24))
	}
	return t.Local().Format("2006-01-02")
}

// shortPath is a directory as a person knows it (~ for home), its last
// parts when long.
func shortPath(p string) string {
	p = term.HomePath(secrets.Mask(p))
	if len(p) <= 48 {
		return p
	}
	parts := strings.Split(p, string(filepath.Separator))
	out := parts[len(parts)-1]
	for i := len(parts) - 2; i >= 0 && len(out)+len(parts[i]) < 44; i-- {
		out = parts[i] + "/" + out
	}
	return "…/" + out
}

// queryURL is path with the query values q (empty ones left out).
func queryURL(path string, q url.Values) string {
	for k, v := range q {
		if len(v) == 0 || v[0] == "" {
			delete(q, k)
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// marked is snippet with the byte ranges marks in <mark>, escaped.
func marked(snippet string, marks [][2]int) template.HTML {
	var b strings.Builder
	at := 0
	for _, m := range marks {
		from, to := m[0], m[1]
		if from < at || to > len(snippet) || from >= to {
			continue
		}
		b.WriteString(template.HTMLEscapeString(snippet[at:from]))
		b.WriteString("<mark>")
		b.WriteString(template.HTMLEscapeString(snippet[from:to]))
		b.WriteString("</mark>")
		at = to
	}
	b.WriteString(template.HTMLEscapeString(snippet[at:]))
	return template.HTML(b.String())
}
