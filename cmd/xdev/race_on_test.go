//go:build race

package main

// raceEnabled: the race detector's shadow memory multiplies a process's
// RSS, so tests that bound memory skip their bounds under it.
const raceEnabled = true
