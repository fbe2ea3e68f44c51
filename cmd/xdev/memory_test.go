package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestMemoryLimitFollowsLiveHeap: under each policy the soft limit rises
// to the live heap and its room once a live heap passes the base, after
// the collection that finds it, and comes back to the base once the heap
// is let go.
func TestMemoryLimitFollowsLiveHeap(t *testing.T) {
	// The bases are above what the package's other tests leave live (17
	// MB under the race detector), for the limit to come back to them.
	const base = 64 << 20
	for _, tc := range []struct {
		name   string
		policy memoryPolicy
		want   int64 // the limit for a live heap of 96 MiB
	}{
		{"command", memoryPolicy{base: base, room: commandMemory.room}, 144 << 20},
		{"server", serverMemory, 192 << 20},
		{"server building", serverBuildMemory, 120 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
			defer guardMemoryLimit(tc.policy).Stop()
			limit := func() int64 { return debug.SetMemoryLimit(-1) }
			// waitFor collects until the limit is as want says, or fails.
			waitFor := func(what string, want func(int64) bool) {
				t.Helper()
				deadline := time.Now().Add(10 * time.Second)
				for !want(limit()) {
					if time.Now().After(deadline) {
						t.Fatalf("%s: the limit is %d MiB", what, limit()>>20)
					}
					runtime.GC()
					time.Sleep(10 * time.Millisecond)
				}
			}
			if got := limit(); got != tc.policy.base {
				t.Fatalf("the limit starts at %d, want %d", got, tc.policy.base)
			}
			live := make([][]byte, 96)
			for i := range live {
				live[i] = make([]byte, 1<<20)
			}
			// Give or take the quarter the guard lets the limit lag by
			// (it moves only when it would move more).
			waitFor("a live heap of 96 MiB", func(l int64) bool { return l >= tc.want*4/5 })
			runtime.KeepAlive(live)
			live = nil
			waitFor("the heap let go", func(l int64) bool { return l == tc.policy.base })
		})
	}
}

// TestGuardTakesANewPolicyAtOnce: a policy the guard is given (as xdev
// serve's builds switch it) sets the limit at once from the live heap
// the last collection found, not at the next collection.
func TestGuardTakesANewPolicyAtOnce(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	g := guardMemoryLimit(serverMemory)
	// No collection moves the limit from here: the guard is stopped, and
	// an adjustment under way is let finish before the live heap is set.
	g.Stop()
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	for _, tc := range []struct {
		live   int64
		policy memoryPolicy
		want   int64
	}{
		{96 << 20, serverBuildMemory, 120 << 20}, // and a quarter again
		{96 << 20, serverMemory, 192 << 20},      // twice
		{96 << 20, serverBuildMemory, 120 << 20},
		{96 << 20, commandMemory, 144 << 20},
		{10 << 20, serverBuildMemory, 64 << 20}, // the base
		{40 << 20, serverMemory, 80 << 20},
	} {
		g.mu.Lock()
		g.live = tc.live
		g.mu.Unlock()
		g.use(tc.policy)
		if l := limit(); l != tc.want {
			t.Errorf("a live heap of %d MiB: the limit is %d MiB, want %d", tc.live>>20, l>>20, tc.want>>20)
		}
	}
}
