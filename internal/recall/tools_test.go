package recall

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/corpus"
)

// TestToolsListed: the five tools, each read-only, each with an input
// and an output schema.
func TestToolsListed(t *testing.T) {
	m := newMachine(t)
	res, err := m.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("%s is not marked read-only", tool.Name)
		}
		if tool.InputSchema == nil || tool.OutputSchema == nil || tool.Description == "" {
			t.Errorf("%s lacks a schema or a description", tool.Name)
		}
	}
	slices.Sort(names)
	if want := []string{"get_context", "get_session", "list_sessions", "search_sessions", "usage_summary"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

// TestToolsAnswer calls every tool as an agent would, on a generated
// data dir and every harness's real fixtures, and follows one answer to
// the next: a search's hit to its session around the entry, a listing's
// session to its context, and the ledger.
func TestToolsAnswer(t *testing.T) {
	m := newMachine(t)

	harnesses := map[string]int{}
	first := map[string]Session{} // each harness's newest session
	bases := map[string]int{}     // how many sessions have each file name
	cursor := ""
	for {
		var page ListResult
		m.must(t, "list_sessions", map[string]any{"limit": 100, "max_tokens": MaxTokens, "cursor": cursor}, &page)
		for _, s := range page.Sessions {
			bases[filepath.Base(s.Path)]++
			if harnesses[s.Harness]++; harnesses[s.Harness] == 1 {
				first[s.Harness] = s
			}
		}
		if cursor = page.Budget.NextCursor; cursor == "" {
			break
		}
	}
	for _, h := range []string{"xdev", "claude", "codex", "pi", "opencode", "copilot", "gemini"} {
		if harnesses[h] == 0 {
			t.Errorf("list_sessions lists no %s session: %v", h, harnesses)
		}
	}
	if harnesses["xdev"] != generated {
		t.Errorf("%d of the data dir's %d sessions listed", harnesses["xdev"], generated)
	}
	// Every harness's real session, named each way a person names one:
	// its path, its file name (where it is its own: Copilot CLI's are all
	// events.jsonl, which the catalog calls ambiguous), its id and a
	// prefix of it; each gives the same session, its entries and its
	// context.
	for h, s := range first {
		names := []string{s.Path, s.ID, s.ID[:min(len(s.ID), 12)]}
		if base := filepath.Base(s.Path); strings.HasSuffix(base, ".jsonl") && bases[base] == 1 {
			names = append(names, base)
		}
		for _, name := range names {
			var r SessionResult
			res, err := m.call(t, "get_session", map[string]any{"session": name, "limit": 3, "no_cost": true})
			if err != nil {
				t.Errorf("%s: get_session %q: %v", h, name, err)
				continue
			}
			decode(t, res, &r)
			if r.Summary.Harness != h || r.Summary.Entries == 0 || len(r.Entries) == 0 || r.Summary.Path != s.Path {
				t.Errorf("%s: get_session %q: %+v, %d entries", h, name, r.Summary, len(r.Entries))
			}
			// The command that resumes it where it was made names it, or
			// a note says why there is none.
			if res := r.Summary.Resume; (res == "") == (r.Summary.ResumeNote == "") ||
				res != "" && !strings.Contains(res, r.Summary.ID) && !strings.Contains(res, filepath.Base(s.Path)) {
				t.Errorf("%s: get_session %q: resume %q (%q)", h, name, res, r.Summary.ResumeNote)
			}
			if h == "claude" && !strings.Contains(r.Summary.Resume, "claude --resume "+r.Summary.ID) {
				t.Errorf("claude: get_session %q: resume %q", name, r.Summary.Resume)
			}
		}
		var c ContextResult
		if res, err := m.call(t, "get_context", map[string]any{"session": s.Path, "limit": 2}); err != nil {
			t.Errorf("%s: get_context: %v", h, err)
		} else if decode(t, res, &c); (c.Total == 0 || len(c.Messages) == 0) && h != "goose" { // Goose's one real session has no message
			t.Errorf("%s: get_context of %s: %d messages", h, s.Path, c.Total)
		}
	}

	var claude ListResult
	m.must(t, "list_sessions", map[string]any{"harness": "claude"}, &claude)
	if len(claude.Sessions) == 0 || slices.ContainsFunc(claude.Sessions, func(s Session) bool { return s.Harness != "claude" }) {
		t.Errorf("harness=claude lists %v", claude.Sessions)
	}

	// A word of the generated sessions, and one of a Claude Code fixture.
	for _, tc := range []struct {
		args    map[string]any
		harness string
	}{
		{map[string]any{"query": corpus.Vocabulary(3)}, "xdev"},
		{map[string]any{"query": "CLAUDE.md", "harness": "claude"}, "claude"},
		{map[string]any{"query": corpus.Vocabulary(3), "role": "user", "in_context": true, "newest": true}, "xdev"},
	} {
		var r SearchResult
		text := m.must(t, "search_sessions", tc.args, &r)
		if len(r.Hits) == 0 {
			t.Fatalf("search %v: no hits", tc.args)
		}
		if r.Note != Quoted || !strings.HasPrefix(text, Quoted) {
			t.Errorf("search %v: not marked as quoted", tc.args)
		}
		for _, h := range r.Hits {
			if h.Harness != tc.harness || h.SessionID == "" || h.Path == "" || h.Snippet == "" {
				t.Errorf("search %v: hit %+v", tc.args, h)
			}
			if tc.args["role"] == "user" && (h.Role != "user" || !h.InContext) {
				t.Errorf("search %v: hit of role %s, in context %v", tc.args, h.Role, h.InContext)
			}
		}
		// The hit's session, around the entry.
		h := r.Hits[0]
		var s SessionResult
		m.must(t, "get_session", map[string]any{"session": h.Path, "around": h.EntryID, "limit": 5}, &s)
		if !slices.ContainsFunc(s.Entries, func(e Entry) bool { return e.ID == h.EntryID }) {
			t.Errorf("get_session around %s: %v", h.EntryID, s.Entries)
		}
		if s.Summary.Entries == 0 || s.Summary.Harness != tc.harness {
			t.Errorf("get_session summary %+v", s.Summary)
		}
	}

	// A generated session by an id prefix: its summary, cost and pages.
	var xdev ListResult
	m.must(t, "list_sessions", map[string]any{"harness": "xdev", "limit": 1}, &xdev)
	id := xdev.Sessions[0].ID
	var s SessionResult
	m.must(t, "get_session", map[string]any{"session": id[:8], "limit": 3}, &s)
	if s.Summary.ID != id || s.Summary.Cost == nil || *s.Summary.Cost <= 0 || len(s.Summary.Models) == 0 || len(s.Entries) != 3 {
		t.Errorf("get_session %s: %+v, %d entries", id[:8], s.Summary, len(s.Entries))
	}
	var next SessionResult
	m.must(t, "get_session", map[string]any{"session": id, "limit": 3, "cursor": s.Budget.NextCursor, "no_cost": true}, &next)
	if len(next.Entries) == 0 || next.Entries[0].Position != 3 || next.Summary.Cost != nil {
		t.Errorf("the next page starts at %v (cost %v)", next.Entries, next.Summary.Cost)
	}
	var last SessionResult
	m.must(t, "get_session", map[string]any{"session": id, "offset": -2, "no_cost": true, "roles": []string{"assistant", "tool", "user"}}, &last)
	if len(last.Entries) == 0 || last.Entries[len(last.Entries)-1].Position != s.Summary.Entries-1 {
		t.Errorf("offset -2: %v of %d", last.Entries, s.Summary.Entries)
	}

	var c ContextResult
	m.must(t, "get_context", map[string]any{"session": id, "limit": 4}, &c)
	if c.Total == 0 || len(c.Messages) == 0 || c.Session != id || c.Messages[0].Position != 0 {
		t.Errorf("get_context: %d of %d, session %s", len(c.Messages), c.Total, c.Session)
	}
	var cl ContextResult
	m.must(t, "get_context", map[string]any{"session": id, "offset": -1}, &cl)
	if len(cl.Messages) != 1 || cl.Messages[0].Position != c.Total-1 {
		t.Errorf("get_context offset -1: %v of %d", cl.Messages, c.Total)
	}

	for _, by := range []string{"daily", "model", "session", "harness", "project", "monthly"} {
		var u UsageResult
		m.must(t, "usage_summary", map[string]any{"by": by, "limit": 100}, &u)
		if len(u.Rows) == 0 || u.Total.Cost <= 0 || u.Total.Calls == 0 {
			t.Errorf("usage by %s: %d rows, total %+v", by, len(u.Rows), u.Total)
		}
		sum := 0.0
		for _, r := range u.Rows {
			sum += r.Cost
		}
		if d := sum - u.Total.Cost; len(u.Budget.NextCursor) == 0 && (d > 1e-6 || d < -1e-6) {
			t.Errorf("usage by %s: rows sum to %f, total %f", by, sum, u.Total.Cost)
		}
	}
}

// TestBadArguments: every wrong argument is a tool error that says what
// was wrong, and the server answers the next call.
func TestBadArguments(t *testing.T) {
	m := newMachine(t)
	var list ListResult
	m.must(t, "list_sessions", map[string]any{"limit": 1}, &list)
	listCursor := cursorOf("list_sessions", 1)
	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{"search_sessions", map[string]any{}, "query"},
		{"search_sessions", map[string]any{"query": "  "}, "query is empty"},
		{"search_sessions", map[string]any{"query": 5}, "query"},
		{"search_sessions", map[string]any{"query": "a", "harness": "nope"}, "harness: enum: nope does not equal any of: [xdev omp claude"},
		{"search_sessions", map[string]any{"query": "a", "since": "yesterday"}, "since"},
		{"search_sessions", map[string]any{"query": "a", "until": "soon"}, "until"},
		{"search_sessions", map[string]any{"query": "a", "limit": 1000}, "limit is from 1"},
		{"search_sessions", map[string]any{"query": "a", "limit": -1}, "limit is from 1"},
		{"search_sessions", map[string]any{"query": "a", "max_tokens": 10}, "max_tokens"},
		{"search_sessions", map[string]any{"query": "a", "cursor": "garbage!"}, "not one this server gave"},
		{"search_sessions", map[string]any{"query": "a", "cursor": listCursor}, "list_sessions's"},
		{"search_sessions", map[string]any{"query": "a", "role": "robot"}, "role is one of"},
		{"search_sessions", map[string]any{"query": `"unterminated`}, "query"},
		{"search_sessions", map[string]any{"query": "a", "extra": 1}, "extra"},
		{"list_sessions", map[string]any{"since": "7x"}, "since"},
		{"list_sessions", map[string]any{"harness": "xdevv"}, "harness: enum: xdevv"},
		{"list_sessions", map[string]any{"subagents": "yes"}, "subagents"},
		{"get_session", map[string]any{}, "session"},
		{"get_session", map[string]any{"session": ""}, "session is empty"},
		{"get_session", map[string]any{"session": "no-such-session"}, "no-such-session"},
		{"get_session", map[string]any{"session": list.Sessions[0].ID, "around": "nope"}, "no entry"},
		{"get_session", map[string]any{"session": list.Sessions[0].ID, "roles": []string{"robot"}}, "roles"},
		{"get_session", map[string]any{"session": list.Sessions[0].ID, "around": "x", "cursor": cursorOf("get_session", 2)}, "give one"},
		{"get_session", map[string]any{"session": "/etc/passwd"}, "passwd"},
		{"get_context", map[string]any{"session": "no-such-session"}, "no-such-session"},
		{"get_context", map[string]any{"session": list.Sessions[0].ID, "cursor": cursorOf("get_session", 2)}, "get_session's"},
		{"usage_summary", map[string]any{"by": "hourly"}, "by"},
		{"usage_summary", map[string]any{"since": "1x"}, "since"},
		{"no_such_tool", map[string]any{}, "no_such_tool"},
	} {
		_, err := m.call(t, tc.tool, tc.args)
		if err == nil {
			t.Errorf("%s %v: no error", tc.tool, tc.args)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: %q, want it to say %q", tc.tool, tc.args, err, tc.want)
		}
		var again ListResult
		m.must(t, "list_sessions", map[string]any{"limit": 1}, &again)
	}
}

// TestResultsBounded: whatever a call asks, its result (the text and the
// structured content together) is within its max_tokens at 4 bytes a
// token; and a search paged by its cursors, however small the pages,
// gives the hits one page gives, in order.
func TestResultsBounded(t *testing.T) {
	m := newMachine(t)
	var list ListResult
	m.must(t, "list_sessions", map[string]any{"limit": 100, "subagents": true}, &list)
	r := rand.New(rand.NewPCG(5, 5))
	sessions := func() string { return list.Sessions[r.IntN(len(list.Sessions))].Path }
	for i := range 120 {
		budget := MinTokens + r.IntN(3000)
		if i%10 == 0 {
			budget = MaxTokens
		}
		var tool string
		var args map[string]any
		switch i % 5 {
		case 0:
			tool, args = "search_sessions", map[string]any{"query": corpus.Vocabulary(r.IntN(20)), "thinking": r.IntN(2) == 0}
		case 1:
			tool, args = "list_sessions", map[string]any{"subagents": true}
		case 2:
			tool, args = "get_session", map[string]any{"session": sessions(), "offset": r.IntN(50), "no_cost": r.IntN(2) == 0}
		case 3:
			tool, args = "get_context", map[string]any{"session": sessions()}
		default:
			tool, args = "usage_summary", map[string]any{"by": []string{"daily", "session", "model"}[r.IntN(3)]}
		}
		args["max_tokens"], args["limit"] = budget, 1+r.IntN(100)
		m.callBounded(t, tool, args, budget)
	}

	word := corpus.Vocabulary(1)
	var whole SearchResult
	m.must(t, "search_sessions", map[string]any{"query": word, "limit": 100, "max_tokens": MaxTokens}, &whole)
	var paged []Hit
	cursor := ""
	for range 200 {
		var p SearchResult
		m.must(t, "search_sessions", map[string]any{"query": word, "limit": 7, "max_tokens": MinTokens, "cursor": cursor}, &p)
		paged = append(paged, p.Hits...)
		if cursor = p.Budget.NextCursor; cursor == "" || len(paged) >= len(whole.Hits) {
			break
		}
	}
	key := func(h Hit) string { return fmt.Sprint(h.Path, h.EntryID) }
	if len(whole.Hits) == 0 || !slices.EqualFunc(paged[:min(len(paged), len(whole.Hits))], whole.Hits, func(a, b Hit) bool { return key(a) == key(b) }) {
		t.Errorf("paged: %d hits, one page %d; not the same", len(paged), len(whole.Hits))
	}
}

// TestEverySessionBounded: get_session and get_context of every session
// the server lists, subagents and all, at the least budget and at random
// ones, stay within it: a summary with many subagents or a long path
// gives up its links and cuts its texts, never the bound.
func TestEverySessionBounded(t *testing.T) {
	m := newMachine(t)
	var all []Session
	for cursor := ""; ; {
		var list ListResult
		m.must(t, "list_sessions", map[string]any{"limit": 100, "subagents": true, "cursor": cursor, "max_tokens": MaxTokens}, &list)
		all = append(all, list.Sessions...)
		if cursor = list.Budget.NextCursor; cursor == "" {
			break
		}
	}
	r := rand.New(rand.NewPCG(7, 7))
	for i, s := range all {
		budget := MinTokens
		if i%2 == 1 {
			budget += r.IntN(1500)
		}
		for _, tool := range []string{"get_session", "get_context"} {
			args := map[string]any{"session": s.Path, "offset": r.IntN(40) - 10, "limit": 1 + r.IntN(60), "max_tokens": budget}
			if tool == "get_session" {
				args["no_cost"] = i%3 != 0
			}
			m.callBounded(t, tool, args, budget)
		}
	}
	if len(all) < generated {
		t.Fatalf("%d sessions listed", len(all))
	}
}

// TestOnlyItsPlaces: a session named by path is read only where the
// server reads sessions (the data dir, every harness's directory) or
// under a directory --allow names: copies of a served session put
// elsewhere on the machine, named by absolute path, by a path through
// "..", through a symbolic link, are refused by get_session and
// get_context alike, and read once allowed; the originals always are.
func TestOnlyItsPlaces(t *testing.T) {
	allowed := t.TempDir()
	m := newMachineWith(t, func(o *Options) { o.Allow = []string{allowed} })
	var list ListResult
	m.must(t, "list_sessions", map[string]any{"limit": 5, "harness": "xdev"}, &list)
	outside := t.TempDir()
	var refused, served []string
	for i, s := range list.Sessions {
		b, err := os.ReadFile(s.Path)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("copy%d.jsonl", i)
		for _, dir := range []string{outside, filepath.Join(m.Home, "elsewhere"), allowed} {
			os.MkdirAll(dir, 0o700)
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		link := filepath.Join(outside, "link"+name)
		os.Symlink(filepath.Join(m.Home, "elsewhere", name), link)
		rel, _ := filepath.Rel(filepath.Dir(s.Path), filepath.Join(outside, name))
		refused = append(refused, filepath.Join(outside, name), filepath.Join(m.Home, "elsewhere", name), link,
			filepath.Dir(s.Path)+string(filepath.Separator)+rel)
		served = append(served, s.Path, filepath.Join(allowed, name))
	}
	for _, tool := range []string{"get_session", "get_context"} {
		for _, p := range refused {
			if _, err := m.call(t, tool, map[string]any{"session": p}); err == nil || !strings.Contains(err.Error(), "not in the places") {
				t.Errorf("%s %s: %v, want a refusal", tool, p, err)
			}
		}
		for _, p := range served {
			if _, err := m.call(t, tool, map[string]any{"session": p}); err != nil {
				t.Errorf("%s %s: %v", tool, p, err)
			}
		}
	}
}

// TestEveryHarnessNamed: the tools' harness arguments take, and the
// server's instructions name, every harness of the catalog: the schema's
// enum comes from catalog.Every, never a list written in a tag.
func TestEveryHarnessNamed(t *testing.T) {
	for name, schema := range map[string]*jsonschema.Schema{"search_sessions": inputSchema[SearchArgs](),
		"list_sessions": inputSchema[ListArgs](), "usage_summary": inputSchema[UsageArgs]()} {
		p := schema.Properties["harness"]
		if p == nil {
			t.Fatalf("%s has no harness argument", name)
		}
		if len(p.Enum) != len(catalog.Every) {
			t.Errorf("%s's harness takes %v, want every one of %v", name, p.Enum, catalog.Every)
		}
		for i, h := range catalog.Every {
			if i < len(p.Enum) && p.Enum[i] != string(h) {
				t.Errorf("%s's harness enum[%d] = %v, want %s", name, i, p.Enum[i], h)
			}
			if !strings.Contains(p.Description, h.Name()) {
				t.Errorf("%s's harness description does not name %s: %s", name, h.Name(), p.Description)
			}
		}
	}
	for _, h := range catalog.Every {
		if !strings.Contains(Instructions, h.Name()) {
			t.Errorf("the instructions do not name %s", h.Name())
		}
	}
}

// callBounded calls tool and checks that what it returns, its text and
// its structured content together, is within budget tokens.
func (m *machine) callBounded(t *testing.T, tool string, args map[string]any, budget int) {
	t.Helper()
	res, err := m.call(t, tool, args)
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	structured, _ := json.Marshal(res.StructuredContent)
	if n := len(textOf(res)) + len(structured); n > budget*bytesPerToken {
		t.Errorf("%s %v: %d bytes, over %d tokens", tool, args, n, budget)
	}
}
