package catalog

import (
	"context"
	"sync"
	"testing"

	"github.com/xdev/xdev/internal/foreign"
)

// countingSource is a fake source that counts its listings, by whether
// subagents' sessions were asked for.
type countingSource struct {
	fakeSource
	mu    *sync.Mutex
	lists map[bool]int
}

func (s countingSource) List(subagents bool) ([]foreign.Session, error) {
	s.mu.Lock()
	s.lists[subagents]++
	s.mu.Unlock()
	return s.fakeSource.List(subagents)
}

// TestListOnce: a catalog for one command (Config.ListOnce) lists a
// harness once for each kind of listing, however many of its parts want
// it (the projects Crush and Aider are looked for in, a mirror's refresh,
// Resolve, List); a long-lived one lists anew each time.
func TestListOnce(t *testing.T) {
	for _, once := range []bool{true, false} {
		src := countingSource{fakeSource{"claude", t.TempDir(), []foreign.Session{
			{Harness: "claude", ID: "a", Path: "/fake/a.jsonl", Cwd: "/work/a"},
			{Harness: "claude", ID: "b", Path: "/fake/b.jsonl", Cwd: "/work/b", Subagent: true},
		}}, &sync.Mutex{}, map[bool]int{}}
		c, err := New(Config{DataDir: t.TempDir(), ListOnce: once,
			Sources: map[Harness]foreign.Source{Claude: src, Codex: fakeSource{}, Pi: fakeSource{}}})
		if err != nil {
			t.Fatal(err)
		}
		m, err := c.mirror(Claude)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if cwds := c.listedCwds(Claude); len(cwds) == 0 || once && len(cwds) != 2 { // a subagent's in with ListOnce
				t.Errorf("once=%v: the working directories %v", once, cwds)
			}
			c.projectDirs = projectDirs{} // as though none were noted
			if list, err := m.Listing(); err != nil || len(list) != 2 {
				t.Errorf("once=%v: the mirror's listing %v, %v", once, list, err)
			}
			if rows, err := c.Place(Claude).List(context.Background(), ListOptions{}); err != nil || len(rows) != 1 {
				t.Errorf("once=%v: the listing %v, %v", once, rows, err)
			}
			c.Resolve("a")
		}
		switch {
		case once && (src.lists[true] != 1 || src.lists[false] != 1):
			t.Errorf("listed %v times, want once each", src.lists)
		case !once && (src.lists[true] < 6 || src.lists[false] < 3):
			t.Errorf("not once: listed %v times, want each time", src.lists)
		}
	}
}
