package search

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPipeline runs reads of random lengths that fail at random, into
// writes that fail at random and queues of every depth: write gets what
// read sent, in order, up to its first error; a failed write stops the
// read (its send returns errStopped, and it sends nothing more); each
// error comes back from its own side; and pipeline returns only once
// read has.
func TestPipeline(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for round := range 3000 {
		n, depth := rng.IntN(50), 1+rng.IntN(9)
		readFails, writeFails := -1, -1
		if rng.IntN(3) == 0 {
			readFails = rng.IntN(n + 1)
		}
		if rng.IntN(3) == 0 {
			writeFails = rng.IntN(n + 1)
		}
		name := fmt.Sprintf("round %d: %d items, depth %d, read fails at %d, write at %d", round, n, depth, readFails, writeFails)
		readErr, writeErr := errors.New("read"), errors.New("write")
		var written []int
		readDone, stoppedAt := false, -1
		rerr, werr := pipeline(depth, func(send func(int) error) error {
			defer func() { readDone = true }()
			for i := range n {
				if i == readFails {
					return readErr
				}
				if err := send(i); err != nil {
					if !errors.Is(err, errStopped) {
						t.Fatalf("%s: send: %v", name, err)
					}
					stoppedAt = i
					return err
				}
			}
			if n == readFails {
				return readErr
			}
			return nil
		}, func(i int) error {
			if i == writeFails {
				return writeErr
			}
			written = append(written, i)
			return nil
		})
		if !readDone {
			t.Fatalf("%s: returned before read did", name)
		}
		sent := n
		if readFails >= 0 {
			sent = readFails
		}
		if stoppedAt >= 0 {
			sent = stoppedAt
		}
		wantWritten := sent
		if writeFails >= 0 && writeFails < sent {
			wantWritten = writeFails
		}
		if want := rangeOf(wantWritten); !slices.Equal(written, want) {
			t.Fatalf("%s: wrote %v, want %v", name, written, want)
		}
		switch {
		case writeFails >= 0 && writeFails < sent:
			if werr != writeErr {
				t.Fatalf("%s: write error %v", name, werr)
			}
			if rerr != errStopped && rerr != readErr && rerr != nil {
				t.Fatalf("%s: read error %v after a failed write", name, rerr)
			}
		case readFails >= 0:
			if rerr != readErr || werr != nil {
				t.Fatalf("%s: errors %v, %v; want the read's", name, rerr, werr)
			}
		default:
			if rerr != nil || werr != nil {
				t.Fatalf("%s: errors %v, %v", name, rerr, werr)
			}
		}
	}
}

func rangeOf(n int) []int {
	out := []int{}
	for i := range n {
		out = append(out, i)
	}
	return out
}
