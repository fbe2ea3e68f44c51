package foreign

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/corpus"
)

// TestListCache: a listing with a list cache lists what one without it
// lists, every time: the first time (the cache written), again (read from
// it), after a transcript was appended to, retitled, replaced with
// another of the same size, or removed, after a new one came, and with the
// cache file damaged, or written by an xdev whose Claude Code facts had
// no birth time. It is checked for Claude Code and Codex, on a home
// of generated transcripts, listed as if an hour later so that the cache
// keeps them (a file changed within racyWindow is read again), but for
// the new one.
func TestListCache(t *testing.T) {
	defer func(now func() time.Time) { listCacheNow = now }(listCacheNow)
	listCacheNow = func() time.Time { return time.Now().Add(time.Hour) }
	home := filepath.Join(t.TempDir(), "home")
	if _, err := corpus.WriteHome(home, corpus.HomeOptions{Sessions: 40, Bytes: 3 << 20, Seed: 5, Projects: 4}); err != nil {
		t.Fatal(err)
	}
	cacheDir := filepath.Join(t.TempDir(), "lists")
	sources := []Source{claudeSource{root: filepath.Join(home, ".claude")}, codexSource{root: filepath.Join(home, ".codex")}}
	for _, src := range sources {
		t.Run(src.Harness(), func(t *testing.T) {
			cached := src.(ListCacher).WithListCache(cacheDir)
			check := func(when string) []Session {
				t.Helper()
				want, err := src.List(true)
				if err != nil {
					t.Fatal(err)
				}
				for _, subagents := range []bool{true, false, true} {
					got, err := cached.List(subagents)
					if err != nil {
						t.Fatal(err)
					}
					if subagents && !reflect.DeepEqual(got, want) {
						t.Fatalf("%s: the cached listing differs:\n got %+v\nwant %+v", when, got, want)
					}
				}
				return want
			}
			list := check("first")
			if len(list) < 5 {
				t.Fatalf("%d sessions", len(list))
			}
			if m, _ := filepath.Glob(filepath.Join(cacheDir, src.Harness()+"-*")); len(m) != 1 {
				t.Fatalf("cache files %v", m)
			}
			check("again")
			// The JSON cache an older xdev wrote is not read, and goes
			// when the cache is written anew.
			m, _ := filepath.Glob(filepath.Join(cacheDir, src.Harness()+"-*"))
			os.WriteFile(m[0]+".json", []byte(`{"format":1,"root":"x","entries":{}}`), 0o600)
			os.Remove(m[0])
			check("an older xdev's cache beside")
			if _, err := os.Stat(m[0] + ".json"); !os.IsNotExist(err) {
				t.Errorf("the older cache is still there: %v", err)
			}
			a, b, c := list[0].Path, list[1].Path, list[2].Path
			f, _ := os.OpenFile(a, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(`{"type":"custom-title","customTitle":"Renamed","sessionId":"x"}` + "\n")
			f.Close()
			check("appended to")
			// Another transcript's bytes under b's name, the same size: a
			// new inode.
			data, _ := os.ReadFile(c)
			tmp := b + ".tmp"
			os.WriteFile(tmp, data, 0o600)
			os.Rename(tmp, b)
			check("replaced")
			os.Remove(c)
			check("removed")
			listCacheNow = time.Now
			os.WriteFile(c, data, 0o600) // new, and too recent to be kept
			check("new")
			listCacheNow = func() time.Time { return time.Now().Add(time.Hour) }
			os.WriteFile(m[0], []byte(`{"format":1,"root":`), 0o600)
			check("damaged cache")
		})
	}
}

// FuzzListCache: any bytes, as a list cache file under a valid checksum
// (so that they are indexed), give an index whose every record decodes,
// or none; never a panic, nor an allocation the bytes cannot hold.
func FuzzListCache(f *testing.F) {
	c := &listCache{seen: map[string]listCacheEntry{
		"/a.jsonl": {Size: 3, Mtime: 4, Ctime: 5, Ino: 6, Facts: fileFacts{Listed: true, ID: "a", Cwd: "/w", First: "hi", Created: 1.5e12}},
		"/b.jsonl": {Facts: fileFacts{Err: "not a session", Subagent: true}},
	}, changed: true, path: filepath.Join(f.TempDir(), "c.list")}
	c.save("/root", func(string) bool { return false })
	seed, _ := os.ReadFile(c.path)
	f.Add(seed[len(listCacheMagic)+4:])
	f.Add([]byte{2, 5, '/', 'r', 'o', 'o', 't', 1})
	f.Fuzz(func(t *testing.T, body []byte) {
		b := append([]byte(listCacheMagic), 0, 0, 0, 0)
		binary.LittleEndian.PutUint32(b[len(listCacheMagic):], crc32.Checksum(body, castagnoli))
		b = append(b, body...)
		_, s, index := indexListCache(b, "/root")
		for _, span := range index {
			r := &listCacheReader{s: s[span[0]:span[1]]}
			r.record()
			if r.bad || len(r.s) != 0 {
				t.Fatalf("an indexed record does not decode: %q", s[span[0]:span[1]])
			}
		}
	})
}
