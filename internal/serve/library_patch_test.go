package serve

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/catalog"
)

// world is what the harnesses list, by harness, in each one's order: the
// truth a library is checked against.
type world struct {
	rnd   *rand.Rand
	lists map[catalog.Harness][]catalog.Row
	next  int
	t0    time.Time
	// chain: each new row names the last one made as its parent, so
	// that parents come to nest deeper than a library nests them.
	chain bool
}

// dataDirs are the harnesses a library is patched for; Claude is listed
// whole, in an order of its own.
var dataDirs = []catalog.Harness{catalog.Xdev, catalog.Omp}

func newWorld(seed uint64, n int, chain bool) *world {
	w := &world{rnd: rand.New(rand.NewPCG(seed, seed)), lists: map[catalog.Harness][]catalog.Row{},
		t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), chain: chain}
	if chain {
		n = 60 + n%5 // a little less deep than a library nests
	}
	for range n {
		h := []catalog.Harness{catalog.Xdev, catalog.Omp, catalog.Omp, catalog.Claude}[w.rnd.IntN(4)]
		w.put(h, w.row(h))
	}
	return w
}

// when is a time among few, so that rows tie often.
func (w *world) when() time.Time { return w.t0.Add(time.Duration(w.rnd.IntN(40)) * time.Minute) }

// ref is a ParentSession: mostly none, else an ID or path listed, one
// listed nowhere, or (self) the row's own.
func (w *world) ref(self catalog.Row) string {
	all := w.all()
	if w.chain {
		return fmt.Sprintf("id-%d", w.next-1)
	}
	switch k := w.rnd.IntN(14); {
	case k < 6 || len(all) == 0:
		return ""
	case k < 8:
		return all[w.rnd.IntN(len(all))].ID
	case k < 10:
		return all[w.rnd.IntN(len(all))].Path
	case k < 11:
		return "nowhere"
	case k < 13: // a session made later
		return []string{fmt.Sprintf("id-%d", w.next+1+w.rnd.IntN(3)),
			fmt.Sprintf("/d/%s/p%d/%04d.jsonl", dataDirs[w.rnd.IntN(2)], (w.next+1)%3, w.next+1)}[w.rnd.IntN(2)]
	default:
		return []string{self.ID, self.Path}[w.rnd.IntN(2)]
	}
}

func (w *world) row(h catalog.Harness) catalog.Row {
	w.next++
	r := catalog.Row{Harness: h, Path: fmt.Sprintf("/d/%s/p%d/%04d.jsonl", h, w.next%3, w.next), Created: w.when(),
		Title: fmt.Sprintf("session %d", w.next), Size: int64(w.next)}
	r.Modified = r.Created.Add(time.Duration(w.rnd.IntN(3)) * time.Minute)
	switch k := w.rnd.IntN(10); {
	case w.chain:
		r.ID = fmt.Sprintf("id-%d", w.next)
	case k == 0:
		r.ID = "" // a file with no header yet
	case k == 1 && len(w.all()) > 0:
		r.ID = w.all()[w.rnd.IntN(len(w.all()))].ID // a copy
	default:
		r.ID = fmt.Sprintf("id-%d", w.next)
	}
	r.ParentSession = w.ref(r)
	r.Subagent = r.ParentSession != "" && w.rnd.IntN(2) == 0
	if !w.chain && w.rnd.IntN(25) == 0 {
		r.Err = errors.New("not a session")
	}
	return r
}

// put lists r in h's order (for Claude: newest first, then by path).
func (w *world) put(h catalog.Harness, r catalog.Row) {
	order := catalog.DataDirOrder
	if h == catalog.Claude {
		order = func(a, b catalog.Row) int {
			return cmpOr(b.Modified.Compare(a.Modified), strings.Compare(a.Path, b.Path))
		}
	}
	rows := w.lists[h]
	i, _ := slices.BinarySearchFunc(rows, r, order)
	w.lists[h] = slices.Insert(rows, i, r)
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

func (w *world) all() []catalog.Row {
	var out []catalog.Row
	for _, h := range catalog.Every {
		out = append(out, w.lists[h]...)
	}
	return out
}

// take removes and returns the row at path of h.
func (w *world) take(h catalog.Harness, path string) (catalog.Row, bool) {
	for k, r := range w.lists[h] {
		if r.Path == path {
			w.lists[h] = slices.Delete(w.lists[h], k, k+1)
			return r, true
		}
	}
	return catalog.Row{}, false
}

// round changes a few rows of the data dirs (or lists Claude whole) and
// returns what a server's round would hand nextLibrary.
func (w *world) round() (whole map[catalog.Harness][]catalog.Row, reread map[catalog.Harness]map[string]*catalog.Row) {
	if w.rnd.IntN(15) == 0 {
		rows := w.lists[catalog.Claude]
		w.lists[catalog.Claude] = nil
		for _, r := range rows {
			if w.rnd.IntN(4) == 0 {
				r.Modified = r.Modified.Add(time.Minute)
			}
			w.put(catalog.Claude, r)
		}
		w.put(catalog.Claude, w.row(catalog.Claude))
		return map[catalog.Harness][]catalog.Row{catalog.Claude: slices.Clone(w.lists[catalog.Claude])}, nil
	}
	reread = map[catalog.Harness]map[string]*catalog.Row{}
	for range 1 + w.rnd.IntN(3) {
		h := dataDirs[w.rnd.IntN(2)]
		rows := w.lists[h]
		if reread[h] == nil {
			reread[h] = map[string]*catalog.Row{}
		}
		var r catalog.Row
		switch k := w.rnd.IntN(20); {
		case k < 12 && len(rows) > 0: // appended to
			r, _ = w.take(h, rows[w.rnd.IntN(len(rows))].Path)
			r.Modified, r.Size = r.Modified.Add(time.Duration(w.rnd.IntN(3))*time.Minute), r.Size+100
			if w.rnd.IntN(10) == 0 {
				r.Err = nil
			}
			if w.rnd.IntN(20) == 0 {
				r.ParentSession = w.ref(r)
			}
		case k < 15 && len(rows) > 0: // removed
			r, _ = w.take(h, rows[w.rnd.IntN(len(rows))].Path)
			reread[h][r.Path] = nil
			continue
		case k < 16: // not a session
			reread[h][fmt.Sprintf("/d/%s/p0/notes.txt", h)] = nil
			continue
		default: // new
			r = w.row(h)
		}
		w.put(h, r)
		reread[h][r.Path] = &r
	}
	return nil, reread
}

// TestPatchedLibraryIsWhole: on many random sequences of appends, new
// sessions, removals, unreadable files and whole listings, among IDs
// held twice, parents named by ID, path, nowhere and themselves, the
// library a round makes is the one newLibrary makes of the same rows,
// and tells of the same sessions; most rounds are patches.
func TestPatchedLibraryIsWhole(t *testing.T) {
	patches, rounds := 0, 0
	key := func(h catalog.Harness, path string) string { return keyOf(h, path) }
	for seed := range uint64(300) {
		w := newWorld(seed, 5+int(seed%60), seed%7 == 0)
		t0 := time.Now()
		lib := newLibrary(catalog.NewestFirst(slices.Collect(func(yield func([]catalog.Row) bool) {
			for _, h := range catalog.Every {
				yield(slices.Clone(w.lists[h]))
			}
		})), nil, key, t0)
		for round := range 40 {
			whole, reread := w.round()
			got, changed := nextLibrary(lib, whole, reread, key, nil, t0)
			var lists [][]catalog.Row
			for _, h := range catalog.Every {
				lists = append(lists, slices.Clone(w.lists[h]))
			}
			want := newLibrary(catalog.NewestFirst(lists), nil, key, t0)
			what := fmt.Sprintf("seed %d, round %d", seed, round)
			sameLibrary(t, what, got, want)
			if a, b := slices.Sorted(slices.Values(changed)), slices.Sorted(slices.Values(want.changed(lib))); !slices.Equal(a, b) {
				t.Fatalf("%s: told of %d sessions, want %d", what, len(a), len(b))
			}
			if got.delta.byKey != nil { // made whole, a library has no delta
				patches++
			}
			rounds++
			lib = got
		}
	}
	t.Logf("%d of %d rounds patched", patches, rounds)
	if patches < rounds/3 {
		t.Errorf("only %d of %d rounds patched", patches, rounds)
	}
}

// sameLibrary fails t where got and want differ in what a page reads.
func sameLibrary(t *testing.T, what string, got, want *library) {
	t.Helper()
	keys := func(es []*entry) []string {
		out := make([]string, len(es))
		for k, e := range es {
			out[k] = e.key
		}
		return out
	}
	if a, b := keys(got.rows), keys(want.rows); !slices.Equal(a, b) {
		t.Fatalf("%s: rows\n got %v\nwant %v", what, a, b)
	}
	if a, b := keys(got.top), keys(want.top); !slices.Equal(a, b) {
		t.Fatalf("%s: top\n got %v\nwant %v", what, a, b)
	}
	for k, e := range want.rows {
		g := got.rows[k]
		if g.parent != e.parent || g.Path != e.Path || g.Size != e.Size || !g.Modified.Equal(e.Modified) || g.ID != e.ID {
			t.Fatalf("%s: row %s: got %+v, want %+v", what, e.key, g, e)
		}
		if a, b := keys(got.kidsOf(e.key)), keys(want.kidsOf(e.key)); !slices.Equal(a, b) {
			t.Fatalf("%s: kids of %s: got %v, want %v", what, e.key, a, b)
		}
		if got.find(e.key) != g || got.atPath(e.Path) != g {
			t.Fatalf("%s: %s is not found by its key and path", what, e.key)
		}
		if e.ID != "" && got.withID(e.ID).key != want.withID(e.ID).key {
			t.Fatalf("%s: ID %s names %s, want %s", what, e.ID, got.withID(e.ID).key, want.withID(e.ID).key)
		}
	}
	for _, e := range got.delta.byKey {
		if e != nil && want.find(e.key) == nil {
			t.Fatalf("%s: %s is found, and listed nowhere", what, e.key)
		}
	}
	for k, e := range got.delta.byPath {
		if e == nil && want.atPath(k) != nil {
			t.Fatalf("%s: %s is gone, and listed", what, k)
		}
	}
	bad := func(rows []catalog.Row) []string {
		var out []string
		for _, r := range rows {
			out = append(out, r.Path)
		}
		slices.Sort(out)
		return out
	}
	if a, b := bad(got.bad), bad(want.bad); !slices.Equal(a, b) {
		t.Fatalf("%s: bad rows %v, want %v", what, a, b)
	}
}

// BenchmarkRelistAppend: the library after one session of 25,000 was
// appended to, as the views loop makes it: patched, and made whole.
func BenchmarkRelistAppend(b *testing.B) {
	w := newWorld(1, 0, false)
	for k := range 25000 {
		h := []catalog.Harness{catalog.Omp, catalog.Claude, catalog.Codex}[k%3]
		r := catalog.Row{Harness: h, ID: fmt.Sprintf("id-%d", k), Path: fmt.Sprintf("/d/%s/p%d/%05d.jsonl", h, k%200, k),
			Created: w.t0.Add(time.Duration(k) * time.Second), Size: int64(k), Title: "a session"}
		r.Modified = r.Created
		if k%30 == 0 && k > 3 {
			r.ParentSession = fmt.Sprintf("id-%d", k-3) // a subagent's
		}
		w.lists[h] = append(w.lists[h], r)
	}
	for _, rows := range w.lists {
		slices.Reverse(rows)
	}
	key := func(h catalog.Harness, path string) string { return keyOf(h, path) }
	lists := func() [][]catalog.Row {
		var out [][]catalog.Row
		for _, h := range catalog.Every {
			out = append(out, slices.Clone(w.lists[catalog.Harness(h)]))
		}
		return out
	}
	for _, whole := range []bool{false, true} {
		b.Run(map[bool]string{false: "patched", true: "whole"}[whole], func(b *testing.B) {
			lib := newLibrary(catalog.NewestFirst(lists()), nil, key, time.Now())
			b.ReportAllocs()
			for b.Loop() {
				rows := w.lists[catalog.Omp]
				r, _ := w.take(catalog.Omp, rows[len(rows)/2].Path)
				r.Modified, r.Size = r.Modified.Add(time.Hour), r.Size+100
				w.put(catalog.Omp, r)
				var next *library
				if whole {
					next = newLibrary(catalog.NewestFirst(lists()), nil, key, time.Now())
					next.changed(lib)
				} else {
					next, _ = nextLibrary(lib, nil, map[catalog.Harness]map[string]*catalog.Row{catalog.Omp: {r.Path: &r}}, key, nil, time.Now())
				}
				lib = next
			}
		})
	}
}
