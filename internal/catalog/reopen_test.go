package catalog

import (
	"testing"
	"time"
)

// TestReopener: a Reopener reopens once after a use, never before one,
// and a burst of uses is one reopen.
func TestReopener(t *testing.T) {
	fired := make(chan struct{}, 10)
	r := NewReopener(func() { fired <- struct{}{} })
	defer r.Stop()
	select {
	case <-fired:
		t.Fatal("reopened before any use")
	case <-time.After(50 * time.Millisecond):
	}
	for range 5 {
		r.Used(20 * time.Millisecond)
	}
	select {
	case <-fired:
	case <-time.After(10 * time.Second):
		t.Fatal("no reopen after a use")
	}
	select {
	case <-fired:
		t.Fatal("a burst of uses reopened more than once")
	case <-time.After(100 * time.Millisecond):
	}
}
