package serve

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/secrets"
)

// A library is one listing of every session, as the pages show it: the
// rows newest first, each with its key, its parent and its children.
// A library is never changed once made; a new listing is a new library,
// so a page reads one without locks.
//
// A library is made whole from the harnesses' listings (newLibrary), or
// from the last one and the few rows a watcher's round changed (patched):
// a session appended to among 25,000 moves one row, and a patch costs
// what that row does, where making the library whole (its maps, its
// tree) cost tens of ms of the server's CPU for every append. A patched
// library is the one newLibrary would make of the same rows; a change a
// patch cannot make exactly (a row that changes the tree, an ID two rows
// hold, a cycle of parents) is made whole.
type library struct {
	rows []*entry // newest first
	top  []*entry // the rows nested under none, newest first
	// base are the lookups made whole, delta those a patch changed since
	// (a key there with a nil entry is gone).
	base, delta lookups
	// Facts of the rows made whole, which a patch keeps true: the IDs
	// more than one row holds, and whether any parents form a cycle.
	dupIDs map[string]bool
	cyclic bool
	bad    []catalog.Row
	failed map[catalog.Harness]error
	made   time.Time
}

// An entry is a row of a library, never changed once made: a row that
// changes is a new entry.
type entry struct {
	catalog.Row
	key    string // keyOf's
	parent string // the key of the row it nests under; "" for none
}

// lookups find a library's rows by key, path and ID, and its parents'
// children.
type lookups struct {
	byKey  map[string]*entry
	byPath map[string]*entry
	byID   map[string]*entry   // the newest row of each ID
	kids   map[string][]*entry // by the parent's key, newest first
	// refs are the rows' ParentSession values: a new row an ID or path
	// of which one names may change the tree.
	refs map[string]bool
}

// keyOf is the key of a session in URLs: a digest of its harness and
// path, which names it without saying where it lies.
func keyOf(h catalog.Harness, path string) string {
	sum := sha256.Sum256([]byte(string(h) + "\x00" + path))
	return hex.EncodeToString(sum[:10])
}

// newLibrary makes the library of rows (newest first; those with Err go
// aside), each keyed by key (keyOf, or a cache of it). It keeps all: the
// caller gives it up.
func newLibrary(all []catalog.Row, failed map[catalog.Harness]error, key func(catalog.Harness, string) string, now time.Time) *library {
	// Sized once: a listing of 25,000 sessions is made whole now and
	// then, and growing these as it goes would make it twice.
	n := len(all)
	l := &library{failed: failed, made: now, rows: make([]*entry, 0, n), dupIDs: map[string]bool{},
		base: lookups{byKey: make(map[string]*entry, n), byPath: make(map[string]*entry, n), byID: make(map[string]*entry, n),
			kids: map[string][]*entry{}, refs: map[string]bool{}}}
	es := make([]entry, n)
	for k := range all {
		r := &all[k]
		if r.Err != nil {
			l.bad = append(l.bad, *r)
			continue
		}
		e := &es[k]
		e.Row, e.key = *r, key(r.Harness, r.Path)
		l.rows = append(l.rows, e)
		l.base.byKey[e.key] = e
		l.base.byPath[e.Path] = e
		if e.ID == "" {
			continue
		}
		if _, ok := l.base.byID[e.ID]; ok {
			l.dupIDs[e.ID] = true
		} else {
			l.base.byID[e.ID] = e
		}
	}
	for _, e := range l.rows {
		if e.ParentSession != "" {
			l.base.refs[e.ParentSession] = true
			if p := l.resolve(e.ParentSession); p != nil && p != e {
				e.parent = p.key
			}
		}
	}
	// A cycle of parents (two files naming each other) nests nowhere: its
	// rows are shown at the top.
	for _, e := range l.rows {
		seen := 0
		for k := e.parent; k != ""; k = l.base.byKey[k].parent {
			if k == e.key || seen > 64 {
				e.parent, l.cyclic = "", true
				break
			}
			seen++
		}
	}
	for _, e := range l.rows {
		if e.parent != "" {
			l.base.kids[e.parent] = append(l.base.kids[e.parent], e)
		} else {
			l.top = append(l.top, e)
		}
	}
	return l
}

// resolve is the row a ParentSession value names: the newest row of
// that ID, else the row at that path; nil for none.
func (l *library) resolve(ref string) *entry {
	if e := l.withID(ref); e != nil {
		return e
	}
	return l.atPath(ref)
}

// find is the row of key, or nil.
func (l *library) find(key string) *entry { return look(l.delta.byKey, l.base.byKey, key) }

// atPath is the row at path, or nil.
func (l *library) atPath(path string) *entry { return look(l.delta.byPath, l.base.byPath, path) }

// withID is the newest row of id, or nil.
func (l *library) withID(id string) *entry { return look(l.delta.byID, l.base.byID, id) }

// kidsOf are the rows nested under the row of key, newest first.
func (l *library) kidsOf(key string) []*entry {
	if ks, ok := l.delta.kids[key]; ok {
		return ks
	}
	return l.base.kids[key]
}

// look is m's entry of k where m has one (nil: gone), else base's.
func look(m, base map[string]*entry, k string) *entry {
	if e, ok := m[k]; ok {
		return e
	}
	return base[k]
}

// parentOf is the row e nests under, or nil.
func (l *library) parentOf(e *entry) *entry {
	if e.parent == "" {
		return nil
	}
	return l.find(e.parent)
}

// keyOfPath is the key of the session at path (a search hit's), or "".
func (l *library) keyOfPath(path string) string {
	if e := l.atPath(path); e != nil {
		return e.key
	}
	if abs, err := filepath.Abs(path); err == nil {
		if e := l.atPath(abs); e != nil {
			return e.key
		}
	}
	return ""
}

// listed reports whether the library has a row at path, good or bad.
func (l *library) listed(path string) bool {
	return l.atPath(path) != nil || slices.ContainsFunc(l.bad, func(r catalog.Row) bool { return r.Path == path })
}

// under reports whether the library has a row under the directory dir.
func (l *library) under(dir string) bool {
	return slices.ContainsFunc(l.rows, func(e *entry) bool { return catalog.IsUnder(e.Path, dir) }) ||
		slices.ContainsFunc(l.bad, func(r catalog.Row) bool { return catalog.IsUnder(r.Path, dir) })
}

// all are the library's rows, newest first.
func (l *library) all() []catalog.Row {
	out := make([]catalog.Row, len(l.rows))
	for k, e := range l.rows {
		out[k] = e.Row
	}
	return out
}

// listOf is harness h's listing as the library holds it, with the rows
// at the paths of reread (h's files read again) replaced by theirs (a
// nil row: gone), in the harness's order: what relisting h whole would
// have made of it.
func (l *library) listOf(h catalog.Harness, reread map[string]*catalog.Row) []catalog.Row {
	var out []catalog.Row
	for _, e := range l.rows {
		if _, ok := reread[e.Path]; !ok && e.Harness == h {
			out = append(out, e.Row)
		}
	}
	for _, r := range l.bad {
		if _, ok := reread[r.Path]; !ok && r.Harness == h {
			out = append(out, r)
		}
	}
	if len(reread) == 0 {
		return out // not read again: in h's own order, whatever it is
	}
	var fresh []catalog.Row
	for _, r := range reread {
		if r != nil {
			fresh = append(fresh, *r)
		}
	}
	return catalog.MergeListing(out, fresh)
}

// listFilter is what the sessions page is asked to show.
type listFilter struct {
	Harness   string
	Project   string // a substring of the project's directory
	Text      string // a substring of the title, first message or id
	Status    string
	Since     time.Time
	Subagents bool
}

// keeps reports whether a row passes the filter.
func (f *listFilter) keeps(r *catalog.Row) bool {
	if !f.Subagents && r.Subagent {
		return false
	}
	if f.Harness != "" && string(r.Harness) != f.Harness {
		return false
	}
	if f.Status != "" && string(r.Status) != f.Status {
		return false
	}
	if !f.Since.IsZero() && r.Modified.Before(f.Since) {
		return false
	}
	if f.Project != "" && !containsFold(r.Cwd, f.Project) {
		return false
	}
	if f.Text != "" && !containsFold(r.Title, f.Text) && !containsFold(r.FirstMessage, f.Text) && !strings.HasPrefix(strings.ToLower(r.ID), strings.ToLower(f.Text)) {
		return false
	}
	return true
}

// containsFold reports whether s holds sub, ignoring case.
func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// filtered are the rows the sessions page lists for f: a top-level row
// that passes, or a nested one that passes under a parent that does not
// (it is then listed at the top, so that a filter never hides what it
// matches).
func (l *library) filtered(f *listFilter) []*entry {
	var out []*entry
	for _, e := range l.top {
		if f.keeps(&e.Row) {
			out = append(out, e)
			continue
		}
		out = l.orphans(out, e, f)
	}
	return out
}

// orphans appends the rows under e that f keeps, whose parent it does
// not: they are shown at the top of a filtered list.
func (l *library) orphans(out []*entry, e *entry, f *listFilter) []*entry {
	for _, k := range l.kidsOf(e.key) {
		if f.keeps(&k.Row) {
			out = append(out, k)
		} else {
			out = l.orphans(out, k, f)
		}
	}
	return out
}

// projects are the distinct project directories, most sessions first,
// each as a person is shown it (its secrets masked: projectOf reads one
// back).
func (l *library) projects(n int) []string {
	count := map[string]int{}
	for _, r := range l.rows {
		if r.Cwd != "" {
			count[r.Cwd]++
		}
	}
	out := make([]string, 0, len(count))
	for p := range count {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b string) int {
		if c := count[b] - count[a]; c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	if len(out) > n {
		out = out[:n]
	}
	for k, p := range out {
		out[k] = secrets.Mask(p)
	}
	return out
}

// projectOf is the project a form names: where a project's name holds a
// secret, the form has it masked (projects) and this is the project
// whose masked name it is; else the form's text.
func (l *library) projectOf(shown string) string {
	if !strings.Contains(shown, "[REDACTED ") {
		return shown
	}
	for _, r := range l.rows {
		if r.Cwd != "" && secrets.Mask(r.Cwd) == shown {
			return r.Cwd
		}
	}
	return shown
}

// harnesses are the harnesses with sessions, in catalog.Every's order.
func (l *library) harnesses() []string {
	seen := map[catalog.Harness]bool{}
	for _, r := range l.rows {
		seen[r.Harness] = true
	}
	var out []string
	for _, h := range catalog.Every {
		if seen[h] {
			out = append(out, string(h))
		}
	}
	return out
}

// changed are the keys of the rows of l that are new or differ from
// old's (size or time): the sessions whose open pages are told.
func (l *library) changed(old *library) []string {
	var out []string
	for _, e := range l.rows {
		var was *entry
		if old != nil {
			was = old.find(e.key)
		}
		if differs(was, e) {
			out = append(out, e.key)
		}
	}
	return out
}

// differs reports whether the row e is new (was is nil) or differs from
// was in what an open page is told of (size or time).
func differs(was, e *entry) bool {
	return was == nil || was.Size != e.Size || !was.Modified.Equal(e.Modified)
}
