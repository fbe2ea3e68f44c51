package serve

import (
	"bytes"
	"context"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/export"
	"github.com/xdev/xdev/internal/secrets"
	"github.com/xdev/xdev/internal/session"
)

// window is how many entries of a branch a session page shows at once.
const window = 100

// maxAfter bounds the entries one live request sends.
const maxAfter = 500

// maxLeaves is how many of a session tree's leaves its page lists.
const maxLeaves = 30

// entryOptions are how a page renders entries: long outputs cut as a page
// of the export cuts them.
var entryOptions = export.Options{MaxOutput: export.PageDefaults.MaxOutput}

type sessionPage struct {
	base
	Key, Harness, Project, Path, ID string
	Size                            int64
	Cost                            string
	Model, Status                   string
	Entries                         template.HTML
	Shown, From, Branch             int
	First, Older, Newer, Newest     string
	Live                            bool
	Last                            string // the branch's last entry, for the live requests
	Leaf                            string // the leaf asked for, "" for the session's own
	Leaves                          []leafView
	Commands                        []string
	Note                            string
	Skipped                         int
	Parent                          string // the session it came from, on this server
	ParentTitle                     string
}

type leafView struct {
	URL, ID, Time, Kind string
	Active              bool
}

// opening is a session as a request opens it: its row and its index.
type opening struct {
	row     *catalog.Row
	rd      catalog.Readable
	x       *session.Index
	release func()
}

// open opens the session of the request's {key}; it answers the request
// itself (404, 500) when it cannot.
func (s *Server) open(w http.ResponseWriter, r *http.Request) (*opening, *library, bool) {
	l := s.lib.Load()
	e := l.find(r.PathValue("key"))
	if e == nil {
		http.Error(w, "no such session here (it may have been deleted; the sessions list is current)", http.StatusNotFound)
		return nil, l, false
	}
	o, err := s.openRow(r.Context(), &e.Row)
	if err != nil {
		http.Error(w, "opening the session: "+err.Error(), http.StatusInternalServerError)
		return nil, l, false
	}
	return o, l, true
}

func (s *Server) openRow(ctx context.Context, row *catalog.Row) (*opening, error) {
	ref, err := s.cat.RefOf(*row)
	if err != nil {
		return nil, err
	}
	rd, err := s.cat.Open(ctx, ref)
	if err != nil {
		return nil, err
	}
	x, release, err := s.opened.get(rd)
	if err != nil {
		return nil, err
	}
	return &opening{row: row, rd: rd, x: x, release: release}, nil
}

// branchOf is the branch a request asks for: to ?leaf=, else to the
// session's leaf; and the leaf's id when one was asked for.
func branchOf(x *session.Index, q url.Values) (branch []int, leaf string) {
	if x.Len() == 0 {
		return nil, ""
	}
	if id := q.Get("leaf"); id != "" {
		if i, ok := x.Lookup(id); ok {
			return x.PathTo(i), id
		}
	}
	return x.PathTo(x.Leaf()), ""
}

// serveSession is a session's page: ?at=ID (the window around that
// entry), ?from=N (the window from the branch's Nth entry), ?leaf=ID
// (another branch); else the newest window.
func (s *Server) serveSession(w http.ResponseWriter, r *http.Request) {
	s.wantUsage()
	o, l, ok := s.open(w, r)
	if !ok {
		return
	}
	defer o.release()
	x, row, q := o.x, o.row, r.URL.Query()
	branch, leaf := branchOf(x, q)
	key := r.PathValue("key")
	p := &sessionPage{base: base{Title: titleOf(row), Nav: "sessions"}, Key: key, Harness: row.Harness.Name(),
		Project: secrets.Mask(row.Cwd), Path: secrets.Mask(row.Path), ID: row.ID, Size: row.Size, Status: string(row.Status), Leaf: leaf,
		Branch: len(branch), Skipped: o.rd.Skipped, Cost: "—"}
	if c, ok := s.use.Load().costs.of(row.Path); ok {
		p.Cost, p.Model = costText(c.Cost, c.Calls, c.Unpriced), c.Model
	}
	if e := l.find(key); e != nil {
		if pe := l.parentOf(e); pe != nil {
			p.Parent, p.ParentTitle = pe.key, titleOf(&pe.Row)
		}
	}
	from := max(0, len(branch)-window)
	if at := q.Get("at"); at != "" {
		i, ok := x.Lookup(at)
		switch {
		case !ok:
			p.Note = "Entry " + at + " is not in this session (any more); the newest entries are shown."
		default:
			pos := indexOf(branch, i)
			if pos < 0 {
				// On another branch: show the branch that ends there.
				branch, p.Leaf = x.PathTo(i), at
				p.Branch, pos = len(branch), len(branch)-1
				p.Note = "This entry is on another branch than the session's current one; that branch is shown, up to it."
			}
			from = max(0, pos-window/2)
		}
	} else if n, err := strconv.Atoi(q.Get("from")); err == nil {
		from = min(max(0, n), max(0, len(branch)-1))
	}
	to := min(from+window, len(branch))
	var b bytes.Buffer
	opts := entryOptions
	if q.Get("at") != "" {
		// From a search hit: its words stay in view where an output is cut.
		opts.Around = searchWords(q.Get("q"))
	}
	n, err := export.HTMLEntries(&b, x, branch[from:to], &opts)
	if err != nil {
		http.Error(w, "rendering the session: "+err.Error(), http.StatusInternalServerError)
		return
	}
	p.Entries, p.Shown, p.From = template.HTML(b.String()), n, from
	link := func(at int) string {
		v := url.Values{"from": {strconv.Itoa(at)}, "leaf": {p.Leaf}}
		return queryURL("/s/"+key, v)
	}
	if from > 0 {
		p.First, p.Older = link(0), link(max(0, from-window))
	}
	if to < len(branch) {
		p.Newer, p.Newest = link(to), link(max(0, len(branch)-window))
	}
	if to == len(branch) && len(branch) > 0 {
		p.Live, p.Last = true, x.ID(branch[len(branch)-1])
	}
	p.Leaves = leaves(x, key, branch)
	p.Commands = commands(o, branch[from:to])
	render(w, "session.html", p)
}

// indexOf is the position of v in list, or -1.
func indexOf(list []int, v int) int {
	for k, e := range list {
		if e == v {
			return k
		}
	}
	return -1
}

// leaves are the session tree's leaves (the ends of its branches), the
// newest first, when there is more than one.
func leaves(x *session.Index, key string, branch []int) []leafView {
	n := x.Len()
	hasChild := make([]bool, n)
	for i := range n {
		if pid := x.ParentID(i); pid != "" {
			if p, ok := x.Lookup(pid); ok && p != i {
				hasChild[p] = true
			}
		}
	}
	active := -1
	if len(branch) > 0 {
		active = branch[len(branch)-1]
	}
	var out []leafView
	for i := n - 1; i >= 0 && len(out) < maxLeaves; i-- {
		if hasChild[i] {
			continue
		}
		v := leafView{ID: x.ID(i), Kind: x.Type(i), Active: i == active}
		v.URL = queryURL("/s/"+key, url.Values{"leaf": {v.ID}})
		if e, err := x.Entry(i); err == nil {
			v.Time = e.Timestamp
		}
		out = append(out, v)
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// commands are the commands that take the session further, to copy: the
// one that resumes it in the harness that made it, in its directory
// (catalog.ResumeOf, as a picker and MCP offer it), then xdev's: a fork
// at the last entry shown of an omp-format file, an import of another
// harness's. What holds a key is shown masked.
func commands(o *opening, shown []int) []string {
	path := catalog.ShellQuote(o.row.Path)
	if secrets.Mask(o.row.Path) != o.row.Path {
		path = catalog.ShellQuote(o.row.ID) // a path that holds a key is not shown: the id names it too
	}
	var out []string
	if line := catalog.ResumeOf(*o.row).Shell(); line != "" {
		out = append(out, secrets.Mask(line))
	}
	if o.rd.Converted {
		return append(out, "xdev import "+path)
	}
	if len(shown) > 0 {
		out = append(out, "xdev fork --at "+catalog.ShellQuote(session.DisplayID(o.x.ID(shown[len(shown)-1])))+" "+path)
	}
	return out
}

// serveAfter is the live part of a session's page: the entries of its
// branch after ?id= (as HTML, the branch's last entry's id in the
// X-Xdev-Last header); 409 Conflict when that entry is no longer on the
// branch (the page then loads itself again).
func (s *Server) serveAfter(w http.ResponseWriter, r *http.Request) {
	o, _, ok := s.open(w, r)
	if !ok {
		return
	}
	defer o.release()
	q := r.URL.Query()
	branch, _ := branchOf(o.x, q)
	i, ok := o.x.Lookup(q.Get("id"))
	pos := -1
	if ok {
		pos = indexOf(branch, i)
	}
	if pos < 0 {
		http.Error(w, "the branch changed", http.StatusConflict)
		return
	}
	next := branch[pos+1:]
	if len(next) > maxAfter {
		next = next[len(next)-maxAfter:]
	}
	var b bytes.Buffer
	if _, err := export.HTMLEntries(&b, o.x, next, &entryOptions); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("X-Xdev-Last", o.x.ID(branch[len(branch)-1]))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

// serveDownload is a session's export, whole: export.md or export.html,
// streamed (an export's memory does not follow the session's size).
func (s *Server) serveDownload(w http.ResponseWriter, r *http.Request) {
	o, _, ok := s.open(w, r)
	if !ok {
		return
	}
	defer o.release()
	name := safeName(o.row.ID)
	write := export.Markdown
	if strings.HasSuffix(r.URL.Path, ".html") {
		write = export.HTML
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		name += ".html"
	} else {
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		name += ".md"
	}
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	if err := write(w, o.x, nil); err != nil {
		s.cfg.Logf("exporting %s: %v", o.row.Path, err)
	}
}

// safeName is id as a download's file name: its letters, digits, '-' and
// '_' only, "session" when none.
func safeName(id string) string {
	out := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return -1
	}, id)
	if out == "" || len(out) > 80 {
		return "session"
	}
	return out
}

// searchWords are the words of a search query, without its operators:
// what a page keeps in view of the hit it opens on.
func searchWords(q string) []string {
	var words []string
	for _, f := range strings.FieldsFunc(q, func(r rune) bool { return strings.ContainsRune(" \t\"()*", r) }) {
		if f = strings.TrimPrefix(f, "-"); f != "" && f != "OR" && f != "AND" && f != "NOT" {
			words = append(words, f)
		}
	}
	return words
}
