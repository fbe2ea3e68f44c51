package usage

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestReportPatchIsTheReportAnew: over random ledgers' groups, a report
// patched with a session's groups before and after it was counted again
// (it grew: its buckets' calls, tokens and costs more, its last calls
// later, buckets of new quarters and models; or it is new) is, in every
// view and mode, the report made anew of the groups after: the same
// rows with the same totals (the cost but in its last bits), first and
// last calls, harnesses and models, in the view's order. The report
// patched is left as it was.
func TestReportPatchIsTheReportAnew(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 13))
	models := []ModelRef{
		RefModel("anthropic", "claude-sonnet-4-5", "anthropic-messages"),
		RefModel("bedrock", "claude-sonnet-4-5", "anthropic-messages"),
		RefModel("openai", "gpt-5.3-codex", ""),
		RefModel("", "", ""),
	}
	patched := 0
	for round := range 400 {
		groups := sessionCostGroups(r, models, 1+r.IntN(20))
		// A session counted alone: its own rollup, none rolled up to it.
		rolled := map[*Session]bool{}
		for _, g := range groups {
			if g.Rollup != g.Session {
				rolled[g.Session], rolled[g.Rollup] = true, true
			}
		}
		var s *Session
		if r.IntN(4) > 0 {
			for _, g := range groups {
				if !rolled[g.Session] && r.IntN(2) == 0 {
					s = g.Session
				}
			}
		}
		var was, now, after []Group
		grow := func(b Bucket) Bucket {
			b.Calls += r.IntN(3)
			b.Tokens.Add(Tokens{Input: float64(r.IntN(1000)), Output: float64(r.IntN(100)), CacheRead: float64(r.IntN(10))})
			b.Last += float64(r.IntN(Quarter))
			b.Malformed += r.IntN(2)
			for m := range b.Cost {
				b.Cost[m] += r.Float64()
				b.Unpriced[m] += r.IntN(2)
			}
			return b
		}
		newBuckets := func(s *Session) []Group {
			var out []Group
			for range r.IntN(3) {
				at := float64(1767225600000 + r.IntN(120*24*3600e3))
				b := Bucket{Quarter: int64(at) / Quarter, First: at, Last: at, Model: models[r.IntN(len(models))], Calls: 1 + r.IntN(3),
					Tokens: Tokens{Input: float64(r.IntN(1e5))}}
				b.Cost = [len(modes)]float64{r.Float64(), r.Float64(), 0}
				out = append(out, Group{Session: s, Rollup: s, Bucket: &b})
			}
			return out
		}
		if s == nil {
			// A session new since.
			ns := &Session{Harness: "xdev", Path: fmt.Sprintf("/new/%d.jsonl", round), ID: "new"}
			now = newBuckets(ns)
			after = append(slices.Clone(groups), now...)
		} else {
			for _, g := range groups {
				if g.Session != s {
					after = append(after, g)
					continue
				}
				was = append(was, g)
				b := grow(*g.Bucket)
				ng := Group{Session: s, Rollup: s, Bucket: &b}
				now = append(now, ng)
				after = append(after, ng)
			}
			more := newBuckets(s)
			now = append(now, more...)
			after = append(after, more...)
		}
		for _, v := range Views {
			for _, mode := range []Mode{Auto, Display} {
				opts := ReportOptions{View: v, Mode: mode, Location: time.UTC}
				before := NewReport(groups, opts)
				kept := fmt.Sprintf("%+v", before)
				got, want := before.Patch(opts, was, now), NewReport(after, opts)
				what := fmt.Sprintf("round %d, %s, %s", round, v, mode)
				if d := reportDiff(got, want); d != "" {
					t.Fatalf("%s: %s", what, d)
				}
				if fmt.Sprintf("%+v", before) != kept {
					t.Fatalf("%s: the report patched changed", what)
				}
				patched++
			}
		}
	}
	t.Logf("%d reports patched", patched)
}

// reportDiff says how report a differs from b, "" where it does not:
// its cost but in the last bits; its rows in its view's order.
func reportDiff(a, b Report) string {
	if d := totalsDiff(a.Total.Totals, b.Total.Totals); d != "" {
		return "total: " + d
	}
	if len(a.Rows) != len(b.Rows) {
		return fmt.Sprintf("%d rows, want %d:\n%+v\n%+v", len(a.Rows), len(b.Rows), a.Rows, b.Rows)
	}
	if sorted := slices.Clone(a.Rows); true {
		sortRows(a.View, sorted)
		for k := range sorted {
			if sorted[k].Key != a.Rows[k].Key {
				return "rows not in the view's order"
			}
		}
	}
	byKey := map[string]Row{}
	for _, r := range b.Rows {
		byKey[r.Key] = r
	}
	for _, x := range a.Rows {
		y, ok := byKey[x.Key]
		if !ok {
			return "a row " + x.Key + " not in the report anew"
		}
		if d := totalsDiff(x.Totals, y.Totals); d != "" {
			return x.Key + ": " + d
		}
		if !x.First.Equal(y.First) || !x.Last.Equal(y.Last) || !slices.Equal(x.Harnesses, y.Harnesses) || len(x.Models) != len(y.Models) {
			return fmt.Sprintf("%s: %v %v %v %d models, want %v %v %v %d", x.Key, x.First, x.Last, x.Harnesses, len(x.Models), y.First, y.Last, y.Harnesses, len(y.Models))
		}
		if (x.Session == nil) != (y.Session == nil) || x.Session != nil && x.Session.Path != y.Session.Path {
			return x.Key + ": another session"
		}
		for _, m := range x.Models {
			k := slices.IndexFunc(y.Models, func(n ModelRow) bool { return n.Model == m.Model })
			if k < 0 {
				return x.Key + ": a model " + m.Model + " not in the report anew"
			}
			if d := totalsDiff(m.Totals, y.Models[k].Totals); d != "" {
				return x.Key + ", " + m.Model + ": " + d
			}
		}
		if !slices.IsSortedFunc(x.Models, func(p, q ModelRow) int {
			ms := []ModelRow{p, q}
			sortModels(ms)
			if ms[0] == p {
				return -1
			}
			return 1
		}) {
			return x.Key + ": models not in order"
		}
	}
	return ""
}

// totalsDiff says how a differs from b: exactly but for the cost.
func totalsDiff(a, b Totals) string {
	ca, cb := a.Cost, b.Cost
	a.Cost, b.Cost = 0, 0
	if a != b || !nearly(ca, cb) {
		return fmt.Sprintf("%+v $%v, want %+v $%v", a, ca, b, cb)
	}
	return ""
}
