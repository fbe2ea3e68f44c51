// Package testctx holds contexts for tests of work on a deadline.
package testctx

import "context"

// StopAfter returns a context that is done from its n-th look at Err on
// (its first when n is 0): a deadline that falls at a chosen point of a
// piece of work, wherever the clock would put it. Done is parent's; the
// work under test looks at Err.
func StopAfter(parent context.Context, n int) context.Context {
	return &stopAfter{Context: parent, n: n}
}

type stopAfter struct {
	context.Context
	n int
}

func (c *stopAfter) Err() error {
	if c.n--; c.n < 0 {
		return context.DeadlineExceeded
	}
	return nil
}
