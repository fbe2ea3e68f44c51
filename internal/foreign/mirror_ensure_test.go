package foreign

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestEnsureSplicedIsWhole: over random histories of a Claude Code and a
// Codex dir (fakeharness's changes, refreshes now and then), sessions
// opened one after another (unchanged since their last opening, grown,
// never opened, gone, a FIFO) by a mirror that splices their rows into
// its manifest leave it, file for file, as a mirror that reads and writes
// every row (ensureWhole) leaves its own: the same answers, manifest
// (when each was opened too, on one clock), listing stamp and mirror
// files, with few enough bytes of them allowed that older ones are
// removed; and the manifest's lines stay searchable.
func TestEnsureSplicedIsWhole(t *testing.T) {
	defer func(b int64, c func() int64) { openedBytes, clockNanos = b, c }(openedBytes, clockNanos)
	openedBytes = 2 << 10
	opened, converted := 0, 0
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 1234))
		tmp := t.TempDir()
		for _, h := range fakeHarnesses(t, rng, tmp, 6) {
			ms := refreshedMirrors(t, h.src, filepath.Join(tmp, "spliced"), filepath.Join(tmp, "whole"))
			spliced, whole := ms[0], ms[1]
			refresh := func() {
				for _, m := range ms {
					if _, err := m.Refresh(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
			}
			var clock int64
			for round := range 40 {
				list, _ := h.src.List(true)
				for range 1 + rng.IntN(4) {
					if len(list) == 0 {
						break
					}
					s := list[rng.IntN(len(list))]
					if s.Err != nil {
						continue
					}
					what := fmt.Sprintf("seed %d, %s round %d, %s", seed, h.src.Harness(), round, filepath.Base(s.Path))
					if rng.IntN(3) > 0 { // else a coarse clock: the time of the last
						clock += 1000
					}
					var got [2]string
					for k, m := range []*Mirror{spliced, whole} {
						ensureWhole = k == 1
						c := clock
						clockNanos = func() int64 { c++; return c }
						before, _ := os.ReadFile(m.manifestPath())
						f, err := m.Ensure(context.Background(), s)
						ensureWhole = false
						rel, _ := filepath.Rel(m.Dir, f.Path)
						got[k] = fmt.Sprintf("%s skipped %d err %v", rel, f.Skipped, err)
						if after, _ := os.ReadFile(m.manifestPath()); k == 0 && string(after) != string(before) {
							converted++
						}
					}
					opened++
					if got[0] != got[1] {
						t.Fatalf("%s: Ensure gave %s, want %s", what, got[0], got[1])
					}
					sameOpened(t, what, spliced, whole)
					if spliced.searchableManifest() == nil {
						t.Fatalf("%s: the manifest's lines cannot be searched", what)
					}
				}
				for range rng.IntN(3) {
					if _, err := h.changes[rng.IntN(len(h.changes))](); err != nil {
						t.Fatal(err)
					}
				}
				if rng.IntN(4) == 0 {
					refresh()
				}
			}
		}
	}
	t.Logf("%d sessions opened, %d converted", opened, converted)
	if converted < opened/4 {
		t.Errorf("only %d of %d openings converted", converted, opened)
	}
}

// sameOpened is sameMirror with when each session was opened compared
// too (the two mirrors open on one clock).
func sameOpened(t *testing.T, what string, a, b *Mirror) {
	t.Helper()
	own := regexp.MustCompile(`,"mirrorMtimeNs":\d+`)
	ma, _ := os.ReadFile(a.manifestPath())
	mb, _ := os.ReadFile(b.manifestPath())
	if x, y := own.ReplaceAll(ma, nil), own.ReplaceAll(mb, nil); string(x) != string(y) {
		t.Fatalf("%s: manifests differ:\n%s\nwant:\n%s", what, x, y)
	}
	sameMirror(t, what, a, b)
}
