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
