package catalog

import (
	"cmp"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/fakeharness"
)

// TestRelistForeignKeepsAListing holds Relist to ListHarness over
// generated histories of a Claude Code and a Codex dir
// (fakeharness.ClaudeChanges, CodexChanges): after each change, the
// listing kept from the paths a watcher would name equals a whole
// listing, with and without subagents; a change of what the listing
// reads besides (history.jsonl, session_index.jsonl) or a directory
// removed asks for a whole one, and nothing else does.
func TestRelistForeignKeepsAListing(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	relisted, whole := 0, 0
	for seed := range 30 {
		rng := rand.New(rand.NewPCG(uint64(seed), 41))
		tmp := t.TempDir()
		d := fakeharness.New(tmp, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		d.Step = func() time.Duration { return time.Duration(rng.IntN(3)) * time.Second } // ties too
		t.Setenv("HOME", filepath.Join(tmp, "home"))
		c, err := New(Config{DataDir: filepath.Join(tmp, "agent"), Explicit: true, Roots: map[Harness]string{Claude: d.Claude, Codex: d.Codex}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Transcript("-w-p", "first"); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Rollout("01", true, "first"); err != nil {
			t.Fatal(err)
		}
		type step struct {
			h    Harness
			make func() (fakeharness.Change, error)
		}
		var steps []step
		for _, f := range d.ClaudeChanges(rng) {
			steps = append(steps, step{Claude, f})
		}
		for _, f := range d.CodexChanges(rng) {
			steps = append(steps, step{Codex, f})
		}
		byPath := func(rows []Row) []Row {
			rows = slices.Clone(rows)
			slices.SortFunc(rows, func(a, b Row) int { return cmp.Compare(a.Path, b.Path) })
			return rows
		}
		for _, opts := range []ListOptions{{Subagents: true}, {}} {
			prev := map[Harness][]Row{}
			for _, h := range []Harness{Claude, Codex} {
				if prev[h], err = c.ListHarness(h, opts); err != nil {
					t.Fatal(err)
				}
			}
			for round := range 40 {
				k := rng.IntN(len(steps))
				h := steps[k].h
				change, err := steps[k].make()
				if err != nil {
					t.Fatal(err)
				}
				want, err := c.ListHarness(h, opts)
				if err != nil {
					t.Fatal(err)
				}
				got, ok := c.Relist(h, prev[h], change.Paths, opts)
				switch {
				case ok && change.Whole:
					t.Fatalf("seed %d round %d (kind %d): Relist(%q) took a change only a whole listing can see", seed, round, k, change.Paths)
				case ok:
					if d := rowsDiffer(byPath(got), byPath(want)); d != "" {
						t.Fatalf("seed %d round %d (kind %d, %+v): Relist(%q): %s", seed, round, k, opts, change.Paths, d)
					}
					relisted++
				case !change.Whole:
					t.Fatalf("seed %d round %d (kind %d, %+v): Relist(%q) asked for a whole listing", seed, round, k, opts, change.Paths)
				default:
					whole++
				}
				prev[h] = want
			}
		}
	}
	t.Logf("%d relisted, %d whole", relisted, whole)
}
