package search

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestMergeByPosition merges lists whose ranks are on different scales,
// as separate FTS5 indexes give them: every list's best hits come first
// in turn, whatever its ranks; one list keeps its order; newest orders by
// time; the limit holds.
func TestMergeByPosition(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	list := func(name string, n int, rankScale float64) []Hit {
		var l []Hit
		for i := range n {
			l = append(l, Hit{Path: fmt.Sprintf("%s%d", name, i), Rank: rankScale * float64(i-n), Timestamp: t0.Add(time.Duration(i) * time.Hour)})
		}
		return l
	}
	paths := func(hs []Hit) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.Path)
		}
		return out
	}
	big, small := list("big", 5, 100), list("small", 3, 0.01)
	for _, tc := range []struct {
		name   string
		lists  [][]Hit
		newest bool
		limit  int
		want   []string
	}{
		{"one list", [][]Hit{big}, false, 20, []string{"big0", "big1", "big2", "big3", "big4"}},
		// Equal positions tie; the later hit first, then list order.
		{"two scales", [][]Hit{big, small}, false, 20, []string{"big0", "small0", "big1", "small1", "big2", "small2", "big3", "big4"}},
		{"limit", [][]Hit{small, big}, false, 3, []string{"small0", "big0", "small1"}},
		{"newest", [][]Hit{big, small}, true, 3, []string{"big4", "big3", "big2"}},
		{"none", nil, false, 20, nil},
	} {
		got := paths(Merge(tc.lists, tc.newest, tc.limit))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
