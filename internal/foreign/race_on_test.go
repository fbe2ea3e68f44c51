//go:build race

package foreign

// raceEnabled: the race detector's instrumentation allocates on its own,
// so tests that count allocations skip under it (as the standard
// library's do).
const raceEnabled = true
