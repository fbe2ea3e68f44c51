//go:build race

package secrets

// raceEnabled: the race detector is on (see skipUnderRace).
const raceEnabled = true
