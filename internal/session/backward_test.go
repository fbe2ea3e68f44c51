package session

import (
	"fmt"
	"testing"
)

// TestIDSetNoFalseHits: the set that guards the backward walk must not
// claim ids it never saw, or large files fall back to the full load.
func TestIDSetNoFalseHits(t *testing.T) {
	s := newIDSet()
	for i := range 200000 {
		s.add(fmt.Sprintf("%08x", uint32(i)*2654435761))
	}
	for i := range 200000 {
		if id := fmt.Sprintf("%08x", uint32(i)*2654435761); !s.has(id) {
			t.Fatalf("lost %s", id)
		}
		if id := fmt.Sprintf("x%07x", i); s.has(id) {
			t.Fatalf("claims %s, never added (%d ids in %d slots)", id, s.n, len(s.slots))
		}
	}
}
