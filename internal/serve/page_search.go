package serve

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/catalog"
)

// searchLimit is how many hits a search page shows.
const searchLimit = 50

type searchPage struct {
	base
	Form      url.Values
	Query     string
	Hits      []hitView
	Error     string
	Indexing  string
	Harnesses []string
	Projects  []string
	Roles     []string
	Spans     []string
	Searched  bool
}

// hitView is one hit as the search page shows it.
type hitView struct {
	URL, Title, Harness, Project, Role, Tool, Model string
	Time                                            time.Time
	Snippet                                         template.HTML
	InContext, OnBranch, Subagent                   bool
}

var roles = []string{catalog.RoleUser, catalog.RoleAssistant, catalog.RoleTool, catalog.RoleSummary, catalog.RoleCustom, catalog.RoleTitle}

// serveSearch is the search page: ?q= (xdev search's query language),
// role=, harness=, project= (a project's directory), since=, tool=,
// model= (a part of its name), subagents=1, thinking=1, newest=1; fragment=1 answers the result list alone, which
// is what the page's script asks for as the query is typed.
func (s *Server) serveSearch(w http.ResponseWriter, r *http.Request) {
	l := s.lib.Load()
	form := r.URL.Query()
	p := &searchPage{base: base{Title: "Search", Nav: "search"}, Form: form, Query: form.Get("q"),
		Harnesses: l.harnesses(), Projects: l.projects(200), Roles: roles, Spans: spanOrder}
	if strings.TrimSpace(p.Query) != "" {
		p.Searched = true
		s.search(r, l, p)
	}
	if form.Get("fragment") == "1" {
		render(w, "hits", p)
		return
	}
	render(w, "search.html", p)
}

// search runs the page's query and fills its hits.
func (s *Server) search(r *http.Request, l *library, p *searchPage) {
	form := p.Form
	q := catalog.Query{Text: p.Query, Role: form.Get("role"), Cwd: l.projectOf(form.Get("project")), Subagents: form.Get("subagents") == "1",
		Thinking: form.Get("thinking") == "1", Newest: form.Get("newest") == "1", Tool: form.Get("tool"), Model: form.Get("model"),
		Limit: searchLimit}
	if d, ok := spans[form.Get("since")]; ok {
		q.Since = time.Now().Add(-d)
	}
	harness := form.Get("harness")
	if !s.ready.Load() {
		p.Indexing = s.status.Load().(string)
		return
	}
	s.ixMu.Lock()
	ix := s.ix
	if ix == nil {
		s.ixMu.Unlock()
		p.Error = "The search index could not be opened (xdev serve's log says why)."
		return
	}
	hits, err := ix.SearchIn(r.Context(), q, func(pl catalog.SearchPlace) bool { return harness == "" || string(pl.Harness) == harness })
	s.ixMu.Unlock()
	s.reopen.Used(catalog.ReopenAfterSearch)
	if err != nil {
		if errors.Is(err, catalog.ErrQuery) {
			p.Error = err.Error()
		} else {
			p.Error = "Search failed: " + err.Error()
		}
		return
	}
	for _, h := range hits {
		v := hitView{Title: h.Title, Harness: h.Harness, Project: shortPath(h.Cwd), Role: h.Role, Tool: h.Tool, Model: h.Model,
			Time: h.Timestamp, Snippet: marked(h.Snippet, h.Highlights), InContext: h.InContext, OnBranch: h.OnActiveBranch,
			Subagent: h.Subagent}
		if v.Title == "" {
			v.Title = titleOf(&catalog.Row{FirstMessage: h.FirstMessage}) // as the list names it
		}
		if key := l.keyOfPath(h.Path); key != "" {
			v.URL = "/s/" + key
			if h.EntryID != "" {
				v.URL += "?at=" + url.QueryEscape(h.EntryID) + "&q=" + url.QueryEscape(p.Query) + "#e-" + h.EntryID
			}
		}
		p.Hits = append(p.Hits, v)
	}
}
