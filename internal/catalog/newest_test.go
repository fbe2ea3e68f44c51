package catalog

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestNewestFirst holds the merge of the harnesses' listings to the
// stable sort of their concatenation it replaced, over random listings:
// sorted or not, with rows changed at the same time within one listing
// and across them, and empty ones.
func TestNewestFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for round := range 500 {
		lists := make([][]Row, rng.IntN(6))
		var concat []Row
		for k := range lists {
			for i := range rng.IntN(12) {
				lists[k] = append(lists[k], Row{Path: fmt.Sprintf("%d/%d", k, i), Modified: base.Add(time.Duration(rng.IntN(8)) * time.Second)})
			}
			if rng.IntN(4) > 0 {
				slices.SortStableFunc(lists[k], func(a, b Row) int { return b.Modified.Compare(a.Modified) })
			}
			concat = append(concat, lists[k]...)
		}
		want := slices.Clone(concat)
		slices.SortStableFunc(want, func(a, b Row) int { return b.Modified.Compare(a.Modified) })
		got := NewestFirst(lists)
		if !slices.EqualFunc(got, want, func(a, b Row) bool { return a.Path == b.Path }) {
			t.Fatalf("round %d: got %v, want %v", round, paths(got), paths(want))
		}
	}
}

func paths(rows []Row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Path)
	}
	return out
}
