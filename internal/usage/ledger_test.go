package usage

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/omptest"
	"github.com/xdev/xdev/internal/session"
)

// writeCalls appends n assistant turns of 1,000 input and 100 output
// tokens to s, each after a user message.
func writeCalls(t *testing.T, s *session.Store, n int) {
	t.Helper()
	for k := range n {
		if _, err := s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent(fmt.Sprintf("turn %d", k)), Timestamp: 1790000000000}); err != nil {
			t.Fatal(err)
		}
		_, err := s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.TextContent("done"), API: "anthropic-messages",
			Provider: "anthropic", Model: "claude-sonnet-4-5", StopReason: ai.StopEnd, Timestamp: 1790000000001,
			Usage: &ai.Usage{Input: 1000, Output: 100, TotalTokens: 1100, Cost: ai.Cost{Total: 0.0045}}})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestLedgerCountsOnce: a session of 3 calls, a fork of it with 2 more, a
// branch cut from the fork with 1 more, a fork of the branch with 1 more,
// and an unrelated session whose entry ids are forced to be the first
// session's: the ledger counts 3+2+1+1 calls in the lineage, each in the
// session that made it, and the unrelated session's apart. omp-stats,
// counting per file, counts the copies again: 3, 5, the branch's path and
// the fork's whole copy (shown, not copied: the difference is the point).
func TestLedgerCountsOnce(t *testing.T) {
	dir := t.TempDir()
	parent, err := session.Create(filepath.Join(dir, "parent.jsonl"), session.NewOptions{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	writeCalls(t, parent, 3)
	parent.Close()
	fork, err := session.ForkSession(parent.Path(), filepath.Join(dir, "fork.jsonl"), "")
	if err != nil {
		t.Fatal(err)
	}
	writeCalls(t, fork, 2)
	leaf := fork.LeafID()
	fork.Close()
	branch, err := session.ForkBranch(fork.Path(), filepath.Join(dir, "branch.jsonl"), leaf)
	if err != nil {
		t.Fatal(err)
	}
	writeCalls(t, branch, 1)
	branch.Close()
	again, err := session.ForkSession(branch.Path(), filepath.Join(dir, "again.jsonl"), "")
	if err != nil {
		t.Fatal(err)
	}
	writeCalls(t, again, 1)
	again.Close()
	// An unrelated session whose ids are the parent's (as eight hex digits
	// allow): its own calls.
	other, err := session.Create(filepath.Join(dir, "other.jsonl"), session.NewOptions{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := session.OpenIndex(parent.Path(), nil)
	for i := range x.Len() {
		raw, _ := x.Raw(i)
		// Its calls made at other times: the same ids are other calls.
		raw = bytes.ReplaceAll(raw, []byte(`"timestamp":1790000000001`), []byte(`"timestamp":1790000009999`))
		if _, err := other.AppendJSON(raw); err != nil {
			t.Fatal(err)
		}
	}
	x.Close()
	other.Close()

	files := []string{again.Path(), branch.Path(), other.Path(), fork.Path(), parent.Path()} // in no helpful order
	var l Ledger
	for _, f := range files {
		if err := l.AddFile("xdev", f); err != nil {
			t.Fatal(err)
		}
	}
	per := map[string]int{}
	calls, err := l.Calls()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		per[filepath.Base(c.Session.Path)]++
	}
	want := map[string]int{"parent.jsonl": 3, "fork.jsonl": 2, "branch.jsonl": 1, "again.jsonl": 1, "other.jsonl": 3}
	if fmt.Sprint(per) != fmt.Sprint(want) {
		t.Errorf("calls by session %v, want %v", per, want)
	}

	// What omp's per-file statistics count of the same files.
	var omp []ompCall
	if err := json.Unmarshal(omptest.Run(t, t.TempDir(), "usage.ts", files...), &omp); err != nil {
		t.Fatal(err)
	}
	if len(omp) <= len(calls) {
		t.Errorf("omp-stats counts %d calls, the ledger %d: the copies are not counted again there?", len(omp), len(calls))
	}
	t.Logf("omp-stats counts %d calls of these files, the ledger %d", len(omp), len(calls))
}

// ompModelStats is one row of interop/omp/scripts/stats-by-model.ts:
// omp-stats' own aggregate (syncAllSessions into its database, then
// getStatsByModel).
type ompModelStats struct {
	Model      string  `json:"model"`
	Provider   string  `json:"provider"`
	Requests   int     `json:"requests"`
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Cost       float64 `json:"cost"`
}

// TestLedgerMatchesOmpStatsByModel: over an agent dir of the bundled
// samples (whose fork and branch name their parent by a path of another
// checkout), generated sessions of several models and providers with
// forks, branches and subagents, and a fork whose source is not there,
// the ledger's calls per model and provider, their tokens and (in Auto
// mode) their cost equal omp-stats' aggregate of the same files, which
// counts a copied entry (the same id and time in another file) once.
func TestLedgerMatchesOmpStatsByModel(t *testing.T) {
	agent := t.TempDir()
	if err := os.CopyFS(filepath.Join(agent, "sessions"), os.DirFS("../session/testdata/omp/sessions")); err != nil {
		t.Fatal(err)
	}
	models := []struct{ provider, model, api string }{
		{"anthropic", "claude-sonnet-4-5", "anthropic-messages"},
		{"openai", "gpt-5.1", "openai-responses"},
		{"google", "gemini-2.5-pro", "google-generative-ai"},
		{"openrouter", "anthropic/claude-opus-4.1", "openai-completions"},
	}
	var stores []string
	for k := range 12 {
		path, _, err := session.NewSessionPath(agent, fmt.Sprintf("/work/p%d", k%3))
		if err != nil {
			t.Fatal(err)
		}
		var s *session.Store
		switch {
		case k >= 4 && k%4 == 0:
			s, err = session.ForkSessionInto(stores[k-3], agent, "")
		case k >= 4 && k%4 == 1:
			x, _ := session.OpenIndex(stores[k-2], nil)
			leaf := x.ID(x.Len() - 2)
			x.Close()
			s, err = session.ForkBranchInto(stores[k-2], agent, leaf)
		default:
			s, err = session.Create(path, session.NewOptions{Cwd: fmt.Sprintf("/work/p%d", k%3)})
		}
		if err != nil {
			t.Fatal(err)
		}
		for c := range 2 + k%3 {
			m := models[(k+c)%len(models)]
			at := int64(1790000000000 + k*100000 + c*1000)
			s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent("go"), Timestamp: at})
			cost := 0.0
			if c%2 == 0 {
				cost = 0.001 * float64(k+1) // recorded; the rest priced from the catalog
			}
			if _, err := s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.TextContent("done"), API: m.api,
				Provider: m.provider, Model: m.model, StopReason: ai.StopEnd, Timestamp: at + 1,
				Usage: &ai.Usage{Input: int64(100 * (k + 1)), Output: int64(10 * (c + 1)), CacheRead: int64(50 * c), CacheWrite: int64(7 * k),
					TotalTokens: int64(100*(k+1) + 10*(c+1) + 50*c + 7*k), Cost: ai.Cost{Total: cost}}}); err != nil {
				t.Fatal(err)
			}
		}
		stores = append(stores, s.Path())
		s.Close()
	}
	// A fork whose source is gone.
	gone := stores[2]
	orphan, err := session.ForkSessionInto(gone, agent, "")
	if err != nil {
		t.Fatal(err)
	}
	orphan.Close()
	os.Remove(gone)

	files, err := session.Files(agent)
	if err != nil {
		t.Fatal(err)
	}
	var l Ledger
	for _, f := range files {
		if err := l.AddFile("omp", f.Path); err != nil {
			t.Fatal(err)
		}
	}
	calls, err := l.Calls()
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ model, provider string }
	ours := map[key]*ompModelStats{}
	pricer := NewPricer(Auto, nil)
	for _, c := range calls {
		k := key{c.Model.ID(), c.Model.Provider()}
		if ours[k] == nil {
			ours[k] = &ompModelStats{Model: k.model, Provider: k.provider}
		}
		o := ours[k]
		o.Requests++
		o.Input += c.Tokens.Input
		o.Output += c.Tokens.Output
		o.CacheRead += c.Tokens.CacheRead
		o.CacheWrite += c.Tokens.CacheWrite
		cost, _ := pricer.Cost(c.Call)
		o.Cost += cost
	}
	var theirs []ompModelStats
	if err := json.Unmarshal(omptest.Run(t, agent, "stats-by-model.ts"), &theirs); err != nil {
		t.Fatal(err)
	}
	if len(theirs) != len(ours) {
		t.Errorf("%d models, omp-stats %d: %+v", len(ours), len(theirs), theirs)
	}
	n := 0
	for _, w := range theirs {
		got := ours[key{w.Model, w.Provider}]
		if got == nil {
			t.Errorf("no calls of %s/%s; omp-stats has %+v", w.Provider, w.Model, w)
			continue
		}
		costOK := math.Abs(got.Cost-w.Cost) <= 1e-9*math.Max(1, w.Cost)
		gotCost, wCost := got.Cost, w.Cost
		got.Cost, w.Cost = 0, 0
		if *got != w || !costOK {
			t.Errorf("%s/%s: %+v $%v, omp-stats %+v $%v", w.Provider, w.Model, *got, gotCost, w, wCost)
		}
		n += w.Requests
	}
	t.Logf("%d calls of %d models, as omp-stats counts them", n, len(theirs))
}
