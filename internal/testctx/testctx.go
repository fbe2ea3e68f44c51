// Package testctx holds contexts for tests of work on a deadline.
package testctx

import (
	"context"
	"sync/atomic"
)

// StopAfter returns a context that is done from its n-th look at Err on
// (its first when n is 0): a deadline that falls at a chosen point of a
// piece of work, wherever the clock would put it. Done is parent's; the
// work under test looks at Err, from any goroutine (as a Context may be).
func StopAfter(parent context.Context, n int) context.Context {
	c := &stopAfter{Context: parent}
	c.left.Store(int64(n))
	return c
}

type stopAfter struct {
	context.Context
	left atomic.Int64 // looks at Err before it is done
}

func (c *stopAfter) Err() error {
	if c.left.Add(-1) < 0 {
		return context.DeadlineExceeded
	}
	return nil
}
