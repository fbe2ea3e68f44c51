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
type library struct {
	rows   []catalog.Row
	keys   []string       // keys[i] is rows[i]'s
	byKey  map[string]int // key → row
	byPath map[string]int
	parent []int   // parent[i] is the row rows[i] nests under, or -1
	kids   [][]int // kids[i] are the rows nested under rows[i], newest first
	top    []int   // the rows nested under none, newest first
	bad    []catalog.Row
	failed map[catalog.Harness]error
	made   time.Time
}

// keyOf is the key of a session in URLs: a digest of its harness and
// path, which names it without saying where it lies.
func keyOf(h catalog.Harness, path string) string {
	sum := sha256.Sum256([]byte(string(h) + "\x00" + path))
	return hex.EncodeToString(sum[:10])
}

// newLibrary makes the library of rows (newest first; those with Err go
// aside), each keyed by key (keyOf, or a cache of it). It keeps all, and
// its order: the caller gives it up.
func newLibrary(all []catalog.Row, failed map[catalog.Harness]error, key func(catalog.Harness, string) string, now time.Time) *library {
	// Sized once: a listing of 10,000 sessions is made every few seconds
	// while they change, and growing these as it goes would make it twice.
	l := &library{byKey: make(map[string]int, len(all)), byPath: make(map[string]int, len(all)), failed: failed, made: now,
		rows: all[:0]}
	for _, r := range all {
		if r.Err != nil {
			l.bad = append(l.bad, r)
			continue
		}
		l.rows = append(l.rows, r)
	}
	n := len(l.rows)
	l.keys = make([]string, n)
	byID := make(map[string]int, n)
	for i, r := range l.rows {
		l.keys[i] = key(r.Harness, r.Path)
		l.byKey[l.keys[i]] = i
		l.byPath[r.Path] = i
		if _, ok := byID[r.ID]; !ok && r.ID != "" {
			byID[r.ID] = i
		}
	}
	l.parent = make([]int, n)
	for i, r := range l.rows {
		l.parent[i] = -1
		p := r.ParentSession
		if p == "" {
			continue
		}
		k, ok := byID[p]
		if !ok {
			k, ok = l.byPath[p]
		}
		if ok && k != i {
			l.parent[i] = k
		}
	}
	// A cycle of parents (two files naming each other) nests nowhere: its
	// rows are shown at the top.
	for i := range l.parent {
		seen := 0
		for k := l.parent[i]; k >= 0; k = l.parent[k] {
			if k == i || seen > 64 {
				l.parent[i] = -1
				break
			}
			seen++
		}
	}
	l.kids = make([][]int, n)
	for i := range l.rows {
		if p := l.parent[i]; p >= 0 {
			l.kids[p] = append(l.kids[p], i)
		} else {
			l.top = append(l.top, i)
		}
	}
	return l
}

// find is the row of key, or -1.
func (l *library) find(key string) int {
	if i, ok := l.byKey[key]; ok {
		return i
	}
	return -1
}

// keyOfPath is the key of the session at path (a search hit's), or "".
func (l *library) keyOfPath(path string) string {
	if i, ok := l.byPath[path]; ok {
		return l.keys[i]
	}
	if abs, err := filepath.Abs(path); err == nil {
		if i, ok := l.byPath[abs]; ok {
			return l.keys[i]
		}
	}
	return ""
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
func (l *library) filtered(f *listFilter) []int {
	var out []int
	for _, i := range l.top {
		if f.keeps(&l.rows[i]) {
			out = append(out, i)
			continue
		}
		out = l.orphans(out, i, f)
	}
	return out
}

// orphans appends the rows under i that f keeps, whose parent it does
// not: they are shown at the top of a filtered list.
func (l *library) orphans(out []int, i int, f *listFilter) []int {
	for _, k := range l.kids[i] {
		if f.keeps(&l.rows[k]) {
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
	for i, r := range l.rows {
		k := -1
		if old != nil {
			k = old.find(l.keys[i])
		}
		if k < 0 || old.rows[k].Size != r.Size || !old.rows[k].Modified.Equal(r.Modified) {
			out = append(out, l.keys[i])
		}
	}
	return out
}
