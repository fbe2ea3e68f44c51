package usagecache

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
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
		file := binary.LittleEndian.AppendUint32(append([]byte(usageCacheMagic), b...), crc32.ChecksumIEEE(b))
		path := filepath.Join(dir, "x")
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		sum := Open(path)
		for key, e := range sum.Old {
			if d, ok := Decode(e.record); ok {
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
		c.Put(keys[k], stamps[k], &s, nil, "", false, 10)
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
