package serve

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/usage"
)

// cliUsage builds a ledger as `xdev usage` does (every harness, the
// usage cache), from a catalog of its own, and returns its totals and
// stats; walk leaves the server out (a ledger read anew from the files,
// with no cache).
func cliUsage(t *testing.T, p *place, walk bool) (string, catalog.UsageStats) {
	t.Helper()
	c, err := catalog.New(catalog.Config{DataDir: p.data, Cwd: p.home, Roots: p.roots})
	if err != nil {
		t.Fatal(err)
	}
	opts := catalog.UsageOptions{Harnesses: catalog.Every, Cache: filepath.Join(p.cache, "usage")}
	if walk {
		opts.Cache = ""
	}
	l, st, err := c.Usage(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := l.Groups(usage.Prices())
	if err != nil {
		t.Fatal(err)
	}
	var tk usage.Tokens
	calls, cost := 0, [3]float64{}
	for _, g := range groups {
		tk.Add(g.Tokens)
		calls += g.Calls
		for k := range cost {
			cost[k] += g.Cost[k]
		}
	}
	return fmt.Sprintf("%d sessions, %d calls, %+v, $%.9f", len(l.Sessions()), calls, tk, cost), st
}

// TestUsageFromLiveServer: while a server runs, `xdev usage` takes every
// session of every harness (the real fixtures too) from the cache it
// vouches for, with no walk once what was written has settled, and
// counts a call appended a moment ago (no wait: it asks the server,
// which rebuilds the ledger before it answers); with the server gone it
// walks again. Every time, the totals are those of a walk of the files.
func TestUsageFromLiveServer(t *testing.T) {
	p := newPlace(t)
	p.withRealFixtures(t)
	_, s := p.newSession(t, "/w/cost", "Costly", "what does this cost", "a lot")
	srv := p.serve(t)
	check := func(what string, wantWalked bool) {
		t.Helper()
		got, st := cliUsage(t, p, false)
		want, _ := cliUsage(t, p, true)
		if !st.Live {
			t.Fatalf("%s: not live with the server running", what)
		}
		if got != want {
			t.Fatalf("%s: from the server's cache %s; from the files %s", what, got, want)
		}
		if walked := len(st.Walked) > 0; walked != wantWalked {
			t.Errorf("%s: walked %v", what, st.Walked)
		}
	}
	waitSettled := func() {
		t.Helper()
		time.Sleep(settledAfter)
		deadline := time.Now().Add(10 * time.Second)
		for srv.use.Load().racy > 0 {
			if time.Now().After(deadline) {
				t.Fatal("the server's ledger did not settle")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitSettled()
	check("at rest", false)
	for i := range 5 {
		m := ai.Message{Role: ai.RoleAssistant, Content: ai.BlockContent(ai.Text("more")), StopReason: ai.StopEnd,
			Model: "claude-sonnet-4-5", Provider: "anthropic", Timestamp: time.Now().UnixMilli(),
			Usage: &ai.Usage{Input: int64(100 + i), Output: 7, TotalTokens: int64(107 + i)}}
		if _, err := s.AppendMessage(m); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("after append %d", i), true) // the session written a moment ago is read, with its harness
	}
	waitSettled()
	check("settled", false)
	srv.Close()
	if _, st := cliUsage(t, p, false); st.Live || len(st.Walked) != len(catalog.Every) {
		t.Fatalf("without the server: live %v, walked %v", st.Live, st.Walked)
	}
}
