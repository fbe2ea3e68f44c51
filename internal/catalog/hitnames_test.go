package catalog_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/search"
	"github.com/xdev/xdev/internal/session"
	"github.com/xdev/xdev/internal/testplace"
)

// TestHitsNameSessionsAsTheListDoes: every hit of searches over every
// harness's real sessions and untitled sessions of the data dir names
// its session as the list does: the list's title, and where there is
// none the list's first message. (Hits of untitled sessions all read
// "(untitled)", and a Claude Code hit showed the conversion's title, not
// the list's.)
func TestHitsNameSessionsAsTheListDoes(t *testing.T) {
	p := testplace.New(t)
	testplace.CopyRealFixtures(t, p.Roots)
	for k := range 3 {
		path := filepath.Join(session.SessionsDir(p.Data), "-w", fmt.Sprintf("2026-01-0%dT00-00-00-000Z_u%d.jsonl", k+1, k))
		s, err := session.Create(path, session.NewOptions{Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		s.AppendJSON([]byte(fmt.Sprintf(`{"type":"message","message":{"role":"user","content":"untitled number %d asks about the file","timestamp":1}}`, k)))
		s.Close()
	}
	c := p.Catalog(t)
	rows, _ := catalog.ListPlaces(t.Context(), c.Places(catalog.Every), catalog.ListOptions{Subagents: true})
	byPath := map[string]catalog.Row{}
	for _, r := range rows {
		byPath[r.Path] = r
	}
	ix := openEveryIndex(t, c)
	checked := map[string]bool{}
	for _, word := range []string{"file", "the", "untitled", "a", "code", "test"} {
		hits, err := ix.Search(t.Context(), search.Query{Text: word, Limit: 500, Subagents: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			r, ok := byPath[h.Path]
			if !ok || checked[h.Path] {
				continue // a session the list does not show (a subagent's file, say)
			}
			checked[h.Path] = true
			want := [2]string{r.Title, ""}
			if r.Title == "" {
				want[1] = r.FirstMessage
			}
			if got := [2]string{h.Title, h.FirstMessage}; got != want {
				t.Errorf("%s hit %s: title %q, first message %q; the list: %q, %q", h.Harness, h.Path, got[0], got[1], want[0], want[1])
			}
		}
	}
	harnesses := map[string]bool{}
	untitled := 0
	for path := range checked {
		harnesses[string(byPath[path].Harness)] = true
		if byPath[path].Title == "" {
			untitled++
		}
	}
	if len(harnesses) < 4 || untitled < 3 {
		t.Errorf("the searches reached %d harnesses and %d untitled sessions: too few to say anything", len(harnesses), untitled)
	}
}
