package serve

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// TestBuildsAreToldOf: Config.Building is told of each build of a view
// of every session, on then off, never two at once: the listing New
// makes, the listing made whole once the watch is set, the first usage
// view. An append, patched into the library, builds nothing.
func TestBuildsAreToldOf(t *testing.T) {
	p := newPlace(t)
	path, s := p.newSession(t, "/w/a", "first", "hello", "hi")
	p.newSession(t, "/w/b", "second", "more", "yes")
	var mu sync.Mutex
	var told []bool
	p.building = func(on bool) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, on)
	}
	settled := func() []bool {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			mu.Lock()
			got := slices.Clone(told)
			mu.Unlock()
			if len(got) > 0 && !got[len(got)-1] || time.Now().After(deadline) {
				return got
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	r := p.serve(t)
	got := settled()
	if len(got) < 6 {
		t.Fatalf("told %v: want at least three builds (New's listing, the listing made whole, the usage view)", got)
	}
	for k, on := range got {
		if on != (k%2 == 0) {
			t.Fatalf("told %v: not each build on, then off", got)
		}
	}
	before := r.relisted.Load()
	appendText(t, s, true, "an append")
	deadline := time.Now().Add(10 * time.Second)
	for r.relisted.Load() == before {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the append was never patched in", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if after := settled(); len(after) != len(got) && !r.usageWanted() {
		t.Errorf("an append patched in told %v, after %v", after[len(got):], got)
	}
}
