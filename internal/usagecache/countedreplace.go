package usagecache

import (
	"errors"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/xdev/xdev/internal/regularfile"
	"github.com/xdev/xdev/internal/usage"
)

// A Recount is a session of a counted file counted again by its digest
// alone (usage.Session.Alone): the session as it was read now (known in
// the file by its harness and path), and its digest. A session may have
// no groups in the file where Ungrouped says so: one the file does not
// count (New, a file new since), or one it counts with none (no calls
// then), which skipped WasSkipped lines as counted; its groups are put
// after the file's.
type Recount struct {
	Session    *usage.Session
	Digest     []usage.Bucket
	Ungrouped  bool
	New        bool // of Ungrouped
	WasSkipped int
	// Was is set by ReplaceCounted: the session's groups in the file
	// before, copied (none where it had none), of the session as the
	// file knew it.
	Was []usage.Group
}

// ReplaceCounted writes the counted file at path anew, atomically, with
// the groups of each session rs names replaced by its digest's, where
// its groups were: what a ledger built again would count where those
// sessions alone changed, each counted by its digest alone before and
// after. The file read must be one whole (its Files were, none Racy; a
// server's, where k is: Counted.Server), and each session of rs one of
// its groups' and its own rollup alone (no group of another rolls up to
// it, its groups together); where not, nothing is written and the error
// says why. The head written is k's Files, Racy and Server, the file's
// Sessions with the new ones, and its Skipped moved by what each
// session's moved; it is returned, with no groups.
//
// Where it may, the file is spliced (countedsplice.go): the old file's
// bytes, with the recounts' table entries, groups, sums and status in
// their places, the groups walked once. Else the groups read are never
// held: the file's groups part is read once (its bytes, about 400 a
// session) and decoded again each time the writer asks for them
// (writeCounted), so that a session's change costs what a read of the
// file costs, not a ledger of every session. Either way, what a reader
// reads of the file is the same (but the order of the models the head
// names).
func ReplaceCounted(path string, was StampSum, k Counted, rs []Recount) (Counted, error) {
	fail := func(format string, args ...any) (Counted, error) {
		return Counted{}, fmt.Errorf("%s: "+format, append([]any{path}, args...)...)
	}
	f, fi, err := regularfile.OpenRaw(path)
	if err != nil {
		return Counted{}, err
	}
	defer f.Close()
	size := fi.Size()
	if size > maxCounted || size < int64(len(countedMagic))+countedTrailer {
		return fail("%w", errNotCounted)
	}
	read := func(p countedPart) ([]byte, error) {
		b := make([]byte, p.n)
		if _, err := f.ReadAt(b, p.off); err != nil {
			return nil, err
		}
		if crc32.ChecksumIEEE(b) != p.crc {
			return nil, errNotCounted
		}
		return b, nil
	}
	var t [countedTrailer]byte
	if _, err := f.ReadAt(t[:], size-countedTrailer); err != nil {
		return fail("%w", err)
	}
	p, ok := partsOf(t[:], size)
	if !ok {
		return fail("%w", errNotCounted)
	}
	headBytes, err := read(p.head)
	if err != nil {
		return fail("%w", err)
	}
	old, models, ok := decodeCountedHead(headBytes)
	switch {
	case !ok:
		return fail("%w", errNotCounted)
	case old.Files != was:
		return fail("not the files expected")
	case old.Racy != 0:
		return fail("counted from files too recent to be known by their stamps")
	case k.Server != 0 && old.Server == 0:
		return fail("not a server's: its cache need not hold every session")
	}
	body, err := read(p.groups)
	if err != nil {
		return fail("%w", err)
	}
	if !noSplice {
		head, err := spliceCounted(path, f, p, old, models, body, k, rs)
		if err == nil {
			return head, nil
		}
		if !errors.Is(err, errNotSpliced) {
			return fail("%w", err)
		}
	}
	r := &usageReader{b: unsafeString(body)}
	sessions := r.table()
	if r.bad {
		return fail("%w", errNotCounted)
	}
	groupsAt := r.b // the count of groups, then the groups
	// Each recount's session in the table: replaced there, by value, so
	// that the groups that name it name the session as read now; was is
	// a copy of it as it was, for its groups before (Recount.Was).
	type recounted struct {
		digest []usage.Bucket
		k      int // in rs
		was    *usage.Session
	}
	recount := map[*usage.Session]recounted{}
	skipped, sessionsN := old.Skipped, old.Sessions
	var added []*usage.Session // the recounts of no groups in the file, in rs's order
	for k := range rs {
		rc := &rs[k]
		rc.Was = nil
		at := -1
		for i := range sessions {
			if sessions[i].Harness == rc.Session.Harness && sessions[i].Path == rc.Session.Path {
				if at >= 0 {
					return fail("two sessions of %s", rc.Session.Path)
				}
				at = i
			}
		}
		switch {
		case at >= 0 && rc.New:
			return fail("%s counted already", rc.Session.Path)
		case at < 0 && !rc.Ungrouped:
			return fail("no groups of %s", rc.Session.Path)
		case at < 0:
			s := *rc.Session
			s.Calls = nil
			if slices.ContainsFunc(added, func(a *usage.Session) bool { return a.Harness == s.Harness && a.Path == s.Path }) {
				return fail("%s recounted twice", s.Path)
			}
			added = append(added, &s)
			recount[&s] = recounted{digest: rc.Digest, k: k}
			skipped += s.Skipped - rc.WasSkipped
			if rc.New {
				sessionsN++
			}
			continue
		}
		s := &sessions[at]
		if _, ok := recount[s]; ok {
			return fail("%s recounted twice", rc.Session.Path)
		}
		skipped += rc.Session.Skipped - s.Skipped
		was := new(usage.Session)
		*was = *s
		*s = *rc.Session
		s.Calls = nil
		recount[s] = recounted{digest: rc.Digest, k: k, was: was}
	}
	// groups hands out the groups read, a recount's in place of the
	// first of its session's; failed is what stopped it.
	var failed error
	passes := 0
	groups := func(yield func(*usage.Group) bool) {
		passes++
		r := &usageReader{b: groupsAt}
		n := r.countOf(2 + bucketMinBytes)
		g := usage.Group{Bucket: new(usage.Bucket)}
		done := map[*usage.Session]bool{} // the recounts handed out
		var prev *usage.Session           // the last group's session
		for range n {
			if r.group(sessions, models, &g); r.bad {
				failed = errNotCounted
				return
			}
			last := prev
			prev = g.Session
			rc, ok := recount[g.Session]
			if !ok {
				if _, ok := recount[g.Rollup]; ok {
					failed = errors.New("a session recounted is another's rollup")
					return
				}
				if !yield(&g) {
					return
				}
				continue
			}
			if g.Rollup != g.Session {
				failed = errors.New("a session recounted rolls up to another")
				return
			}
			if passes == 1 {
				b := *g.Bucket
				rs[rc.k].Was = append(rs[rc.k].Was, usage.Group{Session: rc.was, Rollup: rc.was, Bucket: &b})
			}
			if done[g.Session] {
				if last != g.Session {
					// A ledger's groups of a session come together: these
					// are not one's alone.
					failed = errors.New("the groups of a session recounted are not together")
					return
				}
				continue // its other groups, replaced already
			}
			done[g.Session] = true
			for k := range rc.digest {
				if !yield(&usage.Group{Session: g.Session, Rollup: g.Session, Bucket: &rc.digest[k]}) {
					return
				}
			}
		}
		if len(r.b) != 0 {
			failed = errNotCounted
			return
		}
		for _, s := range added {
			digest := recount[s].digest
			for k := range digest {
				if !yield(&usage.Group{Session: s, Rollup: s, Bucket: &digest[k]}) {
					return
				}
			}
		}
	}
	head := Counted{Files: k.Files, Racy: k.Racy, Server: k.Server, Sessions: sessionsN, Skipped: skipped}
	// writeCounted asks failed after its first pass over the groups,
	// before it writes anything, and once more before the file is whole.
	if err := writeCounted(path, head, groups, func() error { return failed }); err != nil {
		return fail("%w", err)
	}
	return head, nil
}
