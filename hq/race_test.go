//go:build race

package hq

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// memory figures of code that pools its buffers vary from run to run.
const raceEnabled = true
