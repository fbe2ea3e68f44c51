package usagecache

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/xdev/xdev/internal/usage"
)

// sampleRecord is a session record of two calls and their digest.
func sampleRecord() string {
	s := &usage.Session{Harness: "claude", Path: "/p/s.jsonl", ID: "s", Parent: "q", Project: "/w", Title: "t",
		ImportOf: &usage.Origin{Harness: "codex", ID: "x"}, Skipped: 2, Subagent: true}
	m := usage.RefModel("anthropic", "claude-sonnet-4-5", "anthropic-messages")
	s.Calls = []usage.Call{
		{Entry: 7, Request: 9, Time: 1790000000000, Model: m, Tokens: usage.Tokens{Input: 3, Output: 4, CacheRead: 5.5}, Total: 12.5, Cost: 0.25, HasCost: true},
		{Time: -1, Model: m, Tokens: usage.Tokens{Input: 1e300}, Imported: true, MalformedUsageCounters: 1},
	}
	return string(encodeSession(s, usage.Digest(s.Calls, nil)))
}

// TestUsageRecordRoundTrip: a session record reads back as it was written.
func TestUsageRecordRoundTrip(t *testing.T) {
	d, ok := Decode(sampleRecord())
	if !ok {
		t.Fatal("the record does not read")
	}
	calls, ok := d.Calls()
	if !ok || len(calls) != 2 || calls[0].Request != 9 || calls[0].Entry != 7 || calls[1].Tokens.Input != 1e300 || !calls[1].Imported ||
		calls[0].Model.ID() != "claude-sonnet-4-5" || d.Session.ImportOf == nil || d.Session.ImportOf.ID != "x" || !d.Session.Subagent || d.Session.Skipped != 2 {
		t.Errorf("read back %+v, %+v", d.Session, calls)
	}
	if len(d.Digest) != 2 || d.Digest[0].Calls+d.Digest[1].Calls != 2 {
		t.Errorf("digest %+v", d.Digest)
	}
}

// FuzzUsageCache: any bytes, as a session record or as a whole cache file
// (under a valid checksum, so that they are decoded), give a record or
// cache, or none; never a panic, nor an allocation the bytes cannot hold.
func FuzzUsageCache(f *testing.F) {
	f.Add([]byte(sampleRecord()))
	f.Add([]byte{0x05, 0x00, 0x01, 0xff})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, ok := Decode(string(b)); ok {
			d.Calls()
		}
		// The first byte says where the calls end and the head begins.
		k := 0
		if len(b) > 0 {
			k = int(b[0]) % (len(b) + 1)
		}
		body := append(bytes.Clone(b), make([]byte, 16)...) // the file's id
		body = binary.LittleEndian.AppendUint64(body, uint64(len(usageCacheMagic)+k))
		file := binary.LittleEndian.AppendUint32(append([]byte(usageCacheMagic), body...), crc32.ChecksumIEEE(body))
		path := filepath.Join(dir, "x")
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		sum := Open(path)
		for key, e := range sum.Old {
			if d, ok := sum.decode(e); ok {
				d.Calls()
			}
			sum.Sharers(uint64(len(key)))
		}
	})
}

// TestUsageCacheFileRoundTrip: a cache written and read again holds what
// was kept, and a file with a flipped byte anywhere, or cut short, is no
// cache (never a panic, never a wrong entry).
func TestUsageCacheFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c")
	c := Open(path)
	c.Whole = true
	s := usage.Session{Harness: "xdev", Path: "/s/a.jsonl", ID: "a"}
	keys := []string{"xdev /s/a.jsonl", "xdev /s/b.jsonl"}
	stamps := []Stamp{{Size: 10, ModTime: 1, Ino: 2}, {Size: 20, ModTime: 3, Ino: 4}}
	for k := range keys {
		c.Put(keys[k], stamps[k], &s, nil, CallKeys(s.Calls), "", false, 10)
	}
	c.Save(keys, stamps)
	again := Open(path)
	if len(again.Old) != 2 || again.Old[keys[1]].Stamp != stamps[1] {
		t.Fatalf("read back %d entries: %+v", len(again.Old), again.Old)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(usageCacheMagic); i < len(b); i++ {
		bad := bytes.Clone(b)
		bad[i] ^= 0x40
		os.WriteFile(path, bad, 0o600)
		if n := len(Open(path).Old); n != 0 {
			t.Fatalf("byte %d flipped: %d entries read", i, n)
		}
		os.WriteFile(path, b[:i], 0o600)
		if n := len(Open(path).Old); n != 0 {
			t.Fatalf("cut at %d: %d entries read", i, n)
		}
	}
}

// TestUsageCacheCallsApart: the calls of an entry are read from the file
// as it was opened, after another ledger replaced it; an entry carried
// over into the next file keeps its calls (copied from the old file),
// beside one read anew; and what is held of the file read is its head,
// not its calls.
func TestUsageCacheCallsApart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c")
	defer SaveAlways()()
	rec := sampleRecord()
	want, _ := Decode(rec)
	wantCalls, _ := want.Calls()
	s := *want.Session
	s.Calls = wantCalls
	digest := want.Digest
	stamps := []Stamp{{Size: 10, ModTime: 1, Ino: 2}, {Size: 20, ModTime: 3, Ino: 4}}
	first := Open(path)
	first.Whole = true
	first.Put("a", stamps[0], &s, digest, CallKeys(s.Calls), "", false, 10)
	first.Save([]string{"a"}, stamps[:1])

	second := Open(path)
	d, _, ok := second.Get("a", stamps[0])
	if !ok {
		t.Fatal("the entry saved is not read back")
	}
	e := second.Old["a"]
	if e.record != "" || len(e.head) >= len(rec) || e.calls.n == 0 {
		t.Errorf("held %d bytes of a %d-byte record (calls %+v)", len(e.head)+len(e.record), len(rec), e.calls)
	}
	second.Whole = true
	other := s
	other.ID = "b"
	second.Put("b", stamps[1], &other, digest, CallKeys(other.Calls), "", false, 10)
	second.Save([]string{"a", "b"}, stamps) // replaces the file second read
	if calls, ok := d.Calls(); !ok || !reflect.DeepEqual(calls, wantCalls) {
		t.Errorf("the calls read after the file was replaced: %+v, %v", calls, ok)
	}

	third := Open(path)
	for _, key := range []string{"a", "b"} {
		d, _, ok := third.Get(key, stamps[map[string]int{"a": 0, "b": 1}[key]])
		calls, ok2 := d.Calls()
		if !ok || !ok2 || !reflect.DeepEqual(calls, wantCalls) || !reflect.DeepEqual(d.Digest, digest) {
			t.Errorf("%s: read back %v %v: %+v", key, ok, ok2, calls)
		}
	}
}

// TestTinyBucketsReadBack: buckets of a byte a number (calls of no time
// and no price, whole token counts) read back from a counted file and a
// cache record: the least a bucket takes is 18 bytes.
func TestTinyBucketsReadBack(t *testing.T) {
	m := usage.RefModel("anthropic", "claude-sonnet-4-5", "anthropic-messages")
	s := &usage.Session{Harness: "claude", Path: "/a"}
	var groups []usage.Group
	var digest []usage.Bucket
	for range 3 {
		groups = append(groups, usage.Group{Session: s, Rollup: s, Bucket: &usage.Bucket{Model: m}})
		digest = append(digest, usage.Bucket{Model: m})
	}
	path := filepath.Join(t.TempDir(), "c")
	if err := WriteCounted(path, Counted{Groups: groups}); err != nil {
		t.Fatal(err)
	}
	if k, err := ReadCounted(path); err != nil || len(k.Groups) != 3 {
		t.Errorf("counted: read back %d groups: %v", len(k.Groups), err)
	}
	if d, ok := Decode(string(encodeSession(s, digest))); !ok || len(d.Digest) != 3 {
		t.Errorf("record: read back %d buckets, %v", len(d.Digest), ok)
	}
}
