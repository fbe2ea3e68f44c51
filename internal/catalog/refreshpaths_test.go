package catalog_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/fakeharness"
	"github.com/xdev/xdev/internal/search"
	"github.com/xdev/xdev/internal/testplace"
)

// TestRefreshPathsOfOthers: indexes of Claude Code's and Codex's
// sessions, kept by refreshes told which transcripts changed (new ones,
// appended to, removed), find for every word what indexes made anew of
// the same files find.
func TestRefreshPathsOfOthers(t *testing.T) {
	p := testplace.New(t)
	d := &fakeharness.Dirs{Claude: p.Roots[catalog.Claude], Codex: p.Roots[catalog.Codex], Clock: time.Now().Add(-time.Hour)} // past the racy window
	d.Step = func() time.Duration { return time.Second }
	rng := rand.New(rand.NewPCG(3, 4))
	var words []string
	word := func() string {
		w := fmt.Sprintf("task zq%05dword", d.Next())
		words = append(words, w[5:])
		return w
	}
	for range 3 {
		if _, err := d.Transcript("-w-p", word()); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Rollout("01", true, word()); err != nil {
			t.Fatal(err)
		}
	}
	ix := openIndexesOf(t, p.Catalog(t))
	at := map[catalog.Harness]int{}
	for k := range ix.Len() {
		at[ix.Place(k).Harness] = k
	}
	one := func(h catalog.Harness, path string, err error) (catalog.Harness, []string) {
		if err != nil {
			t.Fatal(err)
		}
		return h, []string{path}
	}
	changes := []func() (catalog.Harness, []string){
		func() (catalog.Harness, []string) {
			path, err := d.Transcript("-w-p", word())
			return one(catalog.Claude, path, err)
		},
		func() (catalog.Harness, []string) {
			path, err := d.Rollout("01", true, word())
			return one(catalog.Codex, path, err)
		},
		func() (catalog.Harness, []string) {
			path := d.Transcripts[rng.IntN(len(d.Transcripts))]
			return one(catalog.Claude, path, d.Write(path, d.UserLine(fakeharness.TranscriptID(path), word())))
		},
		func() (catalog.Harness, []string) {
			path := d.Rollouts[rng.IntN(len(d.Rollouts))]
			return one(catalog.Codex, path, d.Write(path, d.CodexEvent("user_message", word())))
		},
		func() (catalog.Harness, []string) {
			path := d.Transcripts[rng.IntN(len(d.Transcripts))]
			os.Remove(path) // or gone already
			return one(catalog.Claude, path, nil)
		},
	}
	for round := range 12 {
		changed := map[catalog.Harness][]string{}
		for range 1 + rng.IntN(3) {
			h, paths := changes[rng.IntN(len(changes))]()
			changed[h] = append(changed[h], paths...)
		}
		for h, paths := range changed {
			if _, err := ix.RefreshPaths(t.Context(), at[h], paths); err != nil {
				t.Fatal(err)
			}
		}
		// Indexes made anew, in a cache of their own.
		t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
		fresh := openIndexesOf(t, p.Catalog(t))
		t.Setenv("XDG_CACHE_HOME", p.Cache)
		for _, w := range words {
			got, want := hitsOf(t, ix, w), hitsOf(t, fresh, w)
			if got != want {
				t.Fatalf("round %d, %q: %s\nwant (indexes made anew): %s", round, w, got, want)
			}
		}
		fresh.Close()
	}
}

// openIndexesOf opens and refreshes the index of every place of c,
// closed when the test ends.
func openIndexesOf(t *testing.T, c *catalog.Catalog) *catalog.Indexes {
	t.Helper()
	places, err := c.PlacesIn(catalog.Every)
	if err != nil {
		t.Fatal(err)
	}
	ix, _, err := c.OpenIndexes(t.Context(), places, catalog.IndexOptions{NoLive: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ix.Close)
	return ix
}

// hitsOf is what a search of ix for w finds, by path and line, sorted.
func hitsOf(t *testing.T, ix *catalog.Indexes, w string) string {
	t.Helper()
	hits, err := ix.Search(t.Context(), search.Query{Text: w, Limit: 100, Subagents: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s:%d %q %q", h.Path, h.Line, h.Title, h.Snippet))
	}
	slices.Sort(out)
	return fmt.Sprint(out)
}
