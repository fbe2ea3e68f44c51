package jsonx

import (
	"math/rand/v2"
	"testing"
)

// TestASCIIRun: the word-at-a-time scan agrees with a byte-at-a-time
// reading on every byte value at every position of runs of every length
// up to three words, and on random text.
func TestASCIIRun(t *testing.T) {
	ascii := func(b []byte) int {
		for i, c := range b {
			if c >= 0x80 {
				return i
			}
		}
		return len(b)
	}
	check := func(b []byte) {
		if got, want := asciiRun(b), ascii(b); got != want {
			t.Fatalf("asciiRun(%q) = %d, want %d", b, got, want)
		}
	}
	for n := range 25 {
		for at := range n {
			for c := range 256 {
				for _, fill := range []byte{'a', 0x7f, 0x80, 0xff, 0x21, 0x5d} {
					b := make([]byte, n)
					for i := range b {
						b[i] = fill
					}
					b[at] = byte(c)
					check(b)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
			if r.IntN(4) > 0 {
				b[i] = byte(0x20 + r.IntN(0x5f))
			}
		}
		check(b)
	}
}
