package main

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The soft memory limit keeps every command's heap small: the collector
// returns garbage before the heap doubles rather than after. But a limit
// below what a command must hold (the index of a session of a million
// entries) makes the collector run back to back, and the command take
// ten times as long while using no less memory. So the limit follows the
// live heap: never below memoryLimit, and twice the live heap once that
// passes three quarters of it, coming back down as the heap does (a
// server's big page is let go).
func guardMemoryLimit(base int64) {
	debug.SetMemoryLimit(base)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	limit := base
	go func() {
		for range time.Tick(20 * time.Millisecond) {
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				return
			}
			want := max(base, 2*int64(sample[0].Value.Uint64()))
			if want > limit*5/4 || want < limit*3/4 {
				limit = want
				debug.SetMemoryLimit(limit)
			}
		}
	}()
}
