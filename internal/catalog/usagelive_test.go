package catalog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/live"
	"github.com/xdev/xdev/internal/usage"
)

// vouchingServer stands in for xdev serve's side of the usage handshake
// (internal/serve's usageLive, tested there with the real watcher): it
// holds the marker of the cache of hs, and answers every request after a
// ledger built with Vouching (as a server whose watcher saw a change
// before each does).
func vouchingServer(t *testing.T, c *Catalog, cache string, hs []Harness) {
	t.Helper()
	os.MkdirAll(cache, 0o700)
	m, err := live.Hold(live.MarkerPath(c.UsageCacheFile(cache, hs)))
	if err != nil {
		t.Fatal(err)
	}
	m.Clean()
	dir := live.SyncDir(cache)
	os.MkdirAll(dir, 0o700)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				req := filepath.Join(dir, e.Name())
				if _, ok := live.Request(req); !ok {
					continue
				}
				_, st, err := c.UsageGroups(ctx, UsageOptions{Harnesses: hs, Cache: cache, Vouching: true})
				live.Answer(req, err == nil && len(st.Failed) == 0)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	t.Cleanup(func() { cancel(); <-done; m.Close() })
}

// TestUsageVouched: a ledger that takes its sessions from a cache a
// server vouches for, with no walk, counts every session as a walk of
// the files does, over random histories (resumes, forks, subagents,
// imports, appends a moment ago and an hour ago, deletions), run after
// run; it is a live one every time, and without the server it walks.
func TestUsageVouched(t *testing.T) {
	hs := []Harness{Xdev, Claude, Codex}
	var walked int // harnesses walked though vouched for (written a moment ago)
	for seed := range uint64(30) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			w, c, tmp := newUsageWorld(t, seed, 27)
			cache := filepath.Join(tmp, "cache")
			vouchingServer(t, c, cache, hs)
			for run := range 5 {
				switch run {
				case 1, 3, 4:
					// An hour old, so that the cache trusts them; then a
					// few written now, which it does not.
					ageSessions(tmp)
					switch run {
					case 3:
						for range 1 + w.r.IntN(3) {
							w.step()
						}
						w.flush()
					case 4:
						// A session gone: gone from the vouched ledger too.
						if len(w.claude) > 0 {
							os.Remove(w.claude[0].path)
						}
					}
				case 2:
					for range 1 + w.r.IntN(4) {
						w.step()
					}
					w.flush()
				}
				got, gst, err := c.Usage(context.Background(), UsageOptions{Harnesses: hs, Cache: cache})
				if err != nil {
					t.Fatal(err)
				}
				if !gst.Live {
					t.Fatalf("run %d: not live with the server running", run)
				}
				if run == 1 && len(gst.Walked) > 0 || run == 4 && len(gst.Walked) > 0 {
					t.Errorf("run %d: nothing was written a moment ago, and %v was walked", run, gst.Walked)
				}
				walked += len(gst.Walked)
				want, _, err := c.Usage(context.Background(), UsageOptions{Harnesses: hs})
				if err != nil {
					t.Fatal(err)
				}
				if g, w := ledgerBySession(t, got), ledgerBySession(t, want); !sameLedger(g, w) {
					t.Fatalf("run %d: vouched %v\nwalked %v", run, g, w)
				}
				// The groups the server kept, taken with no ledger.
				groups, kst, err := c.UsageGroups(context.Background(), UsageOptions{Harnesses: hs, Cache: cache})
				if err != nil {
					t.Fatal(err)
				}
				if !kst.Live || !kst.Counted {
					t.Fatalf("run %d: groups live %v, counted %v", run, kst.Live, kst.Counted)
				}
				if g, w := groupsBySession(groups), ledgerBySession(t, want); !sameLedger(g, w) {
					t.Fatalf("run %d: kept %v\nwalked %v", run, g, w)
				}
			}
		})
	}
	if walked == 0 {
		t.Error("no harness written a moment ago was walked")
	}
	// The server gone, a ledger walks every place.
	tmp := t.TempDir()
	c, err := New(Config{DataDir: filepath.Join(tmp, "agent"), Explicit: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, st, err := c.Usage(context.Background(), UsageOptions{Harnesses: hs, Cache: filepath.Join(tmp, "cache")}); err != nil || st.Live || len(st.Walked) != len(hs) {
		t.Fatalf("with no server: live %v, walked %v, %v", st.Live, st.Walked, err)
	}
}

// ledgerBySession is a ledger's calls and tokens by session.
func ledgerBySession(t *testing.T, l *usage.Ledger) map[string]string {
	t.Helper()
	groups, err := l.Groups(usage.Prices())
	if err != nil {
		t.Fatal(err)
	}
	return groupsBySession(groups)
}

// groupsBySession is groups' calls and tokens by session.
func groupsBySession(groups []usage.Group) map[string]string {
	calls := map[string]int{}
	tokens := map[string]usage.Tokens{}
	for _, g := range groups {
		calls[g.Rollup.Path] += g.Calls
		tk := tokens[g.Rollup.Path]
		tk.Add(g.Tokens)
		tokens[g.Rollup.Path] = tk
	}
	m := map[string]string{}
	for p, n := range calls {
		m[filepath.Base(p)] = fmt.Sprintf("%d %+v", n, tokens[p])
	}
	return m
}

func sameLedger(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
