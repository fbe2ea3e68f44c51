package recall

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/xdev/xdev/internal/corpus"
	"github.com/xdev/xdev/internal/testctx"
)

// hitKeys are a search's hits as strings two machines compare by.
func hitKeys(r SearchResult) []string {
	var keys []string
	for _, h := range r.Hits {
		keys = append(keys, h.SessionID+"#"+h.EntryID)
	}
	return keys
}

// everyHit is every hit of a search, page after page, and whether the
// first page said an index was still being built.
func (m *machine) everyHit(t *testing.T, args map[string]any) (keys []string, indexing []string, text string) {
	t.Helper()
	for cursor, first := "", true; ; first = false {
		var r SearchResult
		a := maps.Clone(args)
		a["cursor"] = cursor
		txt := m.must(t, "search_sessions", a, &r)
		keys = append(keys, hitKeys(r)...)
		if first {
			indexing, text = r.Indexing, txt
		}
		if cursor = r.Budget.NextCursor; cursor == "" {
			slices.Sort(keys)
			return keys, indexing, text
		}
	}
}

// TestSearchOutOfTime: a search whose refresh of the indexes runs out of
// time (stopped at chosen points of a first index of every harness)
// answers, from what is indexed, says which harnesses are still being
// indexed, and the searches after it go on indexing until one finds
// what a search with time to spare finds.
func TestSearchOutOfTime(t *testing.T) {
	args := map[string]any{"query": corpus.Vocabulary(3), "limit": 100, "max_tokens": MaxTokens, "newest": true}
	// With time to spare: asked again until nothing is left to index (a
	// first search answers within its limit, which under -race on a busy
	// machine the largest fixtures' first conversion can outlast).
	full := newMachine(t)
	want, indexing, _ := full.everyHit(t, args)
	for tries := 0; len(indexing) != 0 && tries < 50; tries++ {
		want, indexing, _ = full.everyHit(t, args)
	}
	if len(want) == 0 || len(indexing) != 0 {
		t.Fatalf("with time to spare: %d hits, indexing %v", len(want), indexing)
	}
	for _, after := range []int{1, 4, 16, 64} {
		t.Run(fmt.Sprint(after), func(t *testing.T) {
			m := newMachineWith(t, func(o *Options) {
				o.refreshWithin = func(ctx context.Context) (context.Context, context.CancelFunc) {
					return testctx.StopAfter(ctx, after), func() {}
				}
			})
			calls, stale := 0, 0
			for ; ; calls++ {
				if calls > 300 {
					t.Fatal("the searches never finish indexing")
				}
				got, indexing, text := m.everyHit(t, args)
				if len(indexing) == 0 {
					if !slices.Equal(got, want) {
						t.Errorf("after %d calls out of time: %d hits, want %d", calls, len(got), len(want))
					}
					break
				}
				stale++
				if !strings.Contains(text, "still being indexed") {
					t.Errorf("call %d is short of %v and does not say so: %s", calls, indexing, text)
				}
				for _, k := range got {
					if _, found := slices.BinarySearch(want, k); !found {
						t.Errorf("call %d: hit %s, not one of a search with time to spare", calls, k)
					}
				}
			}
			if stale == 0 {
				t.Errorf("stopped after %d looks, no search was short: the stops fell nowhere", after)
			}
		})
	}
}

// TestPagesOutOfTime: a call whose time is up from its start still
// answers a page (of one item), says it is short, and its cursor goes
// on: the pages together are what one call with time to spare gives.
func TestPagesOutOfTime(t *testing.T) {
	m := newMachine(t)
	short := newMachineWith(t, func(o *Options) { o.TimeLimit = time.Nanosecond })
	var xdev ListResult
	m.must(t, "list_sessions", map[string]any{"harness": "xdev", "limit": 3}, &xdev)
	for _, s := range xdev.Sessions {
		var c ContextResult
		m.must(t, "get_context", map[string]any{"session": s.ID, "limit": 100, "max_tokens": MaxTokens}, &c)
		var got []Message
		for cursor := ""; ; {
			var p ContextResult
			text := short.must(t, "get_context", map[string]any{"session": s.ID, "limit": 100, "max_tokens": MaxTokens, "cursor": cursor}, &p)
			if len(p.Messages) != 1 || p.Budget.NextCursor != "" && !strings.Contains(text, "time limit ran out") {
				t.Fatalf("get_context out of time: %d messages, cursor %q: %s", len(p.Messages), p.Budget.NextCursor, text)
			}
			got = append(got, p.Messages...)
			if cursor = p.Budget.NextCursor; cursor == "" {
				break
			}
		}
		if !slices.Equal(got, c.Messages[:min(len(c.Messages), len(got))]) || len(got) != c.Total {
			t.Errorf("%s: pages out of time give %d messages, want the %d of one call", s.ID, len(got), c.Total)
		}

		var e SessionResult
		m.must(t, "get_session", map[string]any{"session": s.ID, "limit": 100, "max_tokens": MaxTokens, "no_cost": true}, &e)
		var entries []Entry
		for cursor := ""; len(entries) < len(e.Entries); {
			var p SessionResult
			short.must(t, "get_session", map[string]any{"session": s.ID, "limit": 100, "max_tokens": MaxTokens, "cursor": cursor}, &p)
			if len(p.Entries) != 1 {
				t.Fatalf("get_session out of time: %d entries", len(p.Entries))
			}
			if p.Summary.Cost != nil || !strings.Contains(p.Summary.CostNote, "longer than a call may") {
				t.Errorf("get_session out of time: cost %v, note %q", p.Summary.Cost, p.Summary.CostNote)
			}
			entries = append(entries, p.Entries...)
			if cursor = p.Budget.NextCursor; cursor == "" {
				break
			}
		}
		if !slices.Equal(entries, e.Entries) {
			t.Errorf("%s: pages of entries out of time differ from one call's", s.ID)
		}
	}
}

// TestCallPastItsLimit: a handler that does not look at its context (a
// session whose open alone outlasts the limit) is answered for at the
// limit, with an error that says so, and the server goes on answering;
// handlers still at work past their limit hold a slot each, and a call
// that finds none free says the server is busy.
func TestCallPastItsLimit(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := &server{limit: 50 * time.Millisecond, rest: time.AfterFunc(time.Hour, func() {}), slots: make(chan struct{}, 2), ix: &indexes{}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	type in struct {
		Wait bool `json:"wait,omitempty"`
	}
	type out struct {
		OK bool `json:"ok"`
	}
	addTool(srv, &mcp.Tool{Name: "slow"}, s, func(ctx context.Context, a in) (out, string, error) {
		if a.Wait {
			<-release // never looks at ctx
		}
		return out{OK: true}, "done", nil
	})
	cs, ctx := connect(t, &Server{Server: srv, s: s}), context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"wait": true}})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "did not finish within its time limit") {
		t.Fatalf("a call past its limit: %v, %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
	if err != nil || res.IsError || textOf(res) != "done" {
		t.Fatalf("the call after it: %v, %s", err, textOf(res))
	}
	// Retried, calls that run out of time hold at most the server's slots
	// at work; the call past them says the server is busy.
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"wait": true}})
	if res == nil || !strings.Contains(textOf(res), "did not finish") {
		t.Fatalf("the second call past its limit: %+v", res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "the server is busy with 2 calls") {
		t.Fatalf("a call with every slot held: %v, %+v", err, res)
	}
}
