package usagecache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/usage"
)

// randomGroups are the groups of a random ledger of n sessions: some
// subagents' rolling up to others, imports, odd strings, every number a
// bucket holds, calls a moment ago and months ago.
func randomGroups(r *rand.Rand, n int) []usage.Group {
	models := []usage.ModelRef{
		usage.RefModel("anthropic", "claude-sonnet-4-5", "anthropic-messages"),
		usage.RefModel("openai", "gpt-5.3-codex", ""),
		usage.RefModel("", "", ""),
	}
	sessions := make([]*usage.Session, n)
	now := float64(time.Now().UnixMilli())
	var out []usage.Group
	for k := range sessions {
		s := &usage.Session{Harness: []string{"claude", "codex", "xdev"}[r.IntN(3)],
			Path: fmt.Sprintf("/h/p%d/s%d.jsonl", r.IntN(3), k), ID: fmt.Sprintf("id-%d", k),
			Project: []string{"", "/w", "/w/ünï\x00code"}[r.IntN(3)], Title: []string{"", "t", "\x1b[31mred"}[r.IntN(3)], Skipped: r.IntN(3)}
		if r.IntN(5) == 0 {
			s.ImportOf = &usage.Origin{Harness: "codex", ID: fmt.Sprint("x", k)}
		}
		rollup := s
		if k > 0 && r.IntN(4) == 0 {
			s.Subagent, s.Parent = true, sessions[k-1].ID
			rollup = sessions[k-1]
		}
		sessions[k] = s
		for range r.IntN(4) {
			at := now - r.Float64()*float64(r.IntN(3))*48*3600e3
			b := &usage.Bucket{Quarter: int64(at) / usage.Quarter, First: at - 1e3, Last: at, Model: models[r.IntN(len(models))],
				Tokens: usage.Tokens{Input: float64(r.IntN(1e6)), Output: r.Float64() * 1e3, CacheRead: 1e300}, Calls: 1 + r.IntN(9), Malformed: r.IntN(2)}
			for m := range b.Cost {
				b.Cost[m], b.Unpriced[m] = r.Float64(), r.IntN(2)
			}
			out = append(out, usage.Group{Session: s, Rollup: rollup, Bucket: b})
		}
	}
	return out
}

// groupText is what a group says, its sessions' fields and its bucket.
func groupText(g usage.Group) string {
	s, r := *g.Session, *g.Rollup
	s.ImportOf, r.ImportOf = nil, nil
	return fmt.Sprintf("%+v %+v %+v %+v %+v", s, g.Session.ImportOf, r, *g.Bucket, g.Model.Name())
}

// TestCountedRoundTrips: what WriteCounted writes ReadCounted reads back
// as it was, group by group, over random ledgers; and ReadCountedStatus
// reads the status usage.NewStatus makes of the groups, for the sessions
// asked for and the latest call's.
func TestCountedRoundTrips(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		groups := randomGroups(r, r.IntN(40))
		path := filepath.Join(dir, fmt.Sprint(round%3))
		in := Counted{Groups: groups, Sessions: r.IntN(100), Skipped: r.IntN(3), Racy: r.IntN(2), Server: r.IntN(1 << 20)}
		in.Files.Add("claude /a", Stamp{Size: int64(round), ModTime: 7, Ino: 9})
		if err := WriteCounted(path, in); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v, %v", fi.Mode(), err)
		}
		got, err := ReadCounted(path)
		if err != nil {
			t.Fatal(err)
		}
		if got.Sessions != in.Sessions || got.Skipped != in.Skipped || got.Racy != in.Racy || got.Server != in.Server || got.Files != in.Files {
			t.Fatalf("round %d: head %+v, want %+v", round, got, in)
		}
		if len(got.Groups) != len(groups) {
			t.Fatalf("round %d: %d groups, want %d", round, len(got.Groups), len(groups))
		}
		for k := range groups {
			if g, w := groupText(got.Groups[k]), groupText(groups[k]); g != w {
				t.Fatalf("round %d, group %d:\n%s\nwant\n%s", round, k, g, w)
			}
		}
		// One at a time, the same groups; none where the head is not
		// taken.
		k := 0
		head, err := EachCounted(path, func(c Counted) bool { return c.Server == in.Server && c.Groups == nil }, func(g *usage.Group) {
			if k >= len(groups) || groupText(*g) != groupText(groups[k]) {
				t.Fatalf("round %d: group %d handed as %s", round, k, groupText(*g))
			}
			k++
		})
		if err != nil || k != len(groups) || head.Files != in.Files || head.Sessions != in.Sessions {
			t.Fatalf("round %d: %d of %d groups handed, head %+v, %v", round, k, len(groups), head, err)
		}
		if _, err := EachCounted(path, func(Counted) bool { return false }, func(*usage.Group) { t.Fatal("handed a group not taken") }); !errors.Is(err, ErrNotTaken) {
			t.Fatalf("round %d: not taken: %v", round, err)
		}
		// The status, for one session by path, another by id, and the
		// latest call's.
		want := usage.NewStatus(groups, float64(time.Now().Add(-RecentSpan).UnixMilli()))
		q := StatusQuery{}
		if len(groups) > 0 {
			q.Paths = []string{groups[r.IntN(len(groups))].Rollup.Path, "/not/there"}
			q.ID = groups[r.IntN(len(groups))].Rollup.ID
		}
		st, err := ReadCountedStatus(path, q)
		if err != nil {
			t.Fatal(err)
		}
		if st.Groups != nil || len(st.Status.Recent) != len(want.Recent) || st.Status.Since > want.Since || st.Status.Since < want.Since-60e3 {
			t.Fatalf("round %d: status %d recent since %v, want %d since %v", round, len(st.Status.Recent), st.Status.Since, len(want.Recent), want.Since)
		}
		for k := range want.Recent {
			if g, w := groupText(st.Status.Recent[k]), groupText(want.Recent[k]); g != w {
				t.Fatalf("round %d, recent %d:\n%s\nwant\n%s", round, k, g, w)
			}
		}
		sumOf := func(sessions []usage.Group, match func(*usage.Session) bool) string {
			for _, g := range sessions {
				if match(g.Rollup) {
					b := *g.Bucket
					b.Quarter, b.Model = 0, 0
					return fmt.Sprintf("%+v", b)
				}
			}
			return "none"
		}
		for _, match := range []func(*usage.Session) bool{
			func(s *usage.Session) bool { return len(q.Paths) > 0 && s.Path == q.Paths[0] },
			func(s *usage.Session) bool { return s.ID == q.ID },
		} {
			if g, w := sumOf(st.Status.Sessions, match), sumOf(want.Sessions, match); g != w {
				t.Fatalf("round %d: a named session's sum %s, want %s", round, g, w)
			}
		}
		gl, wl := st.Status.Latest(), want.Latest()
		if (gl == nil) != (wl == nil) || gl != nil && (gl.Last != wl.Last || gl.Cost != wl.Cost || gl.Calls != wl.Calls) {
			t.Fatalf("round %d: latest %+v %+v, want %+v %+v", round, gl, gl.Bucket, wl, wl.Bucket)
		}
	}
}

// TestCountedStatusFindsEverySession: a status read for any session, by
// its path, its id, both, or with names of none beside, holds that
// session's sum as usage.NewStatus makes it, and the latest call's, and
// no session not named; over ledgers of 0 to 3,000 sessions (pages of
// one session to hundreds), ties of the latest call included.
func TestCountedStatusFindsEverySession(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(11, 12))
	for round, n := range []int{0, 1, 2, 3, 7, 60, 400, 3000} {
		groups := randomGroups(r, n)
		if round%2 == 1 {
			for _, g := range groups {
				g.Last = 1e12 // every session's latest call at once
			}
		}
		path := filepath.Join(dir, fmt.Sprint(round))
		if err := WriteCounted(path, Counted{Groups: groups}); err != nil {
			t.Fatal(err)
		}
		want := usage.NewStatus(groups, 0)
		sum := func(g *usage.Group) string {
			b := *g.Bucket
			b.Quarter, b.Model = 0, 0
			return fmt.Sprintf("%+v %v", b, g.Model.Name())
		}
		wantLatest := "none"
		if l := want.Latest(); l != nil {
			wantLatest = sum(l)
		}
		for k, w := range want.Sessions {
			if k > 300 && r.IntN(10) > 0 {
				continue
			}
			s := w.Rollup
			for _, q := range []StatusQuery{
				{Paths: []string{s.Path}},
				{ID: s.ID},
				{Paths: []string{"/elsewhere", s.Path}, ID: s.ID},
				{Paths: []string{s.Path}, ID: "not-an-id"},
			} {
				got, err := ReadCountedStatus(path, q)
				if err != nil {
					t.Fatal(err)
				}
				var named []usage.Group
				for _, g := range got.Status.Sessions {
					if g.Rollup.Path != "" || g.Rollup.ID != "" {
						named = append(named, g)
					}
				}
				if len(named) != 1 || sum(&named[0]) != sum(&want.Sessions[k]) ||
					named[0].Rollup.Path != "" && named[0].Rollup.Path != s.Path || named[0].Rollup.ID != "" && named[0].Rollup.ID != s.ID {
					t.Fatalf("round %d, session %d, %+v: named %+v", round, k, q, named)
				}
				if l := got.Status.Latest(); l == nil || sum(l) != wantLatest {
					t.Fatalf("round %d, session %d: latest %+v, want %s", round, k, l, wantLatest)
				}
				if len(got.Status.Sessions) > 2 {
					t.Fatalf("round %d: %d sums read", round, len(got.Status.Sessions))
				}
			}
		}
		got, err := ReadCountedStatus(path, StatusQuery{Paths: []string{"/none"}, ID: "none"})
		if err != nil {
			t.Fatal(err)
		}
		if gl := got.Status.Latest(); (gl == nil) != (n == 0 || len(want.Sessions) == 0) || gl != nil && sum(gl) != wantLatest {
			t.Fatalf("round %d: unnamed, latest %+v, want %s", round, gl, wantLatest)
		}
	}
}

// TestCountedPagesWithinSums: a status whose list of pages (under a
// valid checksum) gives a page past the sums, or lengths whose sum wraps
// to theirs, is damage, never a read out of bounds or a huge allocation.
func TestCountedPagesWithinSums(t *testing.T) {
	const sums = 100
	for _, lengths := range [][]uint64{{sums + 1}, {1 << 63, 1<<63 + sums}, {math.MaxUint64, sums + 1}, {60, 60}, {sums, 0, 1}} {
		body := appendNum(nil, 1)
		body = binary.AppendUvarint(body, 0) // no sums, so no latest
		body = binary.AppendUvarint(body, uint64(len(lengths)))
		for _, n := range lengths {
			body = binary.AppendUvarint(body, n)
			body = binary.LittleEndian.AppendUint32(body, 0)
		}
		body = binary.AppendUvarint(body, 0) // a table of no sessions
		body = binary.AppendUvarint(body, 0) // and no recent groups
		page := func(off, n int64, crc uint32) ([]byte, error) {
			if off < 0 || n < 0 || off+n > sums {
				t.Fatalf("%v: page %d+%d read", lengths, off, n)
			}
			return make([]byte, n), nil
		}
		if _, err := readStatus(body, sums, nil, &StatusQuery{ID: "x", Paths: []string{"/a", "/b", "/c"}}, page); err == nil {
			t.Errorf("%v: read", lengths)
		}
	}
}

// TestCountedDamaged: a counted file cut anywhere or with any byte
// flipped reads as none (an error naming it), never as other groups; no
// file is ErrNoCounted.
func TestCountedDamaged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c")
	if _, err := ReadCounted(path); !errors.Is(err, ErrNoCounted) {
		t.Fatalf("no file: %v", err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	if err := WriteCounted(path, Counted{Groups: randomGroups(r, 6), Sessions: 6}); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	bad := filepath.Join(dir, "bad")
	for k := range len(good) {
		for _, b := range [][]byte{good[:k], flip(good, k)} {
			os.WriteFile(bad, b, 0o600)
			for _, q := range []*StatusQuery{nil, {ID: "id-1"}} {
				var err error
				if q == nil {
					_, err = ReadCounted(bad)
					if _, err2 := EachCounted(bad, nil, func(*usage.Group) {}); (err == nil) != (err2 == nil) {
						t.Fatalf("%d bytes, byte %d flipped: read %v, one at a time %v", len(b), k, err, err2)
					}
				} else {
					_, err = ReadCountedStatus(bad, *q)
				}
				if err == nil {
					// A flipped byte in the part not read is not seen.
					if len(b) == len(good) && !partRead(good, k, q) {
						continue
					}
					t.Fatalf("%d bytes, byte %d flipped: read", len(b), k)
				}
			}
		}
	}
}

// partRead reports whether byte k of a counted file is in what a read
// of its groups (or with q its status) checks: the ranges it reads (the
// head, that part, a status's pages of q's names), and of the trailer
// the offsets and checksums it goes by.
func partRead(file []byte, k int, q *StatusQuery) bool {
	size := int64(len(file))
	at, t := int64(k), size-countedTrailer
	if at >= t {
		rel := at - t
		if q != nil {
			return rel < 32 // the offsets, the head's and the status's CRC-32s
		}
		// The sums' offset (where the head ends), the groups', the head's
		// and the groups' CRC-32s.
		return rel < 8 || rel >= 16 && rel < 28 || rel >= 32
	}
	rec := &recordingReader{b: file}
	if _, err := readCountedAt(rec, size, countedRead{q: q}); err != nil {
		panic(err)
	}
	for _, r := range rec.read {
		if at >= r[0] && at < r[1] && r[0] < t {
			return true
		}
	}
	return false
}

// recordingReader reads b, recording the ranges read.
type recordingReader struct {
	b    []byte
	read [][2]int64
}

func (r *recordingReader) ReadAt(p []byte, off int64) (int, error) {
	r.read = append(r.read, [2]int64{off, off + int64(len(p))})
	return bytes.NewReader(r.b).ReadAt(p, off)
}

func flip(b []byte, k int) []byte {
	c := append([]byte(nil), b...)
	c[k] ^= 0x20
	return c
}

// TestStampSum: a sum is the same whatever the order the files are added
// in, and another for another stamp or key.
func TestStampSum(t *testing.T) {
	var a, b, c StampSum
	files := []string{"claude /a", "codex /b", "xdev /c"}
	for k := range files {
		a.Add(files[k], Stamp{Size: int64(k), ModTime: 1, Ino: 2})
		b.Add(files[len(files)-1-k], Stamp{Size: int64(len(files) - 1 - k), ModTime: 1, Ino: 2})
		c.Add(files[k], Stamp{Size: int64(k), ModTime: 2, Ino: 2})
	}
	var d, e StampSum
	d.Add(files[0], Stamp{})
	e.Add(files[1], Stamp{})
	d.Merge(e)
	var f StampSum
	f.Add(files[1], Stamp{})
	f.Add(files[0], Stamp{})
	if a != b || a == c || d != f {
		t.Errorf("sums %+v %+v %+v; merged %+v %+v", a, b, c, d, f)
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("not equal")
	}
}

// FuzzReadCounted: any bytes, cut into a counted file's four parts under
// valid checksums (so that they are decoded), give groups and a status
// or none; never a panic, nor an allocation the bytes cannot hold.
func FuzzReadCounted(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "c")
	for _, n := range []int{4, 40} {
		WriteCounted(path, Counted{Groups: randomGroups(rand.New(rand.NewPCG(5, 6)), n)})
		good, _ := os.ReadFile(path)
		p, _ := partsOf(good[len(good)-countedTrailer:], int64(len(good)))
		f.Add(uint16(p.sums.off-int64(len(countedMagic))), uint16(p.sums.n), uint16(p.status.n), good[len(countedMagic):len(good)-countedTrailer])
	}
	f.Add(uint16(0), uint16(0), uint16(0), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, a, b, c uint16, body []byte) {
		i := min(int(a), len(body))
		j := min(i+int(b), len(body))
		k := min(j+int(c), len(body))
		head := append([]byte(countedMagic), body[:i]...)
		file := append(append([]byte(nil), head...), body[i:]...)
		m := int64(len(countedMagic))
		t2 := binary.LittleEndian.AppendUint64(nil, uint64(len(head)))
		t2 = binary.LittleEndian.AppendUint64(t2, uint64(m+int64(j)))
		t2 = binary.LittleEndian.AppendUint64(t2, uint64(m+int64(k)))
		t2 = binary.LittleEndian.AppendUint32(t2, crc32.ChecksumIEEE(head))
		t2 = binary.LittleEndian.AppendUint32(t2, crc32.ChecksumIEEE(body[j:k]))
		t2 = binary.LittleEndian.AppendUint32(t2, crc32.ChecksumIEEE(body[k:]))
		file = append(file, t2...)
		if c, ok := decodeCountedFile(file, nil); ok {
			for _, g := range c.Groups {
				_ = groupText(g)
			}
		}
		if c, ok := decodeCountedFile(file, &StatusQuery{Paths: []string{"/a", "/h/p0/s1.jsonl"}, ID: "id-2"}); ok {
			c.Status.Latest()
		}
	})
}

// BenchmarkWriteCounted: the groups of a ledger of 25,000 sessions
// written, as a server does with every ledger it builds.
func BenchmarkWriteCounted(b *testing.B) {
	groups := randomGroups(rand.New(rand.NewPCG(7, 8)), 25000)
	path := filepath.Join(b.TempDir(), "c")
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteCounted(path, Counted{Groups: groups}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadCounted: the groups of 25,000 sessions read, as a report
// whose groups are kept does; and their status, as a status line does.
func BenchmarkReadCounted(b *testing.B) {
	groups := randomGroups(rand.New(rand.NewPCG(7, 8)), 25000)
	path := filepath.Join(b.TempDir(), "c")
	if err := WriteCounted(path, Counted{Groups: groups}); err != nil {
		b.Fatal(err)
	}
	b.Run("groups", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ReadCounted(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("status", func(b *testing.B) {
		q := StatusQuery{Paths: []string{groups[len(groups)/2].Rollup.Path}}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ReadCountedStatus(path, q); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestClaimCounted: a counted file claimed by a server reads back as it
// was, but for the server it names; a damaged one is not claimed.
func TestClaimCounted(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c")
	groups := randomGroups(rand.New(rand.NewPCG(9, 10)), 30)
	in := Counted{Groups: groups, Sessions: 30, Skipped: 2, Racy: 0, Server: 7}
	in.Files.Add("xdev /a", Stamp{Size: 3})
	if err := WriteCounted(path, in); err != nil {
		t.Fatal(err)
	}
	before, _ := ReadCounted(path)
	q := StatusQuery{Paths: []string{groups[0].Rollup.Path}}
	beforeStatus, _ := ReadCountedStatus(path, q)
	if err := ClaimCounted(path, 1<<40); err != nil {
		t.Fatal(err)
	}
	after, err := ReadCounted(path)
	if err != nil {
		t.Fatal(err)
	}
	afterStatus, err := ReadCountedStatus(path, q)
	if err != nil {
		t.Fatal(err)
	}
	if after.Server != 1<<40 || after.Files != before.Files || after.Sessions != 30 || after.Skipped != 2 || len(after.Groups) != len(before.Groups) ||
		len(afterStatus.Status.Sessions) != len(beforeStatus.Status.Sessions) || len(afterStatus.Status.Recent) != len(beforeStatus.Status.Recent) {
		t.Fatalf("claimed: %+v", after)
	}
	for k := range before.Groups {
		if g, w := groupText(after.Groups[k]), groupText(before.Groups[k]); g != w {
			t.Fatalf("group %d: %s, want %s", k, g, w)
		}
	}
	b, _ := os.ReadFile(path)
	b[len(countedMagic)+3] ^= 1 // the head's
	os.WriteFile(path, b, 0o600)
	if ClaimCounted(path, 9) == nil {
		t.Error("a damaged head was claimed")
	}
}
