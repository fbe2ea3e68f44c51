package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procResult is what procs prints of one command line: its wall time's
// percentiles over the runs, its CPU time's median, and the largest peak
// RSS of any run (the kernel's ru_maxrss of the child).
type procResult struct {
	Op        string  `json:"op"`
	Cmd       string  `json:"cmd"`
	Runs      int     `json:"runs"`
	P50ms     float64 `json:"p50ms"`
	P90ms     float64 `json:"p90ms"`
	P99ms     float64 `json:"p99ms"`
	CPUms     float64 `json:"cpuMs"`
	MaxRssKiB int64   `json:"maxRssKiB"`
}

// procs runs each command line n times, the lines interleaved so that a
// change in the machine's load falls on all of them alike, each with its
// output discarded, and prints a procResult for each. A line is split at
// spaces (no shell: its start would be timed too); a run that fails stops
// everything.
func procs(n int, lines []string) {
	type acc struct {
		wall, cpu []time.Duration
		rss       int64
	}
	accs := make([]acc, len(lines))
	for range n {
		for i, line := range lines {
			f := strings.Fields(line)
			cmd := exec.Command(f[0], f[1:]...)
			t := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				check(fmt.Errorf("%s: %v\n%s", line, err, out))
			}
			accs[i].wall = append(accs[i].wall, time.Since(t))
			accs[i].cpu = append(accs[i].cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
			accs[i].rss = max(accs[i].rss, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)
		}
	}
	ms := func(d []time.Duration, q float64) float64 {
		slices.Sort(d)
		return float64(d[min(len(d)-1, int(q*float64(len(d))))].Microseconds()) / 1e3
	}
	for i, line := range lines {
		a := accs[i]
		json.NewEncoder(os.Stdout).Encode(procResult{Op: "procs", Cmd: line, Runs: n,
			P50ms: ms(a.wall, 0.5), P90ms: ms(a.wall, 0.9), P99ms: ms(a.wall, 0.99), CPUms: ms(a.cpu, 0.5), MaxRssKiB: a.rss})
	}
}

func procsMain(args []string) {
	if len(args) < 2 {
		check(fmt.Errorf("usage: xdev-bench procs N 'CMD ARGS' ['CMD ARGS'...]"))
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 {
		check(fmt.Errorf("procs: %q is not a number of runs", args[0]))
	}
	procs(n, args[1:])
}
