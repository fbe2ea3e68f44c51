package recall

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/secrets"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/searchtext"
	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/usage"
)

// SessionArgs are get_session's arguments.
type SessionArgs struct {
	Session string   `json:"session" jsonschema:"the session: its id, an id prefix, its file name or its path"`
	Offset  int      `json:"offset,omitempty" jsonschema:"the position of the page's first entry in the file: 0 is the first; a negative one counts from the end (-20: the last 20)"`
	Around  string   `json:"around,omitempty" jsonschema:"an entry id (a hit's entry_id): the page is the entries around it"`
	Roles   []string `json:"roles,omitempty" jsonschema:"only entries of these roles: user, assistant, tool, summary, custom"`
	Paging
	NoCost bool `json:"no_cost,omitempty" jsonschema:"leave the cost out of the summary (it reads the project's sessions' usage)"`
}

// SessionResult is get_session's output.
type SessionResult struct {
	Note    string  `json:"note"`
	Summary Summary `json:"summary"`
	Entries []Entry `json:"entries"`
	Budget  Budget  `json:"budget"`
}

// Summary is what a session is.
type Summary struct {
	Session
	Entries       int      `json:"entries" jsonschema:"entries in the file"`
	Models        []string `json:"models,omitempty"`
	Cost          *float64 `json:"cost_usd,omitempty" jsonschema:"its model calls' cost in dollars, each call counted once (a fork's copies are its source's); subagents' rolled in"`
	CostNote      string   `json:"cost_note,omitempty"`
	Forks         []string `json:"forks,omitempty" jsonschema:"sessions forked or branched from this one (ids; the first 20, fewer when the budget is short)"`
	ForkCount     int      `json:"fork_count,omitempty"`
	Subagents     []string `json:"subagents,omitempty" jsonschema:"its subagents' transcripts (paths; the first 20, fewer when the budget is short)"`
	SubagentCount int      `json:"subagent_count,omitempty"`
	Resume        string   `json:"resume,omitempty" jsonschema:"the shell command that resumes it in the harness that made it, in its working directory"`
	ResumeNote    string   `json:"resume_note,omitempty" jsonschema:"why no command resumes it"`
}

// An Entry is one entry of a session's file, its text cut to a share of
// the budget.
type Entry struct {
	Position int    `json:"position" jsonschema:"its place in the file, from 0"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type"`
	Role     string `json:"role,omitempty"`
	Tool     string `json:"tool,omitempty"`
	Model    string `json:"model,omitempty"`
	Time     string `json:"time,omitempty"`
	Line     int    `json:"line,omitempty"`
	Text     string `json:"text,omitempty"`
}

func (s *server) session(ctx context.Context, a SessionArgs) (SessionResult, string, error) {
	out := SessionResult{Note: Quoted, Entries: []Entry{}}
	b, limit, at, err := a.page("get_session")
	if err != nil {
		return out, "", err
	}
	for _, r := range a.Roles {
		if !slices.Contains(catalog.Roles, r) {
			return out, "", fmt.Errorf("roles are of %s, not %q", strings.Join(catalog.Roles, ", "), r)
		}
	}
	ref, rd, err := s.open(ctx, a.Session)
	if err != nil {
		return out, "", err
	}
	x, err := rd.OpenIndex()
	if err != nil {
		return out, "", err
	}
	defer x.Close()
	// The cost reads the usage of the project's sessions: it may take
	// half of what is left of the call, the entries the rest.
	costCtx, cancel := context.WithTimeout(ctx, s.limit/2)
	if d, ok := ctx.Deadline(); ok {
		costCtx, cancel = context.WithTimeout(ctx, time.Until(d)/2)
	}
	out.Summary = s.summary(costCtx, ref, rd, x, a.NoCost)
	cancel()
	fitSummary(&out.Summary, (b.left-frame)/4)
	b.reserve(frame + 2*sizeOf(out.Summary))

	from := a.Offset
	switch {
	case a.Cursor != "":
		if a.Around != "" {
			return out, "", errors.New("cursor goes on from the page before; around starts a page: give one")
		}
		from = at
	case a.Around != "":
		i, ok := x.Lookup(a.Around)
		if !ok {
			return out, "", fmt.Errorf("session %s has no entry %q", out.Summary.ID, a.Around)
		}
		from = max(0, i-limit/2)
	case from < 0:
		from = max(0, x.Len()+from)
	}
	per := max(200, min(4000, b.left/8)) // an entry's text, at most
	var text strings.Builder
	next := ""
	for i := from; i < x.Len(); i++ {
		if len(out.Entries) == limit || len(out.Entries) > 0 && ctx.Err() != nil {
			next = cursorOf("get_session", i)
			break
		}
		e, err := x.Entry(i)
		if err != nil {
			return out, "", err
		}
		d := searchtext.Of(e)
		if len(a.Roles) > 0 && !slices.Contains(a.Roles, d.Role) {
			continue
		}
		v := Entry{Position: i, ID: e.ID, Type: e.Type, Role: d.Role, Tool: d.Tool, Model: d.Model,
			Line: rd.Line(x, i), Text: cut(d.Text, per)}
		if d.TS != 0 {
			v.Time = timeText(time.UnixMilli(d.TS))
		}
		line := entryText(&v)
		if !b.take(sizeOf(v) + len(line)) {
			next = cursorOf("get_session", i)
			break
		}
		out.Entries = append(out.Entries, v)
		text.WriteString(line)
	}
	out.Budget = b.report(next)
	head := fmt.Sprintf("%s\n%d entries shown of %d", summaryText(&out.Summary), len(out.Entries), out.Summary.Entries)
	if ctx.Err() != nil && next != "" {
		head += outOfTime
	}
	return out, resultText(head, text.String(), out.Budget), nil
}

// open finds the session arg names, by the catalog's rule.
func (s *server) open(ctx context.Context, arg string) (catalog.Ref, catalog.Readable, error) {
	if strings.TrimSpace(arg) == "" {
		return catalog.Ref{}, catalog.Readable{}, errors.New("session is empty: give an id, an id prefix, a file name or a path")
	}
	outside := fmt.Errorf("%s is not in the places this server reads (the data dir and every harness's directory); xdev mcp --allow DIR adds a directory", arg)
	if strings.ContainsRune(arg, filepath.Separator) {
		// A path: refused before a byte of the file is read.
		if abs, err := filepath.Abs(arg); err != nil || !s.serves(abs) {
			return catalog.Ref{}, catalog.Readable{}, outside
		}
	}
	ref, err := s.cat.Resolve(arg)
	if err != nil {
		return ref, catalog.Readable{}, err
	}
	if !s.serves(ref.Path) {
		return catalog.Ref{}, catalog.Readable{}, outside
	}
	rd, err := s.cat.Open(ctx, ref)
	return ref, rd, err
}

// serves reports whether the session file at path is one the server
// answers for: in the catalog's places, or under a directory Allow names.
func (s *server) serves(path string) bool {
	if s.cat.Holds(path) {
		return true
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	for _, dir := range s.allow {
		if d, err := filepath.EvalSymlinks(dir); err == nil {
			if rel, err := filepath.Rel(d, real); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				return true
			}
		}
	}
	return false
}

// maxLinks is how many forks and subagents a summary names.
const maxLinks = 20

// summary is what the listing and the ledger say of the session.
func (s *server) summary(ctx context.Context, ref catalog.Ref, rd catalog.Readable, x *session.Index, noCost bool) Summary {
	h := x.Header()
	title, _ := x.Title()
	sum := Summary{Session: Session{ID: ref.ID, Harness: string(ref.Harness), Title: cut(title, maxTitle), Project: secrets.Mask(h.Cwd), Path: secrets.Mask(rd.Shown),
		Parent: h.ParentSession, Size: x.Size()}, Entries: x.Len()}
	if sum.ID == "" {
		sum.ID = h.ID
	}
	if t, err := time.Parse(time.RFC3339Nano, h.Timestamp); err == nil {
		sum.Created = timeText(t)
	}
	// Its project's sessions: where its forks and subagents are (a fork
	// keeps its source's cwd), without listing every project.
	if rows, err := s.cat.ListHarness(ref.Harness, catalog.ListOptions{Subagents: true, Cwd: h.Cwd}); err == nil {
		for i := range rows {
			r := &rows[i]
			switch {
			case r.Path == ref.Path || r.Path == rd.Shown:
				sum.Modified, sum.Status, sum.Subagent, sum.Size = timeText(r.Modified), string(r.Status), r.Subagent, r.Size
				if sum.Title == "" {
					sum.Title = cut(r.Title, maxTitle)
				}
			case r.ParentSession != "" && (r.ParentSession == sum.ID || r.ParentSession == ref.Path):
				if r.Subagent {
					if sum.SubagentCount++; len(sum.Subagents) < maxLinks {
						sum.Subagents = append(sum.Subagents, r.Path)
					}
				} else if sum.ForkCount++; len(sum.Forks) < maxLinks {
					sum.Forks = append(sum.Forks, r.ID)
				}
			}
		}
	}
	// The command a session's page offers too (catalog.ResumeOf).
	if res := catalog.ResumeOf(catalog.Row{Harness: ref.Harness, ID: sum.ID, Path: ref.Path, Cwd: h.Cwd, Subagent: sum.Subagent}); res.Argv != nil {
		sum.Resume = secrets.Mask(res.Shell())
	} else {
		sum.ResumeNote = res.Why
	}
	if noCost {
		return sum
	}
	groups, _, err := s.cat.UsageGroups(ctx, catalog.UsageOptions{Harnesses: []catalog.Harness{ref.Harness}, Cwd: h.Cwd, Cache: s.cache})
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		sum.CostNote = "cost not known: reading the usage of the project's sessions takes longer than a call may (usage_summary reads it, no_cost leaves it out)"
		return sum
	case err != nil:
		sum.CostNote = "cost not known: " + err.Error()
		return sum
	}
	r := usage.NewReport(groups, usage.ReportOptions{View: usage.BySession, Location: time.UTC})
	for _, row := range r.Rows {
		if row.Key != ref.Path && row.Key != rd.Shown && (row.Session == nil || row.Session.ID != sum.ID) {
			continue
		}
		cost := row.Cost
		sum.Cost = &cost
		for _, m := range row.Models {
			sum.Models = append(sum.Models, m.Model)
		}
		if row.Unpriced > 0 {
			sum.CostNote = fmt.Sprintf("%d calls of models with no price are not in the cost, which is a lower bound", row.Unpriced)
		}
		return sum
	}
	zero := 0.0
	sum.Cost, sum.CostNote = &zero, "no model calls recorded"
	return sum
}

// fitSummary makes sum take at most room bytes as JSON (and so about as
// much as text), leaving the rest of a call's budget to its entries: the
// links to forks and subagents go first, from the last (their counts
// stay), then the texts are cut. A summary always fits the least budget.
func fitSummary(sum *Summary, room int) {
	for sizeOf(sum) > room && len(sum.Subagents)+len(sum.Forks) > 0 {
		if n := len(sum.Subagents); n > 0 {
			sum.Subagents = sum.Subagents[:n-1]
		} else {
			sum.Forks = sum.Forks[:len(sum.Forks)-1]
		}
	}
	for _, f := range []*string{&sum.CostNote, &sum.Title, &sum.Project, &sum.Path} {
		if over := sizeOf(sum) - room; over > 0 {
			*f = cut(*f, max(len(*f)-over, 0))
		}
	}
}

func summaryText(s *Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s (%s): %s\nproject %s · %s · %d bytes · %d entries", s.ID, s.Harness, oneLine(s.Title), s.Project, s.Path, s.Size, s.Entries)
	if s.Cost != nil {
		fmt.Fprintf(&b, " · $%.4f", *s.Cost)
	}
	if len(s.Models) > 0 {
		fmt.Fprintf(&b, " · models %s", strings.Join(s.Models, ", "))
	}
	if s.Parent != "" {
		fmt.Fprintf(&b, "\nparent %s", s.Parent)
	}
	if s.ForkCount > 0 {
		fmt.Fprintf(&b, "\n%d forks: %s", s.ForkCount, strings.Join(s.Forks, ", "))
	}
	if s.SubagentCount > 0 {
		fmt.Fprintf(&b, "\n%d subagents", s.SubagentCount)
	}
	return b.String()
}

func entryText(e *Entry) string {
	who := e.Role
	if who == "" {
		who = e.Type
	}
	return fmt.Sprintf("[%d %s %s %s] %s\n", e.Position, e.ID, who, e.Time, e.Text)
}

// ContextArgs are get_context's arguments.
type ContextArgs struct {
	Session string `json:"session" jsonschema:"the session: its id, an id prefix, its file name or its path"`
	Offset  int    `json:"offset,omitempty" jsonschema:"the first message's position in the context: 0 is the first; a negative one counts from the end"`
	Paging
}

// ContextResult is get_context's output.
type ContextResult struct {
	Note     string    `json:"note"`
	Session  string    `json:"session"`
	Title    string    `json:"title,omitempty"`
	Model    string    `json:"model,omitempty"`
	LeafID   string    `json:"leaf_id,omitempty"`
	Total    int       `json:"total" jsonschema:"messages in the context"`
	Messages []Message `json:"messages"`
	Budget   Budget    `json:"budget"`
}

// A Message is one message of the context, its text cut to a share of
// the budget.
type Message struct {
	Position int    `json:"position"`
	Role     string `json:"role"`
	Time     string `json:"time,omitempty"`
	Text     string `json:"text"`
}

var errPageFull = errors.New("page full")

// outOfTime is what a page cut short by the call's time limit says.
const outOfTime = " (the page is short: the call's time limit ran out; the cursor goes on)"

func (s *server) context(ctx context.Context, a ContextArgs) (ContextResult, string, error) {
	out := ContextResult{Note: Quoted, Messages: []Message{}}
	b, limit, at, err := a.page("get_context")
	if err != nil {
		return out, "", err
	}
	from := a.Offset
	if a.Cursor != "" {
		from = at
	}
	_, rd, err := s.open(ctx, a.Session)
	if err != nil {
		return out, "", err
	}
	c, err := rd.ReadContext()
	if err != nil {
		return out, "", err
	}
	defer c.Close()
	title, _ := c.Title()
	title = cut(title, maxTitle)
	out.Session, out.Title, out.Model, out.LeafID, out.Total = c.Header().ID, title, c.Model(), c.LeafID, c.Len()
	if from < 0 {
		from = max(0, out.Total+from)
	}
	b.reserve(frame + 2*len(out.Title) + 2*len(out.Model))
	per := max(200, min(4000, b.left/8))
	var text strings.Builder
	next := ""
	k := from
	err = c.EachFrom(from, func(m *ai.Message) error {
		defer func() { k++ }()
		if len(out.Messages) == limit || len(out.Messages) > 0 && ctx.Err() != nil {
			next = cursorOf("get_context", k)
			return errPageFull
		}
		v := Message{Position: k, Role: string(m.Role), Text: cut(messageText(m), per)}
		if m.Timestamp != 0 {
			v.Time = timeText(time.UnixMilli(m.Timestamp))
		}
		line := fmt.Sprintf("[%d %s %s] %s\n", v.Position, v.Role, v.Time, v.Text)
		if !b.take(sizeOf(v) + len(line)) {
			next = cursorOf("get_context", k)
			return errPageFull
		}
		out.Messages = append(out.Messages, v)
		text.WriteString(line)
		return nil
	})
	if err != nil && !errors.Is(err, errPageFull) {
		return out, "", err
	}
	out.Budget = b.report(next)
	head := fmt.Sprintf("The context of session %s (%s), model %s: messages %d to %d of %d", out.Session, oneLine(out.Title), out.Model,
		from, from+len(out.Messages), out.Total)
	if ctx.Err() != nil && next != "" {
		head += outOfTime
	}
	return out, resultText(head, text.String(), out.Budget), nil
}

// messageText is what a message says: its text, a shell run, a
// summary, its tool calls.
func messageText(m *ai.Message) string {
	var parts []string
	add := func(s string) {
		if s != "" {
			parts = append(parts, s)
		}
	}
	add(m.Text())
	if m.Command != "" {
		add("$ " + m.Command)
	}
	add(m.Code)
	add(m.Output)
	add(m.Summary)
	for _, b := range m.ToolCalls() {
		add("→ " + b.Name + "(" + string(b.Arguments) + ")")
	}
	add(m.ErrorMessage)
	return strings.Join(parts, "\n")
}
