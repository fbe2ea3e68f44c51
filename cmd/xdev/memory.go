package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// The soft memory limit keeps every command's heap small: the collector
// returns garbage before the heap doubles rather than after, and the
// scavenger gives freed pages back to the system before they count in
// the RSS. But a limit close to what a command must hold (the index of a
// session of a million entries) makes the collector run back to back,
// and the command take ten times as long while using no less memory. So
// the limit follows the live heap: never below the policy's base, and
// the live heap plus its room once that is more, coming back down as the
// heap does (a server's big page is let go).
//
// The live heap changes only when a collection ends, so the limit is
// looked at then, from a cleanup the collector runs, and never between:
// a server at rest, which collects nothing, wakes for nothing (a ticker
// that polled every 20 ms was most of an idle server's CPU).
// It returns the guard; Stop stops it (the limit stays as it is).
func guardMemoryLimit(p memoryPolicy) *limitGuard {
	debug.SetMemoryLimit(p.base)
	g := &limitGuard{policy: p, limit: p.base, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	g.arm()
	return g
}

// A memoryPolicy is the soft limit a process runs under: base while the
// live heap is small, then the live heap and room(live) above it.
type memoryPolicy struct {
	base int64
	room func(live int64) int64
}

var (
	// commandMemory is every command's but the server's: 44 MiB, or the
	// live heap and half again (at least 16 MiB). A command's bound is 64
	// MiB of RSS, of which the runtime's memory is not all: the binary's
	// pages take 17–23 MiB, SQLite's heap (search) a few more. With 64
	// MiB, or twice the live heap, a listing of 25,000 sessions (25 MB
	// live) took 74 MiB; with this, 60.
	commandMemory = memoryPolicy{base: 44 << 20, room: func(live int64) int64 { return max(live/2, 16<<20) }}
	// serverMemory is xdev serve's at rest: 64 MiB, or twice the live
	// heap (GOGC's own room). The server holds its listing and usage view
	// (40 MB live at 25,000 sessions) and serves pages that make tens of
	// MB of garbage: with a quarter of the live heap for room, a search
	// page took 10–20% longer. While it builds it takes serverBuildMemory.
	serverMemory = memoryPolicy{base: 64 << 20, room: func(live int64) int64 { return live }}
	// serverBuildMemory is xdev serve's while it builds a view of every
	// session (a listing made whole, a usage ledger): 64 MiB, or the live
	// heap and a quarter again (at least 8 MiB). A build holds what the
	// server holds at rest and as much again (a ledger of 25,000 sessions
	// read back from the usage cache beside the library), and with its
	// whole live heap for room the server's start on a built cache took
	// 128–139 MiB, and 168–180 where it built the ledger again; with this,
	// 100–101 and 134–141, for 0.2–1.3 CPU-seconds more. At rest the
	// server's pages keep serverMemory's room (with this one a search
	// page took 10–20% longer).
	serverBuildMemory = memoryPolicy{base: 64 << 20, room: func(live int64) int64 { return max(live/4, 8<<20) }}
	// pickMemory is the picker's: 24 MiB, or the live heap and a quarter
	// again (at least 6 MiB). It holds 25,000 rows (15 MB live) while it
	// lists every place again in the background, whose garbage the
	// command's 44 MiB let pile up to 68 MiB of RSS; with this, 62, and
	// the listing's collections cost what a person does not wait for.
	pickMemory = memoryPolicy{base: 24 << 20, room: func(live int64) int64 { return max(live/4, 6<<20) }}
)

// buildingMemory is xdev serve's Building: the process's guard takes
// serverBuildMemory while the server builds a view of every session,
// serverMemory otherwise.
func buildingMemory(on bool) {
	if memoryGuard == nil {
		return
	}
	if on {
		memoryGuard.use(serverBuildMemory)
	} else {
		memoryGuard.use(serverMemory)
	}
}

// A limitGuard moves the soft limit with the live heap (guardMemoryLimit).
type limitGuard struct {
	mu      sync.Mutex
	policy  memoryPolicy
	limit   int64
	live    int64 // as the last collection found it
	sample  []metrics.Sample
	stopped atomic.Bool
}

// Stop stops the guard: the limit stays as it is.
func (g *limitGuard) Stop() { g.stopped.Store(true) }

// use makes p the guard's policy, the limit set from it at once (from
// the live heap the last collection found).
func (g *limitGuard) use(p memoryPolicy) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.policy = p
	g.set(max(p.base, g.live+p.room(g.live)))
}

// gcSentinel is garbage from the moment it is made: its cleanup runs
// after the collection that finds it so. It holds a pointer, so the
// allocator never batches it with other small objects (whose cleanups
// would then wait for theirs).
type gcSentinel struct{ _ *byte }

// arm has the guard look at the limit after the next collection.
func (g *limitGuard) arm() {
	runtime.AddCleanup(&gcSentinel{}, func(g *limitGuard) {
		if !g.stopped.Load() {
			g.adjust()
			g.arm()
		}
	}, g)
}

// adjust sets the limit from the live heap the last collection found.
func (g *limitGuard) adjust() {
	metrics.Read(g.sample)
	if g.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.live = int64(g.sample[0].Value.Uint64())
	want := max(g.policy.base, g.live+g.policy.room(g.live))
	if want > g.limit*5/4 || want < g.limit*3/4 {
		g.set(want)
	}
}

// set sets the limit. The caller holds mu.
func (g *limitGuard) set(limit int64) {
	g.limit = limit
	debug.SetMemoryLimit(limit)
}
