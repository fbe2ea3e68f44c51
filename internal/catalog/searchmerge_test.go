package catalog_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/xdev/xdev/internal/catalog"
	"github.com/xdev/xdev/internal/search"
	"github.com/xdev/xdev/internal/searchtext"
	"github.com/xdev/xdev/internal/testplace"
)

// TestSearchFinishesTheHitsMerged: a search of several indexes, which
// cuts the snippets of and names only the hits its merge keeps, answers
// exactly what finishing every index's hits and then merging them would:
// each index searched alone (its own hits, finished) and search.Merge
// of those lists. Random queries (words of every harness's real
// sessions, OR, a phrase, a prefix, an excluded word), limits, orders
// and filters.
func TestSearchFinishesTheHitsMerged(t *testing.T) {
	p := testplace.New(t)
	testplace.CopyRealFixtures(t, p.Roots)
	ix := openEveryIndex(t, p.Catalog(t))
	// The words: those of the snippets of a few common words' hits.
	var words []string
	seen := map[string]bool{}
	for _, w := range []string{"the", "file", "code", "test", "a"} {
		hits, err := ix.Search(t.Context(), search.Query{Text: w, Limit: 200, Subagents: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			searchtext.ForTokens(h.Snippet, func(_, _ int, tok string) {
				if len(tok) > 2 && !seen[tok] {
					seen[tok] = true
					words = append(words, tok)
				}
			})
		}
	}
	if len(words) < 50 {
		t.Fatalf("only %d words in the fixtures' hits", len(words))
	}
	rng := rand.New(rand.NewPCG(11, 42))
	word := func() string { return words[rng.IntN(len(words))] }
	indexes := 0
	for round := range 150 {
		var text string
		switch rng.IntN(6) {
		case 0:
			text = word() + " OR " + word()
		case 1:
			text = `"` + word() + " " + word() + `" OR ` + word()
		case 2:
			text = word()[:2] + "*"
		case 3:
			text = word() + " -" + word()
		default:
			text = word()
		}
		q := search.Query{Text: text, Limit: 1 + rng.IntN(40), Newest: rng.IntN(3) == 0,
			Subagents: rng.IntN(2) == 0, Thinking: rng.IntN(2) == 0}
		got, err := ix.Search(t.Context(), q)
		if err != nil {
			t.Fatalf("round %d %q: %v", round, text, err)
		}
		var lists [][]search.Hit
		for k := range ix.Len() {
			alone, err := ix.SearchIn(t.Context(), q, func(pl catalog.SearchPlace) bool { return pl == ix.Place(k) })
			if err != nil {
				t.Fatal(err)
			}
			if len(alone) > 0 {
				lists = append(lists, alone)
			}
		}
		indexes = max(indexes, len(lists))
		want := search.Merge(lists, q.Newest, q.Limit)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d %+v: %d hits\n%s\nwant %d (each index finished, then merged)\n%s", round, q, len(got), brief(got), len(want), brief(want))
		}
	}
	if indexes < 3 {
		t.Errorf("no query had hits in more than %d indexes: nothing merged", indexes)
	}
}

func brief(hits []search.Hit) string {
	var b strings.Builder
	for _, h := range hits {
		fmt.Fprintf(&b, "  %s %s:%d %q %q\n", h.Harness, h.Path, h.Line, h.Title, h.Snippet)
	}
	return b.String()
}

// openEveryIndex opens and refreshes the index of every harness's place
// of c, closed when the test ends.
func openEveryIndex(t *testing.T, c *catalog.Catalog) *catalog.Indexes {
	t.Helper()
	places, err := c.PlacesIn(catalog.Every)
	if err != nil {
		t.Fatal(err)
	}
	ix, _, err := c.OpenIndexes(t.Context(), places, catalog.IndexOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ix.Close)
	return ix
}
