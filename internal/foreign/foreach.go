package foreign

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// forEach calls fn(k) for every k below n, on as many goroutines as there
// are CPUs to run them: a listing with no cache reads thousands of files'
// heads, each a few syscalls, and one goroutine leaves the other CPUs
// idle. fn must be safe to run concurrently; it returns when every call
// has.
func forEach(n int, fn func(k int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for k := range n {
			fn(k)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for k := int(next.Add(1) - 1); k < n; k = int(next.Add(1) - 1) {
				fn(k)
			}
		})
	}
	wg.Wait()
}
