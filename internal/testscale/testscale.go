// Package testscale says how many generated cases a test runs: enough by
// default that a developer's `go test -race ./...` checks every property
// and still passes on a small, busy machine within go test's default
// timeout; the full count when $XDEV_TEST_LONG is set, as CI sets it.
//
// A test draws its cases with N(normal, long); what it asserts does not
// change with the count, only how many cases it asserts it of. Under the
// race detector, which makes every case several times slower and looks
// for something else (two goroutines at one memory), N is a quarter of
// normal: the properties are held at their full counts by the run
// without it (CI runs both).
package testscale

import "os"

// EnvLong names the variable that asks for the long runs.
const EnvLong = "XDEV_TEST_LONG"

// Long reports whether the long runs were asked for.
func Long() bool { return os.Getenv(EnvLong) != "" }

// N is normal, or long when the long runs were asked for, and a quarter
// of normal (at least 1) under the race detector.
func N(normal, long int) int {
	switch {
	case Race:
		return max(1, normal/4)
	case Long():
		return long
	}
	return normal
}

// Step is how far a test that tries every one of a series (each page of
// a file, each byte offset) goes on between tries: 1, or 4 under the
// race detector, for the reason N is smaller there.
func Step() int {
	if Race {
		return 4
	}
	return 1
}

// A test that starts processes of its own binary (the command under test,
// a helper to kill) built with -race waits a second in each as it exits:
// the race runtime's atexit_sleep_ms, which lets other goroutines report
// a race. Hundreds of such processes make minutes of sleep. Importing
// this package sets it to 0 for them, unless $GORACE says otherwise.
func init() {
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
}
