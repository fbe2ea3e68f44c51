package serve

import (
	"bytes"
	"embed"
	"encoding/json"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"sync"

	"github.com/xdev/xdev/internal/export"
)

//go:embed assets
var assets embed.FS

// pages are the page templates, each with the layout (assets/*.html),
// parsed on first use: not in every xdev command's start.
var pages = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(funcs).ParseFS(assets, "assets/*.html"))
})

// routes is the server's mux, behind the Guard.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.serveSessions)
	mux.HandleFunc("GET /search", s.serveSearch)
	mux.HandleFunc("GET /s/{key}", s.serveSession)
	mux.HandleFunc("GET /s/{key}/after", s.serveAfter)
	mux.HandleFunc("GET /s/{key}/export.md", s.serveDownload)
	mux.HandleFunc("GET /s/{key}/export.html", s.serveDownload)
	mux.HandleFunc("GET /usage", s.serveUsage)
	mux.HandleFunc("GET /secrets", s.serveSecrets)
	mux.HandleFunc("GET /events", s.serveEvents)
	mux.HandleFunc("GET /api/status", s.serveStatus)
	mux.HandleFunc("GET /assets/{name}", serveAsset)
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/assets/icon.svg", http.StatusMovedPermanently)
	})
	return mux
}

// serveAsset serves the embedded styles and script, and the export's
// stylesheet; any other name is not found (a name never reaches the
// file system: the assets are in the binary).
func serveAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	var body []byte
	switch name {
	case "export.css":
		body = []byte(export.Stylesheet)
	case "app.css", "app.js", "icon.svg":
		b, err := fs.ReadFile(assets, "assets/"+name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		body = b
	default:
		http.NotFound(w, r)
		return
	}
	ct := "text/css; charset=utf-8"
	switch {
	case strings.HasSuffix(name, ".js"):
		ct = "text/javascript; charset=utf-8"
	case strings.HasSuffix(name, ".svg"):
		ct = "image/svg+xml"
	}
	w.Header().Set("Content-Type", ct)
	w.Write(body)
}

// serveStatus is /api/status: what the server holds and whether its
// first refresh is done, as JSON (for scripts, and the benchmarks that
// wait for a server to be ready).
func (s *Server) serveStatus(w http.ResponseWriter, r *http.Request) {
	l := s.lib.Load()
	u := s.use.Load()
	st := struct {
		Ready     bool     `json:"ready"`
		Indexing  string   `json:"indexing,omitempty"`
		Sessions  int      `json:"sessions"`
		Usage     bool     `json:"usage"`
		Harnesses []string `json:"harnesses"`
	}{Ready: s.ready.Load(), Indexing: s.status.Load().(string), Sessions: len(l.rows), Usage: !u.made.IsZero(), Harnesses: l.harnesses()}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(st)
}

// render writes page name with data, or a server error.
func render(w http.ResponseWriter, name string, data any) {
	var b bytes.Buffer
	if err := pages().ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, "rendering "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

// base is what every page's layout shows.
type base struct {
	Title  string
	Nav    string // the page's tab: sessions, search, usage, secrets
	Notice string
}
