//go:build !race

package foreign

const raceEnabled = false
