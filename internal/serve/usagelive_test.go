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
// walks again. And with nobody looking at usage, appends rebuild no
// ledger: the next request has one made, with them in. Every time, the totals are those of a walk of the files.
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
	// A server settles its ledger while usage is looked at (usageDemand):
	// here, its page.
	waitSettled := func() {
		t.Helper()
		srv.get(t, "/usage")
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
		if _, err := s.AppendMessage(modelCall(i)); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("after append %d", i), true) // the session written a moment ago is read, with its harness
	}
	waitSettled()
	check("settled", false)
	// An append that settled before a terminal asks: the server reads
	// that file alone (its watcher named it), with no walk.
	if _, err := s.AppendMessage(modelCall(9)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(settledAfter)
	check("an append, settled", false)
	if v := srv.use.Load(); v.walked || v.recounted != 1 {
		t.Errorf("the server's ledger of an append: walked %v, %d sessions counted again; want no walk, 1", v.walked, v.recounted)
	}
	srv.Close()
	if _, st := cliUsage(t, p, false); st.Live || len(st.Walked) != len(catalog.Every) {
		t.Fatalf("without the server: live %v, walked %v", st.Live, st.Walked)
	}
}

// TestUsageWaitsToBeLookedAt: with no page open and nobody asking, a
// burst of appends rebuilds no usage ledger (a rebuild reads every
// session's digest: most of what an append cost a server of 25,000
// sessions); the next page that shows usage has one made, with every
// call appended in it.
func TestUsageWaitsToBeLookedAt(t *testing.T) {
	p := newPlace(t)
	path, s := p.newSession(t, "/w/cost", "Costly", "what does this cost", "a lot")
	srv := p.serve(t)
	time.Sleep(settledAfter + 200*time.Millisecond) // the first ledger's settling, while the start is looked at
	srv.usageAsked.Store(0)                         // and then nobody looks
	before := srv.use.Load()
	calls := before.costs.calls(path)
	for i := range 3 {
		if _, err := s.AppendMessage(modelCall(i)); err != nil {
			t.Fatal(err)
		}
	}
	// Listed (the list is told at once), and no ledger made for it.
	deadline := time.Now().Add(10 * time.Second)
	for srv.relisted.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the appends were not listed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for !srv.usageIdle.Load() { // the views loop leaves the ledger for a request
		if time.Now().After(deadline) {
			t.Fatal("the views loop did not leave the ledger to be asked for")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if srv.use.Load() != before {
		t.Fatal("a usage ledger was rebuilt with nobody looking")
	}
	srv.get(t, "/usage")
	deadline = time.Now().Add(usageEvery / 3) // not paced: changes waited for it
	for srv.use.Load().costs.calls(path) != calls+3 {
		if time.Now().After(deadline) {
			t.Fatalf("after the page was asked for, %d calls, want %d", srv.use.Load().costs.calls(path), calls+3)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// modelCall is the i-th of a run of priced model calls, as an assistant
// message appended to a session.
func modelCall(i int) ai.Message {
	return ai.Message{Role: ai.RoleAssistant, Content: ai.BlockContent(ai.Text("more")), StopReason: ai.StopEnd,
		Model: "claude-sonnet-4-5", Provider: "anthropic", API: "anthropic-messages", Timestamp: time.Now().UnixMilli(),
		Usage: &ai.Usage{Input: int64(100 + i), Output: 7, TotalTokens: int64(107 + i)}}
}

// TestUsageRebuiltOnceSettled: a change while usage is looked at has the
// ledger rebuilt once, after it settles (a second after it was made),
// trusting every file to its stamp and counting again only the session
// that grew (catalog's recount); one built at once would find that file
// too recent to trust, and be built whole again a second later.
func TestUsageRebuiltOnceSettled(t *testing.T) {
	p := newPlace(t)
	path, s := p.newSession(t, "/w/cost", "Costly", "what does this cost", "a lot")
	// A session of no call has no groups to count again into: its first
	// builds a ledger.
	if _, err := s.AppendMessage(modelCall(100)); err != nil {
		t.Fatal(err)
	}
	srv := p.serve(t)
	srv.get(t, "/usage") // looked at from now on (usageDemand)
	deadline := time.Now().Add(10 * time.Second)
	for v := srv.use.Load(); v.made.IsZero() || v.racy > 0; v = srv.use.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the server's first ledger did not settle")
		}
		time.Sleep(20 * time.Millisecond)
	}
	calls := srv.use.Load().costs.calls(path)
	for round := range 3 {
		// Nobody looks, so that the page below has a ledger made at once,
		// not paced (usageEvery): an append then waits for it.
		srv.usageAsked.Store(0)
		if _, err := s.AppendMessage(modelCall(2 * round)); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for !srv.usageIdle.Load() {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the views loop did not leave the ledger to be asked for", round)
			}
			time.Sleep(10 * time.Millisecond)
		}
		built := srv.usageBuilt.Load()
		written := time.Now()
		if _, err := s.AppendMessage(modelCall(2*round + 1)); err != nil {
			t.Fatal(err)
		}
		srv.get(t, "/usage")
		calls += 2
		deadline = time.Now().Add(10 * time.Second)
		for srv.use.Load().costs.calls(path) != calls {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d calls, want %d", round, srv.use.Load().costs.calls(path), calls)
			}
			time.Sleep(10 * time.Millisecond)
		}
		v := srv.use.Load()
		if shown := v.made.Sub(written); shown < time.Second {
			t.Errorf("round %d: rebuilt %v after the append, before it settled", round, shown)
		}
		time.Sleep(settledAfter + 300*time.Millisecond) // a settling rebuild would have come
		if n := srv.usageBuilt.Load() - built; n != 1 || v != srv.use.Load() {
			t.Errorf("round %d: %d ledgers built for one append", round, n)
		}
		if v.racy != 0 || v.recounted != 1 {
			t.Errorf("round %d: %d sessions racy, %d counted again; want 0 and 1", round, v.racy, v.recounted)
		}
	}
}
