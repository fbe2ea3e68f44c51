// Command xdev-bench times one store operation in a fresh process and
// prints it as JSON, for interop/omp/bench.sh to set beside omp's figures
// (scripts/bench.ts prints the same shape).
//
//	xdev-bench open FILE          Open + BuildContext
//	xdev-bench list DATADIR       List every session, with its status (as
//	                              omp's listAll reads it)
//	xdev-bench append FILE N      N appends to FILE, one at a time
//	xdev-bench append-locked FILE N  the same, taking omp's lockfile for
//	                              each append as omp does (no linger)
//	xdev-bench procs N 'CMD ARGS'...  runs each command line N times,
//	                              interleaved: wall p50/p90/p99, CPU, peak RSS
//
// Output: {"op","ms","p50us","count","peakRssKiB"}; ms is the operation
// alone (no process start), p50us the median append, peakRssKiB the
// process's VmHWM.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xdev/xdev/internal/ai"
	"github.com/xdev/xdev/internal/session"
)

type result struct {
	Op         string  `json:"op"`
	Ms         float64 `json:"ms"`
	P50us      float64 `json:"p50us,omitempty"`
	Count      int     `json:"count"`
	PeakRssKiB int64   `json:"peakRssKiB"`
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: xdev-bench open FILE | list DATADIR | append FILE N")
		os.Exit(2)
	}
	if os.Args[1] == "procs" {
		procsMain(os.Args[2:])
		return
	}
	r := result{Op: os.Args[1]}
	t0 := time.Now()
	switch os.Args[1] {
	case "open":
		s, err := session.Open(os.Args[2], nil)
		check(err)
		r.Count = len(s.BuildContext().Messages)
	case "list":
		infos, err := session.List(os.Args[2], &session.ListOptions{Status: true})
		check(err)
		r.Count = len(infos)
	case "append", "append-locked":
		var opts session.OpenOptions
		if r.Op == "append-locked" {
			opts.Lock.Linger = -1 // release after every append, as omp does
		}
		n, err := strconv.Atoi(os.Args[3])
		check(err)
		s, err := session.Open(os.Args[2], &opts)
		check(err)
		lat := make([]time.Duration, 0, n)
		t0 = time.Now()
		for i := range n {
			m := ai.Message{Role: ai.RoleUser, Content: ai.TextContent("appended message " + strconv.Itoa(i)), Timestamp: time.Now().UnixMilli()}
			a := time.Now()
			_, err := s.AppendMessage(m)
			check(err)
			lat = append(lat, time.Since(a))
		}
		s.Close()
		slices.Sort(lat)
		r.P50us = float64(lat[n/2].Nanoseconds()) / 1e3
		r.Count = n
	default:
		fmt.Fprintln(os.Stderr, "xdev-bench: unknown operation", os.Args[1])
		os.Exit(2)
	}
	r.Ms = float64(time.Since(t0).Microseconds()) / 1e3
	r.PeakRssKiB = peakRSS()
	json.NewEncoder(os.Stdout).Encode(r)
}

func peakRSS() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "xdev-bench:", err)
		os.Exit(1)
	}
}
