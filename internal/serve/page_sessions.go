package serve

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/secrets"
	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/term"
)

// perPage is how many top-level sessions a page of the list shows.
const perPage = 50

// maxKids is how many nested sessions a row shows under it.
const maxKids = 20

type sessionsPage struct {
	base
	Form                url.Values
	Rows                []rowView
	Shown, Total, All   int
	Page, Pages         int
	Prev, Next          string
	Harnesses, Projects []string
	Statuses            []string
	Spans               []string
	Failed              []string
	Bad                 int
	Subagents           bool
}

// rowView is one row of the sessions list.
type rowView struct {
	Key, Title, Project, Cwd, Harness, Model, Status string
	Size                                             int64
	Modified                                         time.Time
	Cost                                             string
	Depth                                            int
	Subagent                                         bool
	More                                             int // nested sessions not shown under it
}

// spans are the choices of the "since" filters, as durations back.
var spans = map[string]time.Duration{"1d": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour, "365d": 365 * 24 * time.Hour}

var spanOrder = []string{"1d", "7d", "30d", "365d"}

var statuses = []string{string(session.StatusComplete), string(session.StatusInterrupted), string(session.StatusAborted),
	string(session.StatusError), string(session.StatusPending)}

// serveSessions is the sessions list: ?harness=, project=, q=, status=,
// since= (1d, 7d, 30d, 365d), subagents=1, page=N.
func (s *Server) serveSessions(w http.ResponseWriter, r *http.Request) {
	s.wantUsage()
	l := s.lib.Load()
	use := s.use.Load()
	q := r.URL.Query()
	f := listFilter{Harness: q.Get("harness"), Project: l.projectOf(q.Get("project")), Text: q.Get("q"), Status: q.Get("status"),
		Subagents: q.Get("subagents") == "1"}
	if d, ok := spans[q.Get("since")]; ok {
		f.Since = time.Now().Add(-d)
	}
	list := l.filtered(&f)
	p := &sessionsPage{base: base{Title: "Sessions", Nav: "sessions"}, Form: q, Total: len(list), All: len(l.rows),
		Harnesses: l.harnesses(), Projects: l.projects(200), Statuses: statuses, Spans: spanOrder, Bad: len(l.bad),
		Subagents: f.Subagents}
	for h, err := range l.failed {
		p.Failed = append(p.Failed, fmt.Sprintf("%s: %v", h.Name(), err))
	}
	p.Pages = max(1, (len(list)+perPage-1)/perPage)
	p.Page, _ = strconv.Atoi(q.Get("page"))
	p.Page = min(max(p.Page, 1), p.Pages)
	from := (p.Page - 1) * perPage
	for _, e := range list[from:min(from+perPage, len(list))] {
		p.Rows = s.appendRow(p.Rows, l, use, e, 0, &f)
	}
	p.Shown = len(p.Rows)
	p.Prev, p.Next = pageLinks("/", q, p.Page, p.Pages)
	render(w, "sessions.html", p)
}

// appendRow appends row e and, nested under it, the rows that came from
// it (forks, branches, subagents when shown).
func (s *Server) appendRow(out []rowView, l *library, use *usageView, e *entry, depth int, f *listFilter) []rowView {
	r := &e.Row
	v := rowView{Key: e.key, Title: titleOf(r), Project: shortPath(r.Cwd), Cwd: secrets.Mask(r.Cwd), Harness: string(r.Harness),
		Status: string(r.Status), Size: r.Size, Modified: r.Modified, Depth: depth, Subagent: r.Subagent, Cost: "—"}
	if c, ok := use.costs.of(r.Path); ok {
		v.Cost, v.Model = costText(c.Cost, c.Calls, c.Unpriced), c.Model
	}
	out = append(out, v)
	me := len(out) - 1
	if depth >= 6 {
		return out
	}
	shown := 0
	for _, k := range l.kidsOf(e.key) {
		if k.Subagent && !f.Subagents {
			continue
		}
		if shown == maxKids {
			out[me].More++
			continue
		}
		shown++
		out = s.appendRow(out, l, use, k, depth+1, f)
	}
	return out
}

// titleOf is what the list calls a session: its title, else the start
// of its first message, on one line.
func titleOf(r *catalog.Row) string {
	t := r.Title
	if t == "" {
		t = r.FirstMessage
	}
	if t = term.Truncate(term.OneLine(t), 160); t == "" {
		return "Untitled session"
	}
	return t
}

// pageLinks are the links to the pages before and after page (of pages)
// of the list at path with the query q, "" where there is none.
func pageLinks(path string, q url.Values, page, pages int) (prev, next string) {
	link := func(n int) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("page", strconv.Itoa(n))
		return queryURL(path, v)
	}
	if page > 1 {
		prev = link(page - 1)
	}
	if page < pages {
		next = link(page + 1)
	}
	return prev, next
}
