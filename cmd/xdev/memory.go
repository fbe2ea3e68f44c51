package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// The soft memory limit keeps every command's heap small: the collector
// returns garbage before the heap doubles rather than after, and the
// scavenger gives freed pages back to the system before they count in
// the RSS. But a limit close to what a command must hold (the index of a
// session of a million entries) makes the collector run back to back,
// and the command take ten times as long while using no less memory. So
// the limit follows the live heap: never below memoryLimit, and the live
// heap plus half of it (at least 16 MiB) once that is more, coming back
// down as the heap does (a server's big page is let go). The collector
// then runs when the heap has grown by half, where GOGC's default waits
// for it to double.
//
// The live heap changes only when a collection ends, so the limit is
// looked at then, from a cleanup the collector runs, and never between:
// a server at rest, which collects nothing, wakes for nothing (a ticker
// that polled every 20 ms was most of an idle server's CPU).
// It returns what stops the guard (the limit stays as it is).
func guardMemoryLimit(base int64) (stop func()) {
	debug.SetMemoryLimit(base)
	g := &limitGuard{base: base, limit: base, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	g.arm()
	return func() { g.stopped.Store(true) }
}

// A limitGuard moves the soft limit with the live heap (guardMemoryLimit).
type limitGuard struct {
	base, limit int64
	sample      []metrics.Sample
	stopped     atomic.Bool
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
	live := int64(g.sample[0].Value.Uint64())
	want := max(g.base, live+max(live/2, 16<<20))
	if want > g.limit*5/4 || want < g.limit*3/4 {
		g.limit = want
		debug.SetMemoryLimit(g.limit)
	}
}
