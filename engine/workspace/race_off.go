//go:build !race

package workspace

// raceEnabled is set in a race-instrumented build: its shadow memory takes terabytes of address
// space, so no RLIMIT_AS can bound it.
const raceEnabled = false
