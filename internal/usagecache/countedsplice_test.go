package usagecache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/testscale"
	"github.com/xdev/xdev/internal/usage"
)

// TestSpliceIsWhole: over random ledgers of one to thousands of sessions
// and runs of recounts (sessions counted alone that grew: their buckets
// more, calls later, quarters and models new, a model new to the file,
// a title and lines skipped changed; sessions new, of calls or none),
// and a status span that moves on, a counted file spliced reads back in
// every way a reader reads it (its head, every group, the recent groups,
// each session's sum by its path and by its id, the latest call's) as
// the one written whole of the same recounts, each recount's groups
// before are the same, and the splice refuses what the whole way does.
func TestSpliceIsWhole(t *testing.T) {
	defer func(c func() time.Time) { countedNow = c }(countedNow)
	defer func() { noSplice = false }()
	r := rand.New(rand.NewPCG(21, 5))
	dir := t.TempDir()
	before := splices.Load()
	fresh := usage.RefModel("newprovider", "new-model", "")
	rounds := testscale.N(25, 160)
	for round := range rounds {
		n := []int{1, 4, 30, 300, 2000}[r.IntN(5)]
		groups := randomGroups(r, n)
		spliced, whole := filepath.Join(dir, "spliced"), filepath.Join(dir, "whole")
		sum := StampSum{N: 1, Lo: uint64(round)}
		for _, p := range []string{spliced, whole} {
			if err := WriteCounted(p, Counted{Groups: groups, Files: sum, Sessions: n, Server: 7}); err != nil {
				t.Fatal(err)
			}
		}
		at := time.Now()
		for step := range 4 {
			at = at.Add(time.Duration(r.IntN(30)) * time.Hour)
			countedNow = func() time.Time { return at }
			k, err := ReadCounted(whole)
			if err != nil {
				t.Fatal(err)
			}
			rs := randomRecounts(r, k.Groups, round, step, fresh)
			next := StampSum{N: 1, Lo: sum.Lo, Hi: sum.Hi + 1}
			var heads [2]Counted
			var errs [2]error
			var was [2][]string
			for i, p := range []string{spliced, whole} {
				noSplice = i == 1
				mine := make([]Recount, len(rs))
				copy(mine, rs)
				heads[i], errs[i] = ReplaceCounted(p, sum, Counted{Files: next, Server: 7}, mine)
				for _, rc := range mine {
					var text []string
					for _, g := range rc.Was {
						text = append(text, groupText(g))
					}
					was[i] = append(was[i], strings.Join(text, "\n"))
				}
			}
			noSplice = false
			what := fmt.Sprintf("round %d (%d sessions), step %d, %d recounts", round, n, step, len(rs))
			if (errs[0] == nil) != (errs[1] == nil) {
				t.Fatalf("%s: spliced: %v; whole: %v", what, errs[0], errs[1])
			}
			if errs[0] != nil {
				break
			}
			sum = next
			if fmt.Sprintf("%+v", heads[0]) != fmt.Sprintf("%+v", heads[1]) {
				t.Fatalf("%s: head %+v; whole %+v", what, heads[0], heads[1])
			}
			for i := range was[0] {
				if was[0][i] != was[1][i] {
					t.Fatalf("%s: recount %d was:\n%s\nwhole:\n%s", what, i, was[0][i], was[1][i])
				}
			}
			if a, b := countedText(t, spliced), countedText(t, whole); a != b {
				t.Fatalf("%s: spliced:\n%s\nwhole:\n%s", what, a, b)
			}
		}
	}
	t.Logf("%d files spliced", splices.Load()-before)
	if splices.Load()-before < int64(rounds) {
		t.Errorf("%d files spliced", splices.Load()-before)
	}
}

// randomRecounts are recounts of the ledger of groups at a round's step:
// of some sessions counted alone (their groups grown, a title and the
// lines skipped changed, now and then a model new to the file), sessions
// new, and now and then one a recount may not be (a subagent's, one of
// another's rollup), which both ways refuse.
func randomRecounts(r *rand.Rand, groups []usage.Group, round, step int, fresh usage.ModelRef) []Recount {
	alone := map[*usage.Session]bool{}
	var order []*usage.Session
	for _, g := range groups {
		if _, ok := alone[g.Session]; !ok {
			alone[g.Session] = true
			order = append(order, g.Session)
		}
		if g.Rollup != g.Session {
			alone[g.Session], alone[g.Rollup] = false, false
		}
	}
	var rs []Recount
	for _, s := range order {
		if r.IntN(len(order)/4+2) != 0 || len(rs) >= 16 {
			continue
		}
		if !alone[s] && r.IntN(20) > 0 {
			continue // now and then, one that is refused
		}
		ns := *s
		if r.IntN(3) == 0 {
			ns.Title, ns.Skipped = fmt.Sprint("now ", round, step), r.IntN(5)
		}
		var digest []usage.Bucket
		for _, g := range groups {
			if g.Session != s {
				continue
			}
			b := *g.Bucket
			b.Calls += r.IntN(3)
			b.Tokens.Input += float64(r.IntN(1000))
			b.Last += float64(r.IntN(100))
			b.Cost[0] += r.Float64()
			digest = append(digest, b)
		}
		if r.IntN(2) == 0 || len(digest) == 0 {
			last := float64(countedNow().UnixMilli()) - float64(r.IntN(3))*20*3600e3
			m := groups[r.IntN(len(groups))].Model
			if r.IntN(4) == 0 {
				m = fresh
			}
			digest = append(digest, usage.Bucket{Quarter: int64(last) / usage.Quarter, First: last - 5, Last: last, Model: m, Calls: 1, Tokens: usage.Tokens{Output: 9}})
		}
		rs = append(rs, Recount{Session: &ns, Digest: digest})
	}
	for k := range r.IntN(3) {
		ns := &usage.Session{Harness: "xdev", Path: fmt.Sprintf("/new/%d/%d/%d.jsonl", round, step, k), ID: fmt.Sprint("new-", round, step, k), Skipped: r.IntN(2)}
		var digest []usage.Bucket
		for range r.IntN(3) {
			last := float64(countedNow().UnixMilli()) - float64(r.IntN(50))*3600e3
			digest = append(digest, usage.Bucket{Quarter: int64(last) / usage.Quarter, First: last, Last: last, Model: fresh, Calls: 2, Tokens: usage.Tokens{Input: 5}})
		}
		rs = append(rs, Recount{Session: ns, Digest: digest, Ungrouped: true, New: r.IntN(4) > 0, WasSkipped: r.IntN(2)})
	}
	return rs
}

// countedText is what a reader reads of the counted file at path: its
// head, its groups, and its status read for each session's path and id
// (those recounted new, and a sample of the rest past 40), and for none.
func countedText(t *testing.T, path string) string {
	t.Helper()
	k, err := ReadCounted(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d racy, server %d, %d sessions, %d skipped, %+v\n", k.Racy, k.Server, k.Sessions, k.Skipped, k.Files)
	seen := map[string]bool{}
	var queries []StatusQuery
	for _, g := range k.Groups {
		fmt.Fprintln(&b, groupText(g))
		if s := g.Rollup; !seen[s.Harness+s.Path] {
			seen[s.Harness+s.Path] = true
			if len(seen) < 40 || len(seen)%50 == 0 || strings.HasPrefix(s.Path, "/new/") {
				queries = append(queries, StatusQuery{Paths: []string{s.Path}}, StatusQuery{ID: s.ID})
			}
		}
	}
	for _, q := range append(queries, StatusQuery{Paths: []string{"/none"}}) {
		if len(q.Paths) == 0 {
			q.Paths = []string{""}
		}
		st, err := ReadCountedStatus(path, q)
		if errors.Is(err, os.ErrNotExist) || err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%+v: since %v, %d recent\n", q, st.Status.Since, len(st.Status.Recent))
		if q.Paths[0] == "/none" {
			for _, g := range st.Status.Recent {
				fmt.Fprintln(&b, " recent", groupText(g))
			}
		}
		for _, g := range st.Status.Sessions {
			s := *g.Bucket
			s.Model = 0
			fmt.Fprintf(&b, " sum %s %s %+v %s\n", g.Rollup.Path, g.Rollup.ID, s, g.Model.Name())
		}
	}
	return b.String()
}
