package pick

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/xdev/xdev/internal/catalog"
)

// An item is a row of the list: what is shown of a session, what a
// filter matches and what resumes it, no more (25,000 of them are
// held).
type item struct {
	harness              catalog.Harness
	id, title, cwd, path string
	// message is the start of the first message (messageKept bytes).
	message string
	// low are the lower-cased texts a filter looks for words in, made by
	// the first filter (lower): a picker that is not typed into makes
	// none.
	low      *lowTexts
	modified int64 // unix ns
	size     int64
	subagent bool
	// here: the session is of the current project.
	here bool
}

// messageKept bounds how much of a first message an item keeps: a
// person finds a session by how it began, and 25,000 rows must filter
// within a keystroke and fit in the picker's memory. A snapshot keeps as
// much (catalog.WriteSnapshot).
const messageKept = 100

func newItem(r *catalog.Row, cwd string) item {
	msg := r.FirstMessage
	if len(msg) > messageKept {
		n := messageKept
		for n > 0 && !utf8.RuneStart(msg[n]) { // not in a character's middle
			n--
		}
		msg = msg[:n]
	}
	it := item{harness: r.Harness, id: r.ID, title: r.Title, cwd: r.Cwd, path: r.Path, message: msg,
		modified: r.Modified.UnixNano(), size: r.Size, subagent: r.Subagent, here: sameProject(r.Cwd, cwd)}
	if len(msg) < len(r.FirstMessage) {
		it.message = strings.Clone(msg) // not the piece of the whole message, which it would keep
	}
	return it
}

// lowTexts are an item's texts lower-cased where they are not ASCII
// (lowered), else "", and the ASCII letters and digits its texts hold
// (letterSet): a word with a letter none holds matches none, and most
// rows are passed over so, without a look at their texts.
type lowTexts struct {
	title, message, cwd, id string
	letters                 uint64
}

// lower is the item's lower-cased texts, made once.
func (it *item) lower() *lowTexts {
	if it.low == nil {
		l := &lowTexts{title: lowered(it.title), message: lowered(it.message), cwd: lowered(it.cwd), id: lowered(it.id)}
		// Of the lower-cased texts: "İ" is not ASCII, its "i̇" is.
		for _, f := range [...]field{{it.title, l.title}, {it.message, l.message}, {it.cwd, l.cwd}, {it.id, l.id}, {string(it.harness), ""}} {
			if f.low != "" {
				l.letters |= letterSet(f.low)
			} else {
				l.letters |= letterSet(f.text)
			}
		}
		it.low = l
	}
	return it.low
}

// letterSet is the set of ASCII letters (either case, as one) and digits
// in s, a bit each.
func letterSet(s string) uint64 {
	var set uint64
	for k := 0; k < len(s); k++ {
		switch c := s[k]; {
		case 'a' <= c && c <= 'z':
			set |= 1 << (c - 'a')
		case 'A' <= c && c <= 'Z':
			set |= 1 << (c - 'A')
		case '0' <= c && c <= '9':
			set |= 1 << (26 + c - '0')
		}
	}
	return set
}

// row is the catalog's row of the item's session, as far as the item
// keeps it: enough to open it and to resume it.
func (it *item) row() catalog.Row {
	return catalog.Row{Harness: it.harness, ID: it.id, Title: it.title, Cwd: it.cwd, Path: it.path,
		Modified: time.Unix(0, it.modified), Size: it.size, Subagent: it.subagent, FirstMessage: it.message}
}

// sameProject reports whether a session made in dir is of the project
// the picker runs in, cwd: the same directory, one under it, or one it
// is under (a subdirectory of the project), but the home directory or
// the root, which every project is under.
func sameProject(dir, cwd string) bool {
	if dir == "" || cwd == "" || !filepath.IsAbs(dir) {
		return false
	}
	dir = filepath.Clean(dir)
	if dir == cwd || catalog.IsUnder(dir, cwd) {
		return true
	}
	home, _ := os.UserHomeDir()
	return catalog.IsUnder(cwd, dir) && dir != filepath.Clean(home) && dir != filepath.Dir(dir)
}

// listOrder is the list's order: the current project's sessions first,
// then newest first, then by path (the same rows always show the same).
func listOrder(a, b *item) int {
	if a.here != b.here {
		if a.here {
			return -1
		}
		return 1
	}
	return cmp.Or(cmp.Compare(b.modified, a.modified), strings.Compare(a.path, b.path))
}

// merge is items with the rows of a listing of harness h in place of
// those of h it held (a place listed again), in the list's order: the
// listing's rows sorted, then merged with the rest, which are in order,
// from the back, in items' own array where it has the room (25,000
// items copied twice for each of 15 places had cost 150 MB of
// allocations).
func merge(items []item, h catalog.Harness, rows []catalog.Row, cwd string) []item {
	fresh := make([]item, 0, len(rows))
	for k := range rows {
		if rows[k].Err == nil { // not a session: a listing says so, a picker has nothing to resume
			fresh = append(fresh, newItem(&rows[k], cwd))
		}
	}
	slices.SortFunc(fresh, func(a, b item) int { return listOrder(&a, &b) })
	old := len(items)
	kept := items
	if h != "" {
		kept = items[:0]
		for k := range items {
			if items[k].harness != h {
				kept = append(kept, items[k])
			}
		}
	}
	n, total := len(kept), len(kept)+len(fresh)
	out := slices.Grow(kept, len(fresh))[:total]
	for i, j, k := n-1, len(fresh)-1, total-1; j >= 0; k-- {
		if i >= 0 && listOrder(&out[i], &fresh[j]) > 0 {
			out[k] = out[i]
			i--
		} else {
			out[k] = fresh[j]
			j--
		}
	}
	if total < old && cap(out) >= old {
		clear(out[total:old]) // what is no longer listed is let go
	}
	return out
}
