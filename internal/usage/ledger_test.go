package usage

import (
	"fmt"
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
