package session

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestInteropCrash: after a run of SIGKILLed appends (torn tails included,
// each later ended by the next writer's newline), real omp opens the file
// and rebuilds the same context as xdev, skipping the same torn lines.
func TestInteropCrash(t *testing.T) {
	requireOmp(t)
	path := crashRun(t, 60)
	sum := fileSum(t, path)
	compareWithOmp(t, path, nil, ompContexts(t, t.TempDir(), path)[path])
	unchanged(t, path, sum)
}

// TestInteropConcurrentWriters: xdev (eight goroutines) and omp append to
// one session at the same moment, taking turns through the shared
// lockfile: nothing is lost, nothing interleaved, and omp, reopening the
// file, sees xdev's entries in xdev's order.
func TestInteropConcurrentWriters(t *testing.T) {
	requireOmp(t)
	agent := t.TempDir()
	path := filepath.Join(SessionsDir(agent), "-proj", FileName(fixedTime, "concurrent"))
	s, err := Create(path, NewOptions{Cwd: "/proj"})
	if err != nil {
		t.Fatal(err)
	}
	// xdev keeps appending from eight goroutines for as long as omp runs
	// (Bun's start takes a while), so omp's burst lands among them.
	const ompN = 300
	var ompIDs []string
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		json.Unmarshal(runOmp(t, agent, "append-many.ts", path, "omp", strconv.Itoa(ompN)), &ompIDs)
	})
	var mu sync.Mutex
	xdevN := 0
	for g := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				case <-time.After(3 * time.Millisecond):
				}
				if _, err := s.Append(&Custom{CustomType: "w", Data: []byte(`{"tag":"xdev` + itoa(g) + `","i":` + itoa(i) + `}`)}); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				xdevN++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	s.Close()
	r, err := Open(path, &OpenOptions{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range r.Entries() {
		ids = append(ids, e.ID)
	}
	if len(ids) != ompN+xdevN || r.Malformed() != 0 {
		t.Errorf("xdev sees %d entries (%d malformed), want %d", len(ids), r.Malformed(), ompN+xdevN)
	}
	// omp reopened the file while xdev was still appending: what it saw is
	// what xdev sees, up to that moment.
	if len(ompIDs) < ompN || !slices.Equal(ids[:min(len(ompIDs), len(ids))], ompIDs) {
		t.Errorf("omp saw %d entries, not the first %d of xdev's in the same order", len(ompIDs), len(ids))
	}
	// The two really wrote at once: xdev entries sit among omp's.
	first, last, between := -1, -1, 0
	for i, e := range r.Entries() {
		if c, ok := e.Body.(*Custom); ok && strings.Contains(string(c.Data), `"omp"`) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	for _, e := range r.Entries()[max(first, 0) : last+1] {
		if c, ok := e.Body.(*Custom); ok && strings.Contains(string(c.Data), `"xdev`) {
			between++
		}
	}
	t.Logf("%d omp and %d xdev entries; %d xdev entries landed inside omp's burst", ompN, xdevN, between)
}
