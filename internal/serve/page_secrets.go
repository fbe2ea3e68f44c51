package serve

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/xdev/xdev/internal/catalog"
)

// secretsScan is what the secrets page shows: the secrets `xdev secrets`
// finds in one library's sessions, masked (catalog.Secrets never hands
// out a value), read through the same cache by each session's stamp.
type secretsScan struct {
	lib    *library
	found  []catalog.Secret
	unread int
	stats  catalog.SecretsStats
	made   time.Time
	err    error
}

// secretsState is the last scan, and whether one runs: a scan runs in the
// background when the page is asked for and the library changed since
// the last one, and the page shows the last scan meanwhile.
type secretsState struct {
	mu      sync.Mutex
	last    *secretsScan
	running bool
}

// current returns the last scan (nil before the first ends), and starts
// one of l if the last is of another library and none runs.
func (st *secretsState) current(s *Server, l *library) (last *secretsScan, running bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if (st.last == nil || st.last.lib != l) && !st.running {
		st.running = true
		go func() {
			scan := s.scanSecrets(l)
			st.mu.Lock()
			st.last, st.running = scan, false
			st.mu.Unlock()
		}()
	}
	return st.last, st.running
}

// scanSecrets scans the sessions of l.
func (s *Server) scanSecrets(l *library) *secretsScan {
	scan := &secretsScan{lib: l, made: time.Now()}
	ctx := s.background()
	scan.stats, scan.err = s.cat.Secrets(ctx, l.all(), catalog.SecretsOptions{Cache: true, CachePath: s.cfg.SecretsCache},
		func(f catalog.Secret) { scan.found = append(scan.found, f) },
		func(catalog.Row, error) { scan.unread++ })
	return scan
}

// background is the context of the server's own work: Run's, once it
// runs.
func (s *Server) background() context.Context {
	if ctx, ok := s.runCtx.Load().(context.Context); ok {
		return ctx
	}
	return context.Background()
}

type secretsPage struct {
	base
	Form      url.Values
	Ready     bool
	Updating  bool
	Made      time.Time
	Sessions  int // sessions read
	Unread    int
	Error     string
	Total     int // secrets found, before the filters
	Shown     int
	Kinds     []kindCount
	Harnesses []string
	Rows      []secretRow
	Page      int
	Pages     int
	Prev      string
	Next      string
}

type kindCount struct {
	Kind  string
	Count int
	URL   string
}

type secretRow struct {
	Kind    string
	Masked  string
	Harness string
	Title   string
	Project string
	Entry   string
	Line    int
	Time    time.Time
	URL     string
}

// serveSecrets is the secrets page: every key, token and password in the
// sessions, masked, by kind and harness, each linked to its entry; no
// value is ever on it.
func (s *Server) serveSecrets(w http.ResponseWriter, r *http.Request) {
	l := s.lib.Load()
	q := r.URL.Query()
	p := &secretsPage{base: base{Title: "Secrets", Nav: "secrets"}, Form: q, Harnesses: l.harnesses()}
	scan, running := s.secrets.current(s, l)
	if scan == nil {
		p.Notice = "The sessions are being read for secrets; reload this page in a moment."
		render(w, "secrets.html", p)
		return
	}
	p.Ready, p.Updating, p.Made, p.Sessions, p.Unread = true, running, scan.made, scan.stats.Sessions, scan.unread
	if scan.err != nil {
		p.Error = scan.err.Error()
	}
	p.Total = len(scan.found)
	kind, harness := q.Get("kind"), q.Get("harness")
	counts := map[string]int{}
	var keep []catalog.Secret
	for _, f := range scan.found {
		if harness != "" && string(f.Harness) != harness {
			continue
		}
		counts[f.Kind]++
		if kind != "" && f.Kind != kind {
			continue
		}
		keep = append(keep, f)
	}
	for k, n := range counts {
		v := url.Values{"kind": {k}}
		if harness != "" {
			v.Set("harness", harness)
		}
		p.Kinds = append(p.Kinds, kindCount{k, n, queryURL("/secrets", v)})
	}
	sort.Slice(p.Kinds, func(i, j int) bool {
		a, b := p.Kinds[i], p.Kinds[j]
		return a.Count > b.Count || a.Count == b.Count && a.Kind < b.Kind
	})
	// Newest first, as every list here.
	sort.SliceStable(keep, func(i, j int) bool { return keep[i].Time.After(keep[j].Time) })
	p.Shown = len(keep)
	p.Pages = max(1, (len(keep)+perPage-1)/perPage)
	p.Page, _ = strconv.Atoi(q.Get("page"))
	p.Page = min(max(p.Page, 1), p.Pages)
	from := (p.Page - 1) * perPage
	for _, f := range keep[from:min(from+perPage, len(keep))] {
		row := secretRow{Kind: f.Kind, Masked: f.Masked, Harness: f.Harness.Name(), Entry: f.Entry, Line: f.Line, Time: f.Time}
		if e := l.atPath(f.Path); e != nil {
			row.Title, row.Project = titleOf(&e.Row), shortPath(e.Cwd)
			row.URL = "/s/" + e.key
			if f.Entry != "title" && f.Entry != "" {
				row.URL += "?at=" + url.QueryEscape(f.Entry) + "#e-" + f.Entry
			}
		} else if key := l.keyOfPath(f.Path); key != "" {
			row.URL = "/s/" + key
		}
		if row.Title == "" {
			row.Title = f.SessionID
		}
		p.Rows = append(p.Rows, row)
	}
	p.Prev, p.Next = pageLinks("/secrets", q, p.Page, p.Pages)
	render(w, "secrets.html", p)
}
