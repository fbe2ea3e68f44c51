//go:build race

package testscale

// Race reports whether the tests were built with the race detector.
const Race = true
