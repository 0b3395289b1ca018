//go:build !race

package hq

const raceEnabled = false
