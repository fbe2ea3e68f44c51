package recall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/secrets"
	"github.com/xdev/xdev/internal/when"
)

// SearchArgs are search_sessions' arguments.
type SearchArgs struct {
	Query     string `json:"query" jsonschema:"what to find: words (all must match), \"exact phrases\", prefix*, OR between two terms, -excluded"`
	Harness   string `json:"harness,omitempty" jsonschema:"only this harness's sessions (the enum, from catalog.Every)"`
	Project   string `json:"project,omitempty" jsonschema:"only sessions of this project: its directory, as the session's cwd"`
	Since     string `json:"since,omitempty" jsonschema:"only entries from this time on: 30m, 12h, 7d, 2w, 2026-11-01 or an RFC 3339 time"`
	Until     string `json:"until,omitempty" jsonschema:"only entries before this time, in since's forms"`
	Role      string `json:"role,omitempty" jsonschema:"only entries of this role: user, assistant, tool, bash, summary, custom or title"`
	Subagents bool   `json:"subagents,omitempty" jsonschema:"search subagents' transcripts too"`
	InContext bool   `json:"in_context,omitempty" jsonschema:"only entries a resumed session still sends the model (on the active branch, not compacted away)"`
	Thinking  bool   `json:"thinking,omitempty" jsonschema:"search the model's thinking too"`
	Newest    bool   `json:"newest,omitempty" jsonschema:"newest first rather than best first"`
	Paging
}

// SearchResult is search_sessions' output.
type SearchResult struct {
	Note string `json:"note"`
	Hits []Hit  `json:"hits"`
	// Indexing are the harnesses whose index the call's time limit left
	// unfinished.
	Indexing []string `json:"indexing,omitempty" jsonschema:"harnesses whose sessions are still being indexed (the call's time ran out): the hits are from what is indexed so far; search again for the rest"`
	Budget   Budget   `json:"budget"`
}

// A Hit is one entry that matched.
type Hit struct {
	SessionID string `json:"session_id"`
	Harness   string `json:"harness"`
	Title     string `json:"title,omitempty"`
	// FirstMessage names an untitled session, as list_sessions does.
	FirstMessage string   `json:"first_message,omitempty" jsonschema:"the start of the session's first message, where it has no title"`
	Project      string   `json:"project,omitempty"`
	Path         string   `json:"path"`
	EntryID      string   `json:"entry_id,omitempty" jsonschema:"the entry's id: get_session's around; absent for a hit on the session's title, which is no entry"`
	Line         int      `json:"line,omitempty"`
	Time         string   `json:"time,omitempty"`
	Role         string   `json:"role"`
	Tool         string   `json:"tool,omitempty"`
	Model        string   `json:"model,omitempty"`
	InContext    bool     `json:"in_context"`
	Subagent     bool     `json:"subagent,omitempty"`
	Snippet      string   `json:"snippet"`
	AlsoIn       []string `json:"also_in,omitempty" jsonschema:"the other sessions holding the same entry: forks"`
}

// maxDepth is how deep pages of hits go.
const maxDepth = 1000

func (s *server) search(ctx context.Context, a SearchArgs) (SearchResult, string, error) {
	out := SearchResult{Note: Quoted, Hits: []Hit{}}
	if strings.TrimSpace(a.Query) == "" {
		return out, "", errors.New("query is empty: give the words to find")
	}
	b, limit, from, err := a.page("search_sessions")
	if err != nil {
		return out, "", err
	}
	if from+limit > maxDepth {
		return out, "", fmt.Errorf("pages of hits go %d deep; narrow the query instead", maxDepth)
	}
	q := catalog.Query{Text: a.Query, Cwd: a.Project, Role: a.Role, Subagents: a.Subagents, Thinking: a.Thinking,
		Newest: a.Newest, InContext: a.InContext, Limit: from + limit + 1}
	now := s.now()
	if q.Since, err = when.Parse(a.Since, now); err != nil {
		return out, "", fmt.Errorf("since: %v", err)
	}
	if q.Until, err = when.Parse(a.Until, now); err != nil {
		return out, "", fmt.Errorf("until: %v", err)
	}
	if a.Role != "" && !slices.Contains(catalog.Roles, a.Role) {
		return out, "", fmt.Errorf("role is one of %s, not %q", strings.Join(catalog.Roles, ", "), a.Role)
	}
	if err := checkHarness(a.Harness); err != nil {
		return out, "", err
	}
	var hits []catalog.Hit
	refresh, cancel := s.refreshWithin(ctx)
	defer cancel()
	keep := func(p catalog.SearchPlace) bool { return a.Harness == "" || string(p.Harness) == a.Harness }
	err = s.ix.use(ctx, refresh, func(ix *catalog.Indexes, stale []catalog.SearchPlace) error {
		for _, p := range stale {
			if keep(p) {
				out.Indexing = append(out.Indexing, string(p.Harness))
			}
		}
		var err error
		hits, err = ix.SearchIn(ctx, q, keep)
		return err
	})
	if err != nil {
		return out, "", err
	}
	b.reserve(frame + sizeOf(out))
	var text strings.Builder
	next := ""
	for i := from; i < len(hits); i++ {
		if i == from+limit {
			next = cursorOf("search_sessions", i)
			break
		}
		h := hits[i]
		v := Hit{SessionID: h.SessionID, Harness: h.Harness, Title: h.Title, FirstMessage: cut(oneLine(h.FirstMessage), 200), Project: secrets.Mask(h.Cwd), Path: secrets.Mask(h.Path), EntryID: h.EntryID,
			Line: h.Line, Time: timeText(h.Timestamp), Role: h.Role, Tool: h.Tool, Model: h.Model, InContext: h.InContext,
			Subagent: h.Subagent, Snippet: h.Snippet, AlsoIn: h.AlsoIn}
		line := hitText(&v)
		if !b.take(sizeOf(v) + len(line)) {
			next = cursorOf("search_sessions", i)
			break
		}
		out.Hits = append(out.Hits, v)
		text.WriteString(line)
	}
	out.Budget = b.report(next)
	head := fmt.Sprintf("%d hits", len(out.Hits))
	if len(out.Indexing) > 0 {
		head += fmt.Sprintf(" (the sessions of %s are still being indexed, a first index of many sessions taking longer than a call may: "+
			"these hits are from what is indexed so far; search again for the rest)", strings.Join(out.Indexing, ", "))
	}
	return out, resultText(head, text.String(), out.Budget), nil
}

func checkHarness(h string) error {
	if h == "" || slices.Contains(catalog.Every, catalog.Harness(h)) {
		return nil
	}
	var names []string
	for _, e := range catalog.Every {
		names = append(names, string(e))
	}
	return fmt.Errorf("harness is one of %s, not %q", strings.Join(names, ", "), h)
}

func hitText(h *Hit) string {
	title := h.Title
	if title == "" {
		title = h.FirstMessage
	}
	if title == "" {
		title = "(untitled)"
	}
	if h.EntryID == "" {
		// A hit on the session's title, which is no entry (the slot, a
		// header): the session is read from its start.
		return fmt.Sprintf("- %s · %s · %s\n  session %s, its title (get_session with no around reads it from the start): %s\n",
			h.Harness, oneLine(title), h.Project, h.SessionID, oneLine(h.Snippet))
	}
	return fmt.Sprintf("- %s · %s · %s\n  session %s, entry %s (%s, %s): %s\n", h.Harness, oneLine(title), h.Project,
		h.SessionID, h.EntryID, h.Role, h.Time, oneLine(h.Snippet))
}

// resultText is a result as a person (or a model) reads it: the note
// that it is quoted, what it holds, and how to page on.
func resultText(head, body string, b Budget) string {
	var sb strings.Builder
	sb.WriteString(Quoted + "\n" + head + "\n" + body)
	if b.NextCursor != "" {
		fmt.Fprintf(&sb, "More: call again with cursor %q.\n", b.NextCursor)
	}
	return sb.String()
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// oneLine keeps a text on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// sizeOf is the bytes v takes as JSON.
func sizeOf(v any) int {
	b, _ := json.Marshal(v)
	return len(b)
}
