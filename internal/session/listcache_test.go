package session

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/ai"
)

// listsDiffer says why two listings differ ("" when they do not): every
// field, errors by their text.
func listsDiffer(got, want []SessionInfo) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d sessions, want %d", len(got), len(want))
	}
	for k := range got {
		g, w := got[k], want[k]
		if (g.Err == nil) != (w.Err == nil) || g.Err != nil && g.Err.Error() != w.Err.Error() {
			return fmt.Sprintf("%s: error %v, want %v", w.Path, g.Err, w.Err)
		}
		g.Err, w.Err = nil, nil
		if !reflect.DeepEqual(g, w) {
			return fmt.Sprintf("session %d:\n got %+v\nwant %+v", k, g, w)
		}
	}
	return ""
}

// TestListCache holds a listing through the list cache to the listing of
// the same files without one, on a data dir that changes between listings
// in every way a session file changes (appends, an in-place retitle of
// the same size, a rewrite by rename, a new file, a deleted one, one that
// stops being a session, a symlink, a move to another project), listed
// whole, one project at a time, with and without subagents, in 300
// generated steps. Each listing is taken twice: the first may read files
// and rewrite the cache, the second must answer from it alike.
func TestListCache(t *testing.T) {
	// Every file is old enough to be kept: the steps set their times apart.
	listCacheNow = func() time.Time { return time.Now().Add(time.Hour) }
	defer func() { listCacheNow = time.Now }()

	fx := newListFixture(t)
	cache := t.TempDir()
	root := SessionsDir(fx.dir)
	projects := []string{"/work/a", "/work/b", "/work/c"}
	rng := rand.New(rand.NewPCG(7, 24))
	var live []string // generated session files
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	touch := func(p string) {
		// A new time for every change: two changes in one tick of the
		// clock are the racy window's to catch, not this test's.
		clock = clock.Add(time.Second)
		os.Chtimes(p, clock, clock)
	}
	newSession := func() {
		cwd := projects[rng.IntN(len(projects))]
		dir := filepath.Join(root, Slug(cwd))
		os.MkdirAll(dir, 0o700)
		id := fmt.Sprintf("0190aaaa-0000-7000-8000-%012d", len(live)+100)
		s, err := Create(filepath.Join(dir, FileName(clock, id)), NewOptions{Cwd: cwd})
		if err != nil {
			t.Fatal(err)
		}
		s.AppendMessage(ai.Message{Role: ai.RoleUser, Content: ai.TextContent(fmt.Sprintf("task %d: find the bug", len(live))), Timestamp: 1})
		if rng.IntN(3) == 0 {
			// A subagent's transcript, nested under its parent's directory.
			sub := filepath.Join(strings.TrimSuffix(s.Path(), ".jsonl"), "Scout.jsonl")
			os.MkdirAll(filepath.Dir(sub), 0o700)
			c, err := Create(sub, NewOptions{Cwd: cwd, ParentSession: s.Path()})
			if err == nil {
				c.Close()
				touch(sub)
			}
		}
		s.Close()
		touch(s.Path())
		live = append(live, s.Path())
	}
	for range 12 {
		newSession()
	}
	pick := func() (int, string) {
		k := rng.IntN(len(live))
		return k, live[k]
	}
	steps := []struct {
		name string
		do   func()
	}{
		{"new", newSession},
		{"append", func() {
			_, p := pick()
			s, err := Open(p, nil)
			if err != nil {
				return
			}
			s.AppendMessage(ai.Message{Role: ai.RoleAssistant, Content: ai.TextContent("done"), StopReason: ai.StopEnd, Timestamp: 2})
			s.Close()
			touch(p)
		}},
		{"retitle in place", func() {
			_, p := pick()
			s, err := Open(p, nil)
			if err != nil {
				return
			}
			s.SetTitle(fmt.Sprintf("title %d", rng.IntN(100)), TitleManual)
			s.Close()
			touch(p)
		}},
		{"edit the slot in place", func() {
			// The same size, the same inode: only the times tell.
			_, p := pick()
			slot, err := MarshalTitleSlot(fmt.Sprintf("edited %d", rng.IntN(100)), TitleManual, FormatTime(fixedTime))
			f, ferr := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil || ferr != nil {
				return
			}
			f.WriteAt(slot, 0)
			f.Close()
			touch(p)
		}},
		{"rewrite by rename", func() {
			_, p := pick()
			b, err := os.ReadFile(p)
			if err != nil {
				return
			}
			tmp := p + ".tmp"
			os.WriteFile(tmp, append(b, "\n"...), 0o600)
			os.Rename(tmp, p)
			touch(p)
		}},
		{"delete", func() {
			k, p := pick()
			os.Remove(p)
			os.RemoveAll(strings.TrimSuffix(p, ".jsonl"))
			live = append(live[:k], live[k+1:]...)
		}},
		{"no longer a session", func() {
			_, p := pick()
			os.WriteFile(p, []byte(`{"not":"a session"}`+"\n"), 0o600)
			touch(p)
		}},
		{"symlink", func() {
			k, p := pick()
			os.Remove(p)
			os.Symlink("/etc/hostname", p)
			live = append(live[:k], live[k+1:]...)
		}},
		{"move to another project", func() {
			k, p := pick()
			dir := filepath.Join(root, Slug(projects[rng.IntN(len(projects))]))
			os.MkdirAll(dir, 0o700)
			q := filepath.Join(dir, filepath.Base(p))
			if os.Rename(p, q) == nil {
				live[k] = q
			}
		}},
	}
	for step := range 300 {
		if len(live) < 4 {
			newSession()
		}
		s := steps[rng.IntN(len(steps))]
		s.do()
		opts := ListOptions{Status: rng.IntN(4) != 0, Subagents: rng.IntN(2) == 0}
		if rng.IntN(3) == 0 {
			opts.Cwd = projects[rng.IntN(len(projects))]
		}
		want, err := List(fx.dir, &opts)
		if err != nil {
			t.Fatal(err)
		}
		opts.Cache = cache
		for pass := range 2 {
			got, err := List(fx.dir, &opts)
			if err != nil {
				t.Fatal(err)
			}
			if why := listsDiffer(got, want); why != "" {
				t.Fatalf("step %d (%s, %+v), pass %d: %s", step, s.name, opts, pass, why)
			}
		}
	}
	// The second pass of a listing reads no file: every session is kept.
	c := openListCache(cache, root)
	all, _ := List(fx.dir, &ListOptions{Status: true, Subagents: true})
	kept := 0
	for _, i := range all {
		if _, ok := c.index[i.Path]; ok {
			kept++
		} else if i.Err == nil {
			t.Errorf("%s is not in the cache", i.Path)
		}
	}
	if kept == 0 {
		t.Error("the cache keeps nothing")
	}
}

// TestListCacheRacy: a file changed within racyWindow of the listing is
// read, never kept (a second change in the same tick of the clock would
// not show); nor is a file List could not read.
func TestListCacheRacy(t *testing.T) {
	fx := newListFixture(t)
	cache := t.TempDir()
	if _, err := List(fx.dir, &ListOptions{Cache: cache, Status: true}); err != nil {
		t.Fatal(err)
	}
	c := openListCache(cache, SessionsDir(fx.dir))
	if p := fx.names["xdev"]; c.index[p] != [2]int{} {
		t.Errorf("%s was written just now and is in the cache", p)
	}
	for _, what := range []string{"foreign", "empty"} {
		if _, ok := c.index[fx.names[what]]; ok {
			t.Errorf("%s (not a session) is in the cache", what)
		}
	}
}

// TestListCacheNeverTrustsDamage: a cache file cut short, with any byte
// changed, of another format, or not a regular file is ignored: the
// listing is the same as without it, and the cache is written again.
func TestListCacheNeverTrustsDamage(t *testing.T) {
	listCacheNow = func() time.Time { return time.Now().Add(time.Hour) }
	defer func() { listCacheNow = time.Now }()
	fx := newListFixture(t)
	cache := t.TempDir()
	opts := &ListOptions{Status: true, Subagents: true}
	want, _ := List(fx.dir, opts)
	opts.Cache = cache
	List(fx.dir, opts)
	path := listCachePath(cache, SessionsDir(fx.dir))
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	damage := []func([]byte) []byte{
		func(b []byte) []byte { return b[:rng.IntN(len(b))] },
		func(b []byte) []byte { b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255)); return b },
		func(b []byte) []byte { return append(b, 0) },
	}
	for k := range 200 {
		b := damage[k%len(damage)](append([]byte(nil), good...))
		os.WriteFile(path, b, 0o600)
		got, err := List(fx.dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		if why := listsDiffer(got, want); why != "" {
			t.Fatalf("damage %d: %s", k, why)
		}
	}
	// A FIFO where the cache should be: not opened for reading (no hang),
	// and the listing goes on.
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := List(fx.dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if why := listsDiffer(got, want); why != "" {
		t.Fatal(why)
	}
}

// FuzzListCache reads arbitrary records under a valid checksum (the
// fuzzer could not find one of its own): indexing and decoding never panic
// or run past the bytes, and what was indexed is written again as it was
// read.
func FuzzListCache(f *testing.F) {
	e := &listCacheEntry{stamp: fileStamp{size: 10, mtime: 1, ctime: 2, ino: 3}, withStatus: true,
		info: SessionInfo{ID: "id", Cwd: "/w", Title: "t", Created: fixedTime, Status: StatusComplete, Version: 3}}
	c := &listCache{fresh: map[string]*listCacheEntry{"/a.jsonl": e, "/b.jsonl": {}}}
	f.Add(c.encode()[len(listCacheMagic)+4:])
	f.Add([]byte{1, 0})
	f.Fuzz(func(t *testing.T, records []byte) {
		b := append([]byte(listCacheMagic), 0, 0, 0, 0)
		binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(records, castagnoli))
		raw, body, index, ok := indexListCache(append(b, records...))
		if !ok {
			return
		}
		for _, span := range index {
			newListCacheDecoder(raw[span[0]:span[1]], body[span[0]:span[1]]).record()
		}
		c := &listCache{raw: raw, body: body, index: index}
		if _, _, again, ok := indexListCache(c.encode()); !ok || !reflect.DeepEqual(mapKeys(again), mapKeys(index)) {
			t.Fatalf("re-encoded cache of %d records reads as %d (%v)", len(index), len(again), ok)
		}
	})
}

func mapKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
