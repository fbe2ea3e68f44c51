package usagecache

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/testscale"
	"github.com/xdev/xdev/internal/usage"
)

// TestReplaceCounted: over random ledgers' groups, a counted file with
// some sessions counted alone recounted (their groups replaced, their
// table entries read anew: title, skipped) reads back as the file
// WriteCounted writes of the groups with those sessions' replaced where
// they were, and is that file byte for byte where it was not spliced;
// and a recount that is not one session's alone, or of a file not as
// expected, writes nothing.
func TestReplaceCounted(t *testing.T) {
	at := time.Now()
	defer func(c func() time.Time) { countedNow = c }(countedNow)
	countedNow = func() time.Time { return at }
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(7, 9))
	was := StampSum{N: 3, Lo: 4, Hi: 5}
	now := StampSum{N: 3, Lo: 6, Hi: 7}
	replaced := 0
	for round := range testscale.N(60, 300) {
		groups := randomGroups(r, 1+r.IntN(40))
		// The sessions counted alone: every group of theirs their own,
		// and none of another's rolling up to them.
		var order []*usage.Session
		alone := map[*usage.Session]bool{}
		for _, g := range groups {
			if _, ok := alone[g.Session]; !ok {
				order = append(order, g.Session)
				alone[g.Session] = true
			}
			if g.Rollup != g.Session {
				alone[g.Session], alone[g.Rollup] = false, false
			}
		}
		var rs []Recount
		for _, s := range order {
			if !alone[s] || r.IntN(3) != 0 {
				continue
			}
			ns := *s
			ns.Title, ns.Skipped = fmt.Sprint("now ", round), r.IntN(5)
			var digest []usage.Bucket
			for _, g := range randomGroups(r, 1)[:] {
				digest = append(digest, *g.Bucket)
			}
			// Ungrouped (it may have no groups) changes nothing where it has.
			rs = append(rs, Recount{Session: &ns, Digest: digest, Ungrouped: r.IntN(2) == 0})
		}
		// Sessions new to the file, some with no calls, and one it counts
		// with no groups (no calls then).
		added := 0
		for k := range r.IntN(3) {
			ns := &usage.Session{Harness: "claude", Path: fmt.Sprintf("/new/%d/%d.jsonl", round, k), ID: fmt.Sprint("new", k), Skipped: r.IntN(3)}
			var digest []usage.Bucket
			for _, g := range randomGroups(r, r.IntN(3)) {
				digest = append(digest, *g.Bucket)
			}
			fresh := r.IntN(3) != 0
			rc := Recount{Session: ns, Digest: digest, Ungrouped: true, New: fresh}
			if !fresh {
				rc.WasSkipped = r.IntN(3)
			} else {
				added++
			}
			rs = append(rs, rc)
		}
		path, want := filepath.Join(dir, "got"), filepath.Join(dir, "want")
		k := Counted{Groups: groups, Files: was, Sessions: len(order) + 2, Skipped: 10}
		if err := WriteCounted(path, k); err != nil {
			t.Fatal(err)
		}
		// What a ledger built again would count: the recounts' groups in
		// place of theirs, their table entries as read now.
		byPath := map[string]Recount{}
		for _, rc := range rs {
			byPath[rc.Session.Path] = rc
		}
		var again []usage.Group
		done := map[string]bool{}
		skipped := k.Skipped
		for _, g := range groups {
			rc, ok := byPath[g.Session.Path]
			if !ok {
				again = append(again, g)
				continue
			}
			if !done[g.Session.Path] {
				done[g.Session.Path] = true
				skipped += rc.Session.Skipped - g.Session.Skipped
				for i := range rc.Digest {
					again = append(again, usage.Group{Session: rc.Session, Rollup: rc.Session, Bucket: &rc.Digest[i]})
				}
			}
		}
		// Those of no groups in the file, theirs after the others.
		for _, rc := range rs {
			if !rc.Ungrouped || done[rc.Session.Path] {
				continue
			}
			skipped += rc.Session.Skipped - rc.WasSkipped
			for i := range rc.Digest {
				again = append(again, usage.Group{Session: rc.Session, Rollup: rc.Session, Bucket: &rc.Digest[i]})
			}
		}
		if err := WriteCounted(want, Counted{Groups: again, Files: now, Sessions: k.Sessions + added, Skipped: skipped}); err != nil {
			t.Fatal(err)
		}
		spliced := splices.Load()
		head, err := ReplaceCounted(path, was, Counted{Files: now}, rs)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		got, _ := os.ReadFile(path)
		w, _ := os.ReadFile(want)
		// A spliced file numbers the models new to it after the old ones,
		// where one written whole numbers them as its groups name them
		// first: it reads back the same, its bytes may differ.
		if g, wt := countedText(t, path), countedText(t, want); g != wt || spliced == splices.Load() && !bytes.Equal(got, w) ||
			head.Files != now || head.Skipped != skipped || head.Sessions != k.Sessions+added {
			t.Fatalf("round %d: %d recounts: the file replaced is not the one written whole (%d bytes, %d; head %+v):\n%s\nwhole:\n%s", round, len(rs), len(got), len(w), head, g, wt)
		}
		replaced += len(rs)
		// Each recount's groups before, as the file had them.
		for _, rc := range rs {
			var wasText, gotText []string
			for _, g := range groups {
				if g.Session.Path == rc.Session.Path && g.Session.Harness == rc.Session.Harness {
					wasText = append(wasText, groupText(g)+" "+g.Session.Title)
				}
			}
			for _, g := range rc.Was {
				gotText = append(gotText, groupText(g)+" "+g.Session.Title)
			}
			if !slices.Equal(wasText, gotText) {
				t.Fatalf("round %d: %s was %q; want %q", round, rc.Session.Path, gotText, wasText)
			}
		}

		// Refused: a file of other files; a session that is not counted
		// alone; one with no groups; one new that it counts; one new
		// twice. The file stays as it was.
		var notAlone *usage.Session
		for _, s := range order {
			if !alone[s] {
				notAlone = s
			}
		}
		none := &usage.Session{Harness: "xdev", Path: "/none"}
		bad := [][]Recount{{{Session: none}}, {{Session: none, Ungrouped: true, New: true}, {Session: none, Ungrouped: true, New: true}}}
		if len(again) > 0 {
			bad = append(bad, []Recount{{Session: again[0].Session, Ungrouped: true, New: true}})
		}
		if notAlone != nil {
			bad = append(bad, []Recount{{Session: notAlone}})
		}
		for k, rs := range bad {
			if _, err := ReplaceCounted(path, now, Counted{Files: was}, rs); err == nil {
				t.Fatalf("round %d: refusal %d taken", round, k)
			}
			if b, _ := os.ReadFile(path); !bytes.Equal(b, got) {
				t.Fatalf("round %d: refusal %d changed the file", round, k)
			}
		}
		if _, err := ReplaceCounted(path, was, Counted{Files: now}, nil); err == nil {
			t.Fatalf("round %d: a file of other files taken", round)
		}
	}
	t.Logf("%d sessions recounted, %d files spliced", replaced, splices.Load())
	if replaced == 0 {
		t.Fatal("no session was recounted")
	}
}

// TestReplaceCountedNotTogether: a session whose groups are not together
// is not one a ledger counted alone, and is not recounted.
func TestReplaceCountedNotTogether(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c")
	m := usage.RefModel("anthropic", "claude-sonnet-4-5", "anthropic-messages")
	a := &usage.Session{Harness: "claude", Path: "/a"}
	b := &usage.Session{Harness: "claude", Path: "/b"}
	bucket := func() *usage.Bucket { return &usage.Bucket{Quarter: 1, First: 1, Last: 2, Model: m, Calls: 1} }
	groups := []usage.Group{{Session: a, Rollup: a, Bucket: bucket()}, {Session: b, Rollup: b, Bucket: bucket()}, {Session: a, Rollup: a, Bucket: bucket()}}
	if err := WriteCounted(path, Counted{Groups: groups}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	if _, err := ReplaceCounted(path, StampSum{}, Counted{}, []Recount{{Session: a, Digest: []usage.Bucket{*bucket()}}}); err == nil {
		t.Fatal("recounted")
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("the file changed")
	}
}

// TestLedgerFiles: ledger files read back as written, by owner, with
// their sum; cut anywhere or with a byte flipped they do not read; a sum
// with a file removed is the sum without it.
func TestLedgerFiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	path := filepath.Join(t.TempDir(), "files")
	var fs []LedgerFile
	var sum StampSum
	for k := range 50 {
		f := LedgerFile{Owner: r.Uint64(), Stamp: Stamp{Size: r.Int64N(1 << 40), ModTime: r.Int64(), Ino: r.Uint64()}, Alone: r.IntN(2) == 0,
			Lineage: LineageOf(&usage.Session{Harness: "claude", ID: fmt.Sprint(k)}), Tail: r.Uint64()}
		fs = append(fs, f)
		sum.Add(fmt.Sprint(k), f.Stamp)
	}
	var keys []uint64
	for range 200 {
		keys = append(keys, r.Uint64N(1000))
	}
	known, links := SessionNames(&usage.Session{Harness: "claude", ID: "a", Path: "/p/a.jsonl", Parent: "b", ImportOf: &usage.Origin{Harness: "codex", ID: "c"}})
	in := LedgerFiles{Sum: sum, Files: slices.Clone(fs), Requests: NewKeySet(keys), Known: NewKeySet(known), Links: NewKeySet(links)}
	if err := WriteLedgerFiles(path, in); err != nil {
		t.Fatal(err)
	}
	lf, err := ReadLedgerFiles(path)
	read := lf.Files
	if err != nil || lf.Sum != sum || len(read) != len(fs) || !slices.Equal(lf.Requests, in.Requests) || !slices.Equal(lf.Known, in.Known) || !slices.Equal(lf.Links, in.Links) {
		t.Fatalf("read back %+v, %d files: %v", lf.Sum, len(read), err)
	}
	for _, k := range keys {
		if !lf.Requests.HasAny([]uint64{k}) {
			t.Fatalf("key %d not in the set read back", k)
		}
	}
	if lf.Requests.HasAny([]uint64{1000, 1 << 40}) {
		t.Error("a key never put is in the set")
	}
	// A session named as another's parent, and an import's source, are
	// among its links.
	pk, _ := SessionNames(&usage.Session{Harness: "x", ID: "b", Path: "/p/b.jsonl"})
	ck, _ := SessionNames(&usage.Session{Harness: "codex", ID: "c", Path: "/p/c.jsonl"})
	ok, _ := SessionNames(&usage.Session{Harness: "claude", ID: "o", Path: "/p/o.jsonl"})
	if !lf.Links.HasAny(pk) || !lf.Links.HasAny(ck) || lf.Links.HasAny(ok) || lf.Known.HasAny(ok) {
		t.Error("names: a parent or a source not linked, or another linked")
	}
	for _, f := range fs {
		if k, ok := FindLedgerFile(read, f.Owner); !ok || read[k] != f {
			t.Fatalf("%+v not read back (%v)", f, ok)
		}
	}
	if _, ok := FindLedgerFile(read, 0); ok {
		t.Error("a file of no owner found")
	}
	b, _ := os.ReadFile(path)
	for i := range b {
		bad := bytes.Clone(b)
		bad[i] ^= 0x10
		os.WriteFile(path, bad, 0o600)
		if _, err := ReadLedgerFiles(path); err == nil {
			t.Fatalf("byte %d flipped: read", i)
		}
		os.WriteFile(path, b[:i], 0o600)
		if _, err := ReadLedgerFiles(path); err == nil {
			t.Fatalf("cut at %d: read", i)
		}
	}
	less := sum
	less.Remove("7", fs[7].Stamp)
	var want StampSum
	for k, f := range fs {
		if k != 7 {
			want.Add(fmt.Sprint(k), f.Stamp)
		}
	}
	if less != want {
		t.Errorf("a sum less a file: %+v, want %+v", less, want)
	}
	if LineageOf(&usage.Session{ID: "a", Parent: "b"}) == LineageOf(&usage.Session{ID: "a", Parent: "c"}) ||
		LineageOf(&usage.Session{ID: "a"}) == LineageOf(&usage.Session{ID: "a", ImportOf: &usage.Origin{}}) {
		t.Error("two lineages alike")
	}
}

// FuzzReadLedgerFiles: any bytes under a good checksum are read as
// ledger files or refused, never a panic; what is read writes and reads
// back the same.
func FuzzReadLedgerFiles(f *testing.F) {
	path := filepath.Join(f.TempDir(), "files")
	WriteLedgerFiles(path, LedgerFiles{Sum: StampSum{N: 2, Lo: 3}, Files: []LedgerFile{{Owner: 9, Stamp: Stamp{Size: 10, ModTime: 11, Ino: 12}, Alone: true, Lineage: 13, Skipped: 2, Tail: 14}, {Owner: 1}},
		Requests: KeySet{1, 5}, Known: KeySet{7}})
	good, _ := os.ReadFile(path)
	f.Add(good[len(ledgerFilesMagic) : len(good)-4])
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, body []byte) {
		b := append([]byte(ledgerFilesMagic), body...)
		b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
		p := filepath.Join(t.TempDir(), "files")
		os.WriteFile(p, b, 0o600)
		lf, err := ReadLedgerFiles(p)
		if err != nil {
			return
		}
		if err := WriteLedgerFiles(p, LedgerFiles{Sum: lf.Sum, Files: slices.Clone(lf.Files), Requests: lf.Requests, Known: lf.Known, Links: lf.Links}); err != nil {
			t.Fatal(err)
		}
		lf2, err := ReadLedgerFiles(p)
		if err != nil || lf2.Sum != lf.Sum || !slices.Equal(lf.Files, lf2.Files) || !slices.Equal(lf.Requests, lf2.Requests) ||
			!slices.Equal(lf.Known, lf2.Known) || !slices.Equal(lf.Links, lf2.Links) {
			t.Fatalf("read back %+v, %v; was %+v", lf2, err, lf)
		}
	})
}

// FuzzReplaceCounted: a counted file of any groups part under good
// checksums is counted again or refused, never a panic; a file counted
// again reads back.
func FuzzReplaceCounted(f *testing.F) {
	// The files of two random ledgers, of 3 and 30 sessions.
	type file struct {
		b     []byte
		parts countedParts
		n     int
	}
	var files [2]file
	for k, n := range []int{3, 30} {
		p := filepath.Join(f.TempDir(), "c")
		WriteCounted(p, Counted{Groups: randomGroups(rand.New(rand.NewPCG(5, uint64(n))), n)})
		b, _ := os.ReadFile(p)
		parts, _ := partsOf(b[len(b)-countedTrailer:], int64(len(b)))
		files[k] = file{b, parts, n}
		f.Add(b[parts.groups.off:parts.groups.off+parts.groups.n], k == 1, uint8(1))
	}
	f.Fuzz(func(t *testing.T, groups []byte, big bool, which uint8) {
		// The file of one of them (its head's models), its groups part
		// the one given.
		x := files[0]
		if big {
			x = files[1]
		}
		file := append(x.b[:x.parts.groups.off:x.parts.groups.off], groups...)
		tr := append([]byte(nil), x.b[len(x.b)-countedTrailer:]...)
		binary.LittleEndian.PutUint32(tr[32:], crc32.ChecksumIEEE(groups))
		file = append(file, tr...)
		p := filepath.Join(t.TempDir(), "c")
		os.WriteFile(p, file, 0o600)
		rs := []Recount{{Session: &usage.Session{Harness: []string{"claude", "codex", "xdev"}[which%3], Path: fmt.Sprintf("/h/p%d/s%d.jsonl", which/3%3, int(which)%x.n)},
			Digest: []usage.Bucket{{Quarter: 1, First: 2, Last: 3, Calls: 1}}}}
		if _, err := ReplaceCounted(p, StampSum{}, Counted{Files: StampSum{N: 1}}, rs); err != nil {
			return
		}
		if _, err := ReadCounted(p); err != nil {
			t.Fatalf("counted again, does not read back: %v", err)
		}
	})
}

// TestKeySetWith: a set with keys is the set of both, every key once,
// rising, whatever keys hold (repeats, keys of the set, none), and the
// set is left as it was.
func TestKeySetWith(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for range 500 {
		var a, b []uint64
		for range r.IntN(40) {
			a = append(a, uint64(r.IntN(60)))
		}
		for range r.IntN(6) {
			b = append(b, uint64(r.IntN(60)))
		}
		s := NewKeySet(a)
		kept := slices.Clone(s)
		got, want := s.With(b), NewKeySet(append(slices.Clone(a), b...))
		if !slices.Equal(got, want) || !slices.Equal(s, kept) {
			t.Fatalf("%v with %v: %v, want %v (the set now %v)", kept, b, got, want, s)
		}
	}
}
