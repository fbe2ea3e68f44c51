package search

import "errors"

// pipeline runs read on a goroutine of its own while this one hands what
// it sends, in order, to write: a refresh decodes a file's entries while
// SQLite writes the ones before them, each on a CPU. At most depth items
// wait between the two (an entry's text is up to 2 MiB).
//
// A write that fails stops the read (send returns errStopped from then
// on) and is the second error; what read sent after it is dropped. The
// first error is read's own. pipeline returns once read has.
func pipeline[T any](depth int, read func(send func(T) error) error, write func(T) error) (readErr, writeErr error) {
	items := make(chan T, depth)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(items)
		readErr = read(func(x T) error {
			select {
			case items <- x:
				return nil
			case <-stop:
				return errStopped
			}
		})
	}()
	for x := range items {
		if writeErr == nil {
			if writeErr = write(x); writeErr != nil {
				close(stop)
			}
		}
	}
	<-done
	return readErr, writeErr
}

// errStopped is what a pipeline's send returns once its write failed.
var errStopped = errors.New("the index's write failed")
