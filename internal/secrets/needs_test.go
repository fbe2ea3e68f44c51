package secrets

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestIndexFold holds indexFold to strings.Index over lowercased texts,
// on random texts of few letters (so that words are found, and missed
// by a byte).
func TestIndexFold(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const letters = "aAbB-_ "
	gen := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = letters[r.IntN(len(letters))]
		}
		return string(b)
	}
	for range 20000 {
		text, word := gen(r.IntN(40)), strings.ToLower(gen(1+r.IntN(4)))
		want := strings.Index(strings.ToLower(text), word)
		if got := indexFold(text, word); got != want {
			t.Fatalf("indexFold(%q, %q) = %d, want %d", text, word, got, want)
		}
	}
}

// TestNecessary: the texts a rule's every match holds, beside its
// keywords, for the rules whose spans are widest.
func TestNecessary(t *testing.T) {
	for _, id := range []string{"curl-auth-header", "curl-auth-user"} {
		for _, r := range Default().set().Rules {
			if r.ID == id {
				r.compile()
				if len(r.needs) == 0 {
					t.Errorf("%s: nothing known to be needed", id)
				}
				t.Logf("%s needs one of %q", id, r.needs)
			}
		}
	}
}
