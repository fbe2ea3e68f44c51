package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestShortIDs: on 10,000 ids that share long prefixes (UUIDv7s of the
// same few milliseconds, ids that differ only in case, duplicates, ids
// that are prefixes of others, short ones), each short id is the
// shortest prefix of 8 characters or more that no other id shares, ASCII
// case folded, or the whole id when none is.
func TestShortIDs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	hex := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte("0123456789abcdef"[r.IntN(16)])
		}
		return b.String()
	}
	var ids []string
	for len(ids) < 10000 {
		switch r.IntN(10) {
		case 0:
			ids = append(ids, hex(r.IntN(12)))
		case 1:
			if len(ids) > 0 {
				ids = append(ids, ids[r.IntN(len(ids))]) // the same id twice
			}
		case 2:
			if len(ids) > 0 {
				ids = append(ids, strings.ToUpper(ids[r.IntN(len(ids))]))
			}
		case 3:
			if len(ids) > 0 {
				id := ids[r.IntN(len(ids))]
				ids = append(ids, id[:r.IntN(len(id)+1)])
			}
		default:
			// UUIDv7: 48 bits of milliseconds, of a handful of them.
			ms := 0x019ad4c0_0000 + r.IntN(8)
			ids = append(ids, fmt.Sprintf("%08x-%04x-7%s-%s-%s", ms>>16, ms&0xffff, hex(3), hex(4), hex(12)))
		}
	}
	short := shortIDs(ids)
	count := map[string]int{}
	for _, id := range ids {
		id = strings.ToLower(id)
		for n := 1; n <= len(id); n++ {
			count[id[:n]]++
		}
	}
	// An id's prefix of length n is shared when more ids have it than the
	// copies of this one prefix that it is itself.
	shared := func(i, n int) bool {
		p := strings.ToLower(ids[i][:n])
		return count[p] > 1
	}
	for i, id := range ids {
		s := short[i]
		if !strings.HasPrefix(id, s) {
			t.Fatalf("%q: short id %q is not its prefix", id, s)
		}
		n := len(s)
		switch {
		case n < min(8, len(id)):
			t.Fatalf("%q: short id %q under 8 characters", id, s)
		case n < len(id) && shared(i, n):
			t.Fatalf("%q: short id %q is shared", id, s)
		case n > 8 && !shared(i, n-1):
			t.Fatalf("%q: short id %q is longer than it need be", id, s)
		}
	}
}
