package usagecache

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/testscale"
	"github.com/xdev/xdev/internal/usage"
)

// TestUsageCacheJournal: a cache kept through its journal reads back as
// one written whole every time, through any run of what a server's
// ledgers see: sessions new, grown (some taking another's requests, as a
// resume copies them), replaced, and gone. Every entry's session, digest
// and calls are the same, every request's holders are, and an entry
// shares a request wherever the whole one says so. The journal is used,
// and kept to its share of the file (the file written anew past it).
// So is a cache a server keeps with SaveChanged (naming only the files
// read again) where no file went, and through OpenForJournal where the
// entries read again share no request with another.
func TestUsageCacheJournal(t *testing.T) {
	defer SaveAlways()()
	rng := rand.New(rand.NewPCG(4, 2))
	m := usage.RefModel("anthropic", "claude-sonnet-4-5", "anthropic-messages")
	type file struct {
		stamp Stamp
		s     usage.Session
	}
	files := map[string]*file{}
	past := time.Now().Add(-time.Hour).UnixNano()
	nextReq := uint64(1)
	call := func() usage.Call {
		nextReq++
		return usage.Call{Request: nextReq, Time: float64(1.79e12 + rng.IntN(1e8)), Model: m,
			Tokens: usage.Tokens{Input: float64(rng.IntN(1000)), Output: float64(rng.IntN(100))}}
	}
	paths := map[bool]string{true: filepath.Join(t.TempDir(), "c"), false: filepath.Join(t.TempDir(), "c")}
	changedPath := filepath.Join(t.TempDir(), "c")
	usedForJournal := 0
	usedJournal := false
	for step := range testscale.N(150, 150) {
		var keys []string
		for k := range files {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		gone := false
		switch op := rng.IntN(10); {
		case op < 3 || len(keys) == 0: // new
			key := fmt.Sprintf("claude /s/%d.jsonl", step)
			f := &file{s: usage.Session{Harness: "claude", Path: key[7:], ID: fmt.Sprint(step)}}
			for range 1 + rng.IntN(4) {
				f.s.Calls = append(f.s.Calls, call())
			}
			files[key] = f
		case op < 8: // grown, perhaps with another's requests
			f := files[keys[rng.IntN(len(keys))]]
			f.s.Calls = append(slices.Clone(f.s.Calls), call())
			if op == 7 {
				other := files[keys[rng.IntN(len(keys))]]
				f.s.Calls = append(f.s.Calls, other.s.Calls[0])
			}
			f.stamp.Size++
		case op == 8: // replaced
			f := files[keys[rng.IntN(len(keys))]]
			f.s.Calls = []usage.Call{call()}
			f.stamp.Ino++
		default: // gone
			delete(files, keys[rng.IntN(len(keys))])
			gone = true
		}
		keys = keys[:0]
		var stamps []Stamp
		for k := range files {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			f := files[k]
			f.stamp.ModTime = past + int64(f.stamp.Ino)*1e9 + f.stamp.Size
			stamps = append(stamps, f.stamp)
		}
		for _, journal := range []bool{true, false} {
			noJournal = !journal
			c := Open(paths[journal])
			c.Whole = true
			for k, key := range keys {
				if _, _, ok := c.Get(key, stamps[k]); !ok {
					s := files[key].s
					c.Put(key, stamps[k], &s, usage.Digest(s.Calls, nil), CallKeys(s.Calls), "", false, 1)
				}
			}
			c.Save(keys, stamps)
		}
		noJournal = false
		c := Open(changedPath)
		c.Whole = true
		var changed []string
		for k, key := range keys {
			if _, _, ok := c.Get(key, stamps[k]); !ok {
				changed = append(changed, key)
			}
		}
		put := func(c *Cache) {
			for _, key := range changed {
				s := files[key].s
				c.Put(key, files[key].stamp, &s, usage.Digest(s.Calls, nil), CallKeys(s.Calls), "", false, 1)
			}
		}
		alone := len(changed) > 0
		for _, key := range changed {
			for other, f := range files {
				alone = alone && (other == key || !slices.ContainsFunc(f.s.Calls, func(x usage.Call) bool {
					return slices.ContainsFunc(files[key].s.Calls, func(y usage.Call) bool { return x.Request == y.Request })
				}))
			}
		}
		if jc, ok := OpenForJournal(changedPath); ok && alone && !gone {
			jc.Whole = true
			put(jc)
			if jc.AppendJournal() {
				usedForJournal++
				c = nil
			}
		}
		if c != nil {
			c = Open(changedPath)
			c.Whole = true
			put(c)
			if gone {
				c.Save(keys, stamps)
			} else {
				c.SaveChanged()
			}
		}
		if _, err := os.Stat(paths[true] + ".journal"); err == nil {
			usedJournal = true
		}
		j, w, ch := Open(paths[true]), Open(paths[false]), Open(changedPath)
		if len(j.Old) != len(w.Old) || len(w.Old) != len(keys) || len(ch.Old) != len(keys) {
			t.Fatalf("step %d: %d entries through the journal, %d whole, %d saved as changed, %d files", step, len(j.Old), len(w.Old), len(ch.Old), len(keys))
		}
		for k, key := range keys {
			if !sameEntry(t, ch, w, key, stamps[k]) {
				t.Fatalf("step %d: %s differs saved as changed", step, key)
			}
			dj, sj, ok1 := j.Get(key, stamps[k])
			dw, sw, ok2 := w.Get(key, stamps[k])
			cj, ok3 := dj.Calls()
			cw, ok4 := dw.Calls()
			if !ok1 || !ok2 || !ok3 || !ok4 || !reflect.DeepEqual(dj.Session, dw.Session) || !reflect.DeepEqual(dj.Digest, dw.Digest) ||
				!reflect.DeepEqual(cj, cw) || sw && !sj {
				t.Fatalf("step %d: %s: through the journal %v %v %v shared %v, whole %v %v %v shared %v", step, key, ok1, ok3, cj, sj, ok2, ok4, cw, sw)
			}
			for _, call := range cw {
				a, b := j.Sharers(call.Request), w.Sharers(call.Request)
				slices.Sort(a)
				slices.Sort(b)
				if !slices.Equal(slices.Compact(a), slices.Compact(b)) {
					t.Fatalf("step %d: request %d held by %v through the journal, %v whole", step, call.Request, a, b)
				}
			}
		}
		if fi, err := os.Stat(paths[true] + ".journal"); err == nil && fi.Size() > j.baseSize/journalShare {
			t.Fatalf("step %d: a journal of %d bytes beside a file of %d", step, fi.Size(), j.baseSize)
		}
	}
	t.Logf("%d saves through a journal opened alone", usedForJournal)
	if !usedJournal || usedForJournal == 0 {
		t.Errorf("the journal was written %v, %d times opened for it alone", usedJournal, usedForJournal)
	}
}

// TestUsageJournalDamage: a journal cut anywhere or with a byte flipped
// gives the records before the damage and no more, never a panic; the
// next save writes the file anew and drops the journal; a journal of
// another file is ignored.
func TestUsageJournalDamage(t *testing.T) {
	defer SaveAlways()()
	path := filepath.Join(t.TempDir(), "c")
	m := usage.RefModel("anthropic", "claude-sonnet-4-5", "anthropic-messages")
	stamp := func(k int) Stamp {
		return Stamp{Size: int64(k), ModTime: time.Now().Add(-time.Hour).UnixNano() + int64(k), Ino: 1}
	}
	var keys []string
	var stamps []Stamp
	for k := range 40 {
		keys, stamps = append(keys, fmt.Sprint("k", k)), append(stamps, stamp(k))
	}
	put := func(c *Cache, k int) {
		s := usage.Session{Harness: "xdev", Path: keys[k], Calls: []usage.Call{{Request: uint64(k + 1), Time: 1.79e12, Model: m}}}
		c.Put(keys[k], stamps[k], &s, usage.Digest(s.Calls, nil), CallKeys(s.Calls), "", false, 1)
	}
	c := Open(path)
	c.Whole = true
	for k := range keys {
		put(c, k)
	}
	c.Save(keys, stamps)
	for k := range 3 { // three records in the journal
		c := Open(path)
		c.Whole = true
		stamps[k].Size += 100
		put(c, k)
		c.Save(keys, stamps)
	}
	journal, err := os.ReadFile(path + ".journal")
	if err != nil {
		t.Fatal(err)
	}
	fresh := func(c *Cache) int { // the entries of the three records read
		n := 0
		for k := range 3 {
			if _, _, ok := c.Get(keys[k], stamps[k]); ok {
				n++
			}
		}
		return n
	}
	if n := fresh(Open(path)); n != 3 {
		t.Fatalf("%d of the journal's entries read", n)
	}
	for i := len(journalMagic) + 16; i < len(journal); i++ {
		os.WriteFile(path+".journal", journal[:i], 0o600)
		if n := fresh(Open(path)); n > 2 {
			t.Fatalf("cut at %d: %d entries read", i, n)
		}
		bad := slices.Clone(journal)
		bad[i] ^= 0x20
		os.WriteFile(path+".journal", bad, 0o600)
		Open(path) // no panic
	}
	os.WriteFile(path+".journal", journal[:len(journal)-1], 0o600)
	c = Open(path)
	if n := fresh(c); n != 2 || !c.journal.stale {
		t.Errorf("the last record torn: %d entries read, stale %v", n, c.journal.stale)
	}
	c.Whole = true
	stamps[3].Size += 100
	for k := range keys { // as a ledger does: what the cache does not hold is read
		if _, _, ok := c.Get(keys[k], stamps[k]); !ok {
			put(c, k)
		}
	}
	c.Save(keys, stamps)
	if _, err := os.Stat(path + ".journal"); err == nil {
		t.Error("a damaged journal was kept")
	}
	if c := Open(path); len(c.Old) != len(keys) || c.journal.stale {
		t.Errorf("after the rewrite: %d entries, stale %v", len(c.Old), c.journal.stale)
	}
	// A journal of another file: ignored.
	other := append([]byte(journalMagic), make([]byte, 16)...)
	os.WriteFile(path+".journal", append(other, journal[len(other):]...), 0o600)
	if c := Open(path); !c.journal.stale || fresh(c) != 0 && len(c.journal.pairs) > 0 {
		t.Errorf("a journal of another file was read: stale %v", c.journal.stale)
	}
}

// FuzzUsageJournal: any bytes as the records of a journal of a good
// file give a cache, never a panic nor an allocation they cannot hold;
// what it holds reads or says it does not.
func FuzzUsageJournal(f *testing.F) {
	dir := f.TempDir()
	base := filepath.Join(dir, "c")
	restore := SaveAlways()
	c := Open(base)
	c.Whole = true
	s := usage.Session{Harness: "xdev", Path: "/a", Calls: []usage.Call{{Request: 9, Time: 1.79e12}}}
	c.Put("a", Stamp{Size: 1, ModTime: 1, Ino: 1}, &s, usage.Digest(s.Calls, nil), CallKeys(s.Calls), "", false, 1)
	c.Save([]string{"a"}, []Stamp{{Size: 1, ModTime: 1, Ino: 1}})
	restore()
	head := Open(base).journalHeader()
	f.Add([]byte{})
	f.Add([]byte{4, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		journal := append(slices.Clone(head), b...)
		if len(b) > 0 && b[0]&1 == 1 {
			// Framed as a record, its checksum right: decoded.
			journal = binary.LittleEndian.AppendUint32(slices.Clone(head), uint32(len(b)))
			journal = binary.LittleEndian.AppendUint32(append(journal, b...), crc32.ChecksumIEEE(b))
		}
		os.WriteFile(base+".journal", journal, 0o600)
		c := Open(base)
		for key, e := range c.Old {
			if d, ok := c.decode(e); ok {
				d.Calls()
			}
			c.Sharers(uint64(len(key)))
		}
	})
}

// sameEntry reports whether caches a and b hold the same of key at
// stamp: its session, digest and calls, whether it shares a request,
// and its requests' holders.
func sameEntry(t *testing.T, a, b *Cache, key string, stamp Stamp) bool {
	t.Helper()
	da, sa, ok1 := a.Get(key, stamp)
	db, sb, ok2 := b.Get(key, stamp)
	ca, ok3 := da.Calls()
	cb, ok4 := db.Calls()
	if !ok1 || !ok2 || !ok3 || !ok4 || sa != sb || !reflect.DeepEqual(da.Session, db.Session) || !reflect.DeepEqual(da.Digest, db.Digest) || !reflect.DeepEqual(ca, cb) {
		return false
	}
	for _, call := range cb {
		x, y := a.Sharers(call.Request), b.Sharers(call.Request)
		slices.Sort(x)
		slices.Sort(y)
		if !slices.Equal(slices.Compact(x), slices.Compact(y)) {
			return false
		}
	}
	return true
}
