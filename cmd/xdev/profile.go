package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startProfile writes a CPU profile of the command to the file
// $XDEV_CPUPROFILE names, when it is set: how docs/performance.md's
// profiles of whole commands are taken (go tool pprof -top FILE). It
// returns what stops the profile.
func startProfile() (stop func()) {
	path := os.Getenv("XDEV_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "xdev: XDEV_CPUPROFILE: %v\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
