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
	type scored struct {
		h     Hit
		pos   int // position in its own list
		which int // its list
	}
	var all []scored
	for w, l := range lists {
		for p, h := range l {
			all = append(all, scored{h, p, w})
		}
	}
	slices.SortStableFunc(all, func(a, b scored) int {
		if newest {
			return b.h.Timestamp.Compare(a.h.Timestamp)
		}
		// 1/(k+p) is larger for a smaller p: comparing positions is
		// comparing scores, exactly.
		return cmp.Or(cmp.Compare(a.pos, b.pos), b.h.Timestamp.Compare(a.h.Timestamp), cmp.Compare(a.which, b.which))
	})
	out := make([]Hit, 0, min(len(all), limit))
	for _, s := range all {
		if len(out) == limit {
			break
		}
		out = append(out, s.h)
	}
	return out
}
