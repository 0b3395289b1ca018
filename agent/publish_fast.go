//go:build (amd64 || arm64) && !race

package agent

// loadTail returns the next index of a lane for its pinned producer: only
// producers pinned to the lane's P write it, one at a time.
func loadTail(l *lane) uint64 { return l.tail }

// setTail advances a lane's tail. A plain store: on amd64 and arm64 an
// aligned 8-byte store is single-copy atomic, and readers on other Ps load
// it with sync/atomic after the runtime's own synchronization moved the
// goroutine.
func setTail(l *lane, v uint64) { l.tail = v }

// acquire and release bracket a pinned producer's use of its lane. Pinning
// alone keeps producers of one lane apart; under the race detector, which
// does not see pinning, they also lock the lane.
func (l *lane) acquire() {}
func (l *lane) release() {}
