// Package heapsample measures the peak of the Go heap while some work
// runs, for benchmarks that show memory stays bounded: the peak of an
// open, not what is left after it.
package heapsample

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Sampler records the largest heap in use (runtime.MemStats.HeapInuse)
// from Start until Finish, sampled every 2 ms and at both ends.
type Sampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

// Start starts sampling.
func Start() *Sampler {
	h := &Sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			h.record()
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

func (h *Sampler) record() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapInuse > h.peak.Load() {
		h.peak.Store(ms.HeapInuse)
	}
}

// Finish stops sampling and returns the peak, in bytes.
func (h *Sampler) Finish() uint64 {
	h.record()
	close(h.stop)
	<-h.done
	return h.peak.Load()
}
