// Package testscale says how many generated cases a test runs: enough by
// default that a developer's `go test -race ./...` checks every property
// and still passes on a small, busy machine within go test's default
// timeout; the full count when $XDEV_TEST_LONG is set, as CI sets it.
//
// A test draws its cases with N(normal, long); what it asserts does not
// change with the count, only how many cases it asserts it of.
package testscale

import "os"

// EnvLong names the variable that asks for the long runs.
const EnvLong = "XDEV_TEST_LONG"

// Long reports whether the long runs were asked for.
func Long() bool { return os.Getenv(EnvLong) != "" }

// N is normal, or long when the long runs were asked for.
func N(normal, long int) int {
	if Long() {
		return long
	}
	return normal
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
