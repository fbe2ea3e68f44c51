package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfile writes a CPU profile of the command to the file
// $XDEV_CPUPROFILE names, and a profile of every allocation it made to
// the file $XDEV_MEMPROFILE names, when they are set: how
// docs/performance.md's profiles of whole commands are taken (go tool
// pprof -top FILE; -sample_index=alloc_space for the allocations). It
// returns what stops them.
func startProfile() (stop func()) {
	var stops []func()
	if path := os.Getenv("XDEV_CPUPROFILE"); path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "xdev: XDEV_CPUPROFILE: %v\n", err)
		} else {
			stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	if path := os.Getenv("XDEV_MEMPROFILE"); path != "" {
		runtime.MemProfileRate = 512 // every allocation of more than a few words, near enough
		stops = append(stops, func() {
			runtime.GC() // the profile is as of the last collection
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "xdev: XDEV_MEMPROFILE: %v\n", err)
			}
		})
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}
