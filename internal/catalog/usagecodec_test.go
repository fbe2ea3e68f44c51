package catalog

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
	d, ok := decodeSession(sampleRecord())
	if !ok {
		t.Fatal("the record does not read")
	}
	calls, ok := d.decodeCalls()
	if !ok || len(calls) != 2 || calls[0].Request != 9 || calls[0].Entry != 7 || calls[1].Tokens.Input != 1e300 || !calls[1].Imported ||
		calls[0].Model.ID() != "claude-sonnet-4-5" || d.s.ImportOf == nil || d.s.ImportOf.ID != "x" || !d.s.Subagent || d.s.Skipped != 2 {
		t.Errorf("read back %+v, %+v", d.s, calls)
	}
	if len(d.digest) != 2 || d.digest[0].Calls+d.digest[1].Calls != 2 {
		t.Errorf("digest %+v", d.digest)
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
		if d, ok := decodeSession(string(b)); ok {
			d.decodeCalls()
		}
		file := binary.LittleEndian.AppendUint32(append([]byte(usageCacheMagic), b...), crc32.ChecksumIEEE(b))
		path := filepath.Join(dir, "x")
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		sum := openUsageCacheAt(path)
		for key, e := range sum.old {
			if d, ok := decodeSession(e.record); ok {
				d.decodeCalls()
			}
			sum.sharers(uint64(len(key)))
		}
	})
}

// TestUsageCacheFileRoundTrip: a cache written and read again holds what
// was kept, and a file with a flipped byte anywhere, or cut short, is no
// cache (never a panic, never a wrong entry).
func TestUsageCacheFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c")
	c := openUsageCacheAt(path)
	c.whole = true
	s := usage.Session{Harness: "xdev", Path: "/s/a.jsonl", ID: "a"}
	keys := []string{"xdev /s/a.jsonl", "xdev /s/b.jsonl"}
	stamps := []usageStamp{{Size: 10, ModTime: 1, Ino: 2}, {Size: 20, ModTime: 3, Ino: 4}}
	for k := range keys {
		c.put(keys[k], stamps[k], &s, nil, "", false, 10)
	}
	c.save(keys, stamps)
	again := openUsageCacheAt(path)
	if len(again.old) != 2 || again.old[keys[1]].stamp != stamps[1] {
		t.Fatalf("read back %d entries: %+v", len(again.old), again.old)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(usageCacheMagic); i < len(b); i++ {
		bad := bytes.Clone(b)
		bad[i] ^= 0x40
		os.WriteFile(path, bad, 0o600)
		if n := len(openUsageCacheAt(path).old); n != 0 {
			t.Fatalf("byte %d flipped: %d entries read", i, n)
		}
		os.WriteFile(path, b[:i], 0o600)
		if n := len(openUsageCacheAt(path).old); n != 0 {
			t.Fatalf("cut at %d: %d entries read", i, n)
		}
	}
}
