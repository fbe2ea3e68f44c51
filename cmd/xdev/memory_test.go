package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestMemoryLimitFollowsLiveHeap: the soft limit rises to one and a half
// times a live heap that passes it, after the collection that finds it, and comes back
// to the base once the heap is let go.
func TestMemoryLimitFollowsLiveHeap(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	const base = 32 << 20
	defer guardMemoryLimit(memoryPolicy{base: base, room: commandMemory.room})()
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
	if got := limit(); got != base {
		t.Fatalf("the limit starts at %d, want %d", got, base)
	}
	live := make([][]byte, 48)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	// The live heap and half again, give or take the quarter the guard
	// lets the limit lag by (it moves only when it would move more).
	waitFor("a live heap of 48 MiB", func(l int64) bool { return l >= 72<<20*4/5 })
	runtime.KeepAlive(live)
	live = nil
	waitFor("the heap let go", func(l int64) bool { return l == base })
}
