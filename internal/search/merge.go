package search

import (
	"cmp"
	"slices"
)

// rrfK is reciprocal rank fusion's constant: a hit at position p of its
// list scores 1/(rrfK+p). 60 is the value of Cormack, Clarke and
// Büttcher (SIGIR 2009), which damps the head of each list enough that
// no one list's top hits crowd out another's.
const rrfK = 60

// Merge orders the hits of several indexes (each list as one index's
// Search returned it, best first) as one list of at most limit hits.
//
// bm25 ranks from different FTS5 indexes cannot be compared: each is
// relative to its own index's document count and term frequencies, so
// a small index's mediocre hit can outscore a large one's best. Merge
// therefore compares positions, not ranks (reciprocal rank fusion): a
// hit scores 1/(60+p) at position p of its own list, and the merged list
// is by score, ties (the same position in two lists) by the hit's own
// time, newest first, then by list order. One list comes out as it went
// in. With newest, hits are by time alone, newest first, as one index
// orders them for --newest.
func Merge(lists [][]Hit, newest bool, limit int) []Hit {
	order := MergeOrder(lists, newest, limit)
	out := make([]Hit, len(order))
	for i, at := range order {
		out[i] = lists[at.List][at.Pos]
	}
	return out
}

// At is where a hit is in the lists Merge is given.
type At struct{ List, Pos int }

// MergeOrder is Merge's list as where each of its hits is in lists: for
// a caller that finishes only the hits kept (their snippets, DB.Snippets).
func MergeOrder(lists [][]Hit, newest bool, limit int) []At {
	var all []At
	for w, l := range lists {
		for p := range l {
			all = append(all, At{w, p})
		}
	}
	hit := func(a At) *Hit { return &lists[a.List][a.Pos] }
	slices.SortStableFunc(all, func(a, b At) int {
		if newest {
			return hit(b).Timestamp.Compare(hit(a).Timestamp)
		}
		// 1/(k+p) is larger for a smaller p: comparing positions is
		// comparing scores, exactly.
		return cmp.Or(cmp.Compare(a.Pos, b.Pos), hit(b).Timestamp.Compare(hit(a).Timestamp), cmp.Compare(a.List, b.List))
	})
	return all[:min(len(all), limit)]
}
