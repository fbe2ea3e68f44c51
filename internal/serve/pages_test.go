package serve

import (
	"fmt"
	"html"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/secrets"
	"github.com/xdev/xdev/internal/session"
)

// TestPageQueries: what each page's filters and windows keep, as the
// HTML holds it: the sessions list by harness, project, text, status,
// time and page; search by role, project, tool and an unreadable query;
// a session's windows, entries by id, branches and its commands.
func TestPageQueries(t *testing.T) {
	p := newPlace(t)
	for i := range 60 {
		p.newSession(t, fmt.Sprintf("/w/proj%d", i%3), fmt.Sprintf("Listed %02d", i), "hello", "world")
	}
	branchy, s := p.newSession(t, "/w/tree", "Branchy", "first question about pelicans", "first answer")
	fork := s.LeafID()
	for i := range 150 {
		appendText(t, s, i%2 == 0, fmt.Sprintf("turn %d", i))
	}
	if _, err := s.Branch(fork); err != nil {
		t.Fatal(err)
	}
	other := appendText(t, s, true, "the other branch")
	s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.BlockContent(ai.Text("calling"),
		ai.Block{Type: ai.BlockToolCall, ID: "c1", Name: "grep", Arguments: []byte(`{"pattern":"pelican"}`)}),
		StopReason: ai.StopToolUse, Timestamp: time.Now().UnixMilli()})
	s.AppendMessage(ai.Message{Role: ai.RoleToolResult, ToolCallID: "c1", ToolName: "grep", Content: ai.TextContent("pelican found"),
		Timestamp: time.Now().UnixMilli()})
	srv := p.serve(t)
	key := srv.keyOf(t, branchy)

	// "turn 149" ends the first branch, which is no longer the current one.
	x, err := session.OpenIndex(branchy, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	var off string
	for i := range x.Len() {
		if e, _ := x.Entry(i); e != nil {
			if m, ok := e.Body.(*session.Message); ok && m.Message.Content.Text() == "turn 149" {
				off = e.ID
			}
		}
	}
	count := func(body, s string) int { return strings.Count(body, s) }
	rows := func(body string) int { return count(body, `<tr class="d`) }
	for _, c := range []struct {
		path string
		ok   func(string) bool
		what string
	}{
		{"/", func(b string) bool { return rows(b) == perPage && strings.Contains(b, "page 1 of 2") }, "a first page of 50"},
		{"/?page=2", func(b string) bool { return rows(b) == 11 }, "the rest on the second"},
		{"/?page=99", func(b string) bool { return rows(b) == 11 }, "a page past the end is the last"},
		{"/?page=-3", func(b string) bool { return rows(b) == perPage }, "a page before the first is the first"},
		{"/?project=proj1", func(b string) bool { return rows(b) == 20 }, "by project"},
		{"/?q=listed+0", func(b string) bool { return rows(b) == 10 }, "by text"},
		{"/?q=LISTED+05", func(b string) bool { return rows(b) == 1 }, "by text, any case"},
		{"/?harness=claude", func(b string) bool { return rows(b) == 0 && strings.Contains(b, "match these filters") }, "by harness"},
		{"/?status=error", func(b string) bool { return rows(b) == 0 }, "by status"},
		{"/?since=1d", func(b string) bool { return rows(b) == perPage }, "by time"},
		{"/search?q=pelicans", func(b string) bool { return count(b, `class="nav-item hit"`) == 1 }, "search"},
		{"/search?q=pelican*&role=tool", func(b string) bool {
			return count(b, `class="nav-item hit"`) >= 1 && !strings.Contains(b, "first question")
		}, "search by role"},
		{"/search?q=pelicans&project=/w/nowhere", func(b string) bool { return strings.Contains(b, "No hits.") }, "search by project"},
		{"/search?q=pelican*&tool=grep", func(b string) bool { return count(b, `class="nav-item hit"`) >= 1 }, "search by tool"},
		{"/search?q=%22unclosed", func(b string) bool { return strings.Contains(b, `class="error"`) }, "an unreadable query"},
		{"/search?q=pelicans&fragment=1", func(b string) bool { return !strings.Contains(b, "<html") && strings.Contains(b, "hit") }, "the result list alone"},
		{"/s/" + key, func(b string) bool {
			return strings.Contains(b, "data-live") && strings.Contains(b, `id="e-`+other.ID+`"`) && strings.Contains(b, "2 branches")
		}, "the newest window, live, with both branches"},
		{"/s/" + key + "?leaf=" + url.QueryEscape(fork), func(b string) bool { return strings.Contains(b, "data-live") && !strings.Contains(b, "turn 149") }, "the branch at a leaf"},
		{"/s/" + key + "?from=0&leaf=" + off, func(b string) bool { return !strings.Contains(b, "data-live") && strings.Contains(b, "newer ▶") }, "the first window of the long branch"},
		{"/s/" + key + "?at=nonesuch", func(b string) bool { return strings.Contains(b, "is not in this session") }, "an unknown entry"},
		{"/s/" + key, func(b string) bool {
			return strings.Contains(b, "omp --resume "+branchy) && strings.Contains(b, "xdev fork --at ")
		}, "the commands to copy"},
		{"/usage", func(b string) bool { return strings.Contains(b, "model calls") }, "usage"},
		{"/api/status", func(b string) bool {
			return strings.Contains(b, `"ready":true`) && strings.Contains(b, `"sessions":61`)
		}, "status"},
	} {
		code, body := srv.get(t, c.path)
		if code != 200 || !c.ok(body) {
			t.Errorf("%s (%s): %d, not as expected", c.path, c.what, code)
		}
	}
	// An entry on another branch than the current: its branch is shown,
	// and said to be another.
	if _, b := srv.get(t, "/s/"+key+"?at="+off); !strings.Contains(b, "on another branch") || !strings.Contains(b, `id="e-`+off+`"`) {
		t.Error("an entry on another branch: its branch is not shown")
	}
	if code, _ := srv.get(t, "/s/0000000000/"); code != 404 {
		t.Errorf("an unknown key: %d", code)
	}
}

// TestPagesOfferTheResume: a session's page of every harness offers the
// command that resumes it where it was made, in its directory (the one
// MCP's get_session gives: catalog.ResumeOf), and another harness's
// offers xdev's import beside it.
func TestPagesOfferTheResume(t *testing.T) {
	p := newPlace(t)
	p.withRealFixtures(t)
	p.newSession(t, "/w/mine", "Mine", "hello", "world")
	srv := p.serve(t)
	seen := map[catalog.Harness]bool{}
	for _, e := range srv.lib.Load().rows {
		if seen[e.Harness] || e.Subagent {
			continue
		}
		seen[e.Harness] = true
		_, body := srv.get(t, "/s/"+e.key)
		x := catalog.ResumeOf(e.Row)
		if line := secrets.Mask(x.Shell()); line != "" && !strings.Contains(body, html.EscapeString(line)) {
			t.Errorf("%s: the page does not offer %q", e.Harness, line)
		}
		if e.Harness.Converted() && !strings.Contains(body, "xdev import ") {
			t.Errorf("%s: the page does not offer its import", e.Harness)
		}
	}
	if !seen[catalog.Xdev] || !seen[catalog.Claude] || !seen[catalog.Codex] || !seen[catalog.Gemini] {
		t.Errorf("pages of %v only", seen)
	}
}
