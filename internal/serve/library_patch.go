package serve

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/catalog"
)

// The bounds of a patch: past them a library is made whole again, which
// also folds the changes into its base lookups.
const (
	// maxPatch is the most files one patch takes.
	maxPatch = 64
	// maxDelta is the most rows the lookups of a library may have
	// changed since it was made whole: each patch copies them.
	maxDelta = 1024
)

// nextLibrary is the library after old (nil for none) once the
// harnesses of whole were listed whole and the files of reread were read
// again (patched's), and the keys of the rows an open page is to be told
// of: old patched where it can be, else made whole, the harnesses
// neither listed nor read again as old holds them.
func nextLibrary(old *library, whole map[catalog.Harness][]catalog.Row, reread map[catalog.Harness]map[string]*catalog.Row,
	key func(catalog.Harness, string) string, failed map[catalog.Harness]error, now time.Time) (*library, []string) {
	if old != nil && len(whole) == 0 {
		if l, changed := old.patched(reread, key, failed, now); l != nil {
			return l, changed
		}
	}
	lists := make([][]catalog.Row, 0, len(catalog.Every))
	for _, h := range catalog.Every {
		rows, ok := whole[h]
		if !ok && old != nil {
			rows = old.listOf(h, reread[h])
		}
		lists = append(lists, rows)
	}
	l := newLibrary(catalog.NewestFirst(lists), failed, key, now)
	return l, l.changed(old)
}

// patched is the library of l's rows with those at the paths of reread
// (the files of data-dir harnesses read again, catalog.Reread, by
// harness) replaced by theirs, a nil row for one gone, and the keys of
// the rows an open page is to be told of (changed's). It is nil when a
// patch cannot make the library newLibrary would make of the same rows:
// a row that was or becomes unreadable, one whose ID or parent changes,
// one gone that others nest under, a new row that an existing one names
// as its parent or whose parent is not there, an ID two rows hold, any
// cycle of parents; or more changes than the bounds above. The caller
// then makes the library whole.
func (l *library) patched(reread map[catalog.Harness]map[string]*catalog.Row, key func(catalog.Harness, string) string, failed map[catalog.Harness]error, now time.Time) (*library, []string) {
	var paths []string
	harnessOf := map[string]catalog.Harness{}
	for h, rows := range reread {
		for p := range rows {
			if _, twice := harnessOf[p]; twice {
				return nil, nil // two data dirs in one
			}
			harnessOf[p] = h
			paths = append(paths, p)
		}
	}
	if l.cyclic || len(paths) > maxPatch || len(l.delta.byKey)+len(paths) > maxDelta {
		return nil, nil
	}
	// In one order, so that a patch that cannot be made is never made.
	slices.Sort(paths)
	n := &library{base: l.base, dupIDs: l.dupIDs, bad: l.bad, failed: failed, made: now, delta: l.delta.clone()}
	gone := map[*entry]bool{}
	var added []*entry
	var changed []string
	for _, p := range paths {
		h := harnessOf[p]
		r, was := reread[h][p], n.atPath(p)
		if r != nil && r.Err != nil || was == nil && slices.ContainsFunc(l.bad, func(b catalog.Row) bool { return b.Path == p }) {
			return nil, nil
		}
		switch {
		case was == nil && r == nil: // not a session, and never listed
		case was != nil && was.Harness != h:
			return nil, nil
		case was != nil && r != nil: // changed
			if was.ID != r.ID || was.ParentSession != r.ParentSession || n.dupIDs[r.ID] {
				return nil, nil
			}
			e := &entry{Row: *r, key: was.key, parent: was.parent}
			gone[was] = true
			added = append(added, e)
			n.delta.put(e)
			if differs(was, e) {
				changed = append(changed, e.key)
			}
		case was != nil: // gone
			if n.dupIDs[was.ID] || len(n.kidsOf(was.key)) > 0 || slices.ContainsFunc(added, func(a *entry) bool { return a.parent == was.key }) {
				return nil, nil
			}
			gone[was] = true
			n.delta.remove(was)
		default: // new
			if r.ID != "" && (n.withID(r.ID) != nil || n.referenced(r.ID)) || n.referenced(r.Path) {
				return nil, nil
			}
			e := &entry{Row: *r, key: key(r.Harness, r.Path)}
			if n.find(e.key) != nil {
				return nil, nil
			}
			if ref := r.ParentSession; ref != "" {
				// A row that names itself nests nowhere, as newLibrary has
				// it; one whose parent is not listed would wait for it.
				self := ref == r.ID || ref == r.Path && n.withID(ref) == nil
				if !self {
					parent := n.resolve(ref)
					if parent == nil {
						return nil, nil
					}
					e.parent = parent.key
					// newLibrary nests no row deeper than this.
					seen := 0
					for k := e.parent; k != ""; k = n.find(k).parent {
						if seen > 64 {
							return nil, nil
						}
						seen++
					}
				}
				n.delta.refs[ref] = true
			}
			added = append(added, e)
			n.delta.put(e)
			changed = append(changed, e.key)
		}
	}
	slices.SortFunc(added, libraryOrder)
	n.rows = mergeEntries(l.rows, gone, added)
	var top []*entry
	under := map[string][]*entry{}
	wasUnder := map[string]bool{}
	for e := range gone {
		if e.parent != "" {
			wasUnder[e.parent] = true
		}
	}
	for _, e := range added {
		if e.parent == "" {
			top = append(top, e)
		} else {
			under[e.parent] = append(under[e.parent], e)
		}
	}
	n.top = mergeEntries(l.top, gone, top)
	for p := range wasUnder {
		if _, ok := under[p]; !ok {
			under[p] = nil
		}
	}
	for p, kids := range under {
		n.delta.kids[p] = mergeEntries(l.kidsOf(p), gone, kids)
	}
	return n, changed
}

// referenced reports whether a row names ref as its parent.
func (l *library) referenced(ref string) bool {
	return l.delta.refs[ref] || l.base.refs[ref]
}

// libraryOrder is the order of a library's rows as newLibrary has them
// of catalog.NewestFirst's merge, where a of a data-dir harness (Xdev,
// Omp) is placed among them: newest change first, then by harness in
// catalog.Every's order, then by the data dir's order.
func libraryOrder(a, b *entry) int {
	if c := b.Modified.Compare(a.Modified); c != 0 {
		return c
	}
	if a.Harness != b.Harness {
		return slices.Index(catalog.Every, a.Harness) - slices.Index(catalog.Every, b.Harness)
	}
	if c := b.Created.Compare(a.Created); c != 0 {
		return c
	}
	return strings.Compare(b.Path, a.Path)
}

// mergeEntries is rows (in libraryOrder) without those in gone, with
// added (sorted by it) in their places.
func mergeEntries(rows []*entry, gone map[*entry]bool, added []*entry) []*entry {
	out := make([]*entry, 0, len(rows)+len(added))
	keep := func(rows []*entry) {
		for _, e := range rows {
			if !gone[e] {
				out = append(out, e)
			}
		}
	}
	i := 0
	for _, a := range added {
		j := i + sort.Search(len(rows)-i, func(k int) bool { return libraryOrder(a, rows[i+k]) < 0 })
		keep(rows[i:j])
		out = append(out, a)
		i = j
	}
	keep(rows[i:])
	return out
}

// clone is a copy of the lookups a patch changes (its delta), made where
// none is yet.
func (x lookups) clone() lookups {
	return lookups{byKey: cloneOrMake(x.byKey), byPath: cloneOrMake(x.byPath), byID: cloneOrMake(x.byID),
		kids: cloneOrMake(x.kids), refs: cloneOrMake(x.refs)}
}

func cloneOrMake[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return maps.Clone(m)
}

// put makes e the row of its key, path and ID.
func (x lookups) put(e *entry) {
	x.byKey[e.key], x.byPath[e.Path] = e, e
	if e.ID != "" {
		x.byID[e.ID] = e
	}
}

// remove makes e's key, path and ID name no row.
func (x lookups) remove(e *entry) {
	x.byKey[e.key], x.byPath[e.Path] = nil, nil
	if e.ID != "" {
		x.byID[e.ID] = nil
	}
}
