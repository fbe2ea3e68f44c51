package usage

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestSessionCostsAreTheReportsRows: over random ledgers' groups (rolled
// up subagents, a model served by two providers, costs that tie), each
// session's SessionCost is its row of a report by session: the same
// totals, and the model the row lists first, in every mode.
func TestSessionCostsAreTheReportsRows(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	models := []ModelRef{
		RefModel("anthropic", "claude-sonnet-4-5", "anthropic-messages"),
		RefModel("bedrock", "claude-sonnet-4-5", "anthropic-messages"), // one model to a person
		RefModel("openai", "gpt-5.3-codex", ""),
		RefModel("openai", "a-model", ""),
		RefModel("", "", ""),
	}
	for round := range 300 {
		groups := sessionCostGroups(r, models, r.IntN(30))
		for _, mode := range []Mode{"", Auto, Calculate, Display} {
			got := map[SessionKey]SessionCost{}
			for _, c := range SessionCosts(groups, mode) {
				if _, ok := got[c.Session]; ok {
					t.Fatalf("round %d, %q: %v twice", round, mode, c.Session)
				}
				got[c.Session] = c
			}
			report := NewReport(groups, ReportOptions{View: BySession, Mode: mode, Location: time.UTC})
			if len(got) != len(report.Rows) {
				t.Fatalf("round %d, %q: %d sessions, the report has %d rows", round, mode, len(got), len(report.Rows))
			}
			for _, row := range report.Rows {
				key := SessionKey{Harness: row.Session.Harness, Path: row.Session.Path}
				c, ok := got[key]
				if !ok {
					t.Fatalf("round %d, %q: no cost of %v", round, mode, key)
				}
				if c.Totals != row.Totals {
					t.Errorf("round %d, %q, %v: totals %+v, the report's %+v", round, mode, key, c.Totals, row.Totals)
				}
				// A model's cost is summed in another order than the
				// report's (by provider first): costs that differ by a
				// rounding may then be ordered either way. Costs that tie
				// (sums of quarters, exact in any order) go by name.
				if c.Model != row.Models[0].Model && !(len(row.Models) > 1 && row.Models[0].Cost != row.Models[1].Cost && nearly(row.Models[0].Cost, row.Models[1].Cost)) {
					t.Errorf("round %d, %q, %v: model %q, the report's first %q of %+v", round, mode, key, c.Model, row.Models[0].Model, row.Models)
				}
			}
		}
	}
}

func nearly(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// sessionCostGroups are the groups of n random sessions, a quarter of
// them subagents rolled up into the session before, with costs of a few
// values (so that models tie) and of any.
func sessionCostGroups(r *rand.Rand, models []ModelRef, n int) []Group {
	sessions := make([]*Session, n)
	var out []Group
	for k := range sessions {
		s := &Session{Harness: []string{"claude", "codex", "xdev"}[r.IntN(3)], Path: fmt.Sprintf("/h/s%d.jsonl", k), ID: fmt.Sprint("id-", k)}
		rollup := s
		if k > 0 && r.IntN(4) == 0 {
			s.Subagent, s.Parent = true, sessions[k-1].ID
			rollup = sessions[k-1]
		}
		sessions[k] = s
		for range r.IntN(6) {
			at := float64(1767225600000 + r.IntN(90*24*3600e3))
			b := &Bucket{Quarter: int64(at) / Quarter, First: at, Last: at, Model: models[r.IntN(len(models))],
				Tokens: Tokens{Input: float64(r.IntN(1e6)), Output: float64(r.IntN(1e4))}, Calls: 1 + r.IntN(9), Malformed: r.IntN(2)}
			for m := range b.Cost {
				b.Cost[m], b.Unpriced[m] = []float64{0, 0.25, 0.5, r.Float64()}[r.IntN(4)], r.IntN(2)
			}
			out = append(out, Group{Session: s, Rollup: rollup, Bucket: b})
		}
	}
	return out
}

// BenchmarkSessionCosts sums the groups of 25,000 sessions by session
// both ways: SessionCosts, and the report by session it stands in for.
func BenchmarkSessionCosts(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 9))
	models := []ModelRef{RefModel("anthropic", "claude-sonnet-4-5", "anthropic-messages"), RefModel("openai", "gpt-5.3-codex", "")}
	groups := sessionCostGroups(r, models, 25000)
	b.Run("SessionCosts", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			SessionCosts(groups, Auto)
		}
	})
	b.Run("NewReport", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			NewReport(groups, ReportOptions{View: BySession, Location: time.UTC})
		}
	})
}
