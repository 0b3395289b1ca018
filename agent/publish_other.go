//go:build !(amd64 || arm64) || race

package agent

import "sync/atomic"

// storeRelease stores v at *p so that a reader loading *p with sync/atomic
// sees every store made before it. Here it is sync/atomic's Store: on
// other architectures, and under the race detector, which must see the
// publication as synchronization.
func storeRelease(p *uint64, v uint64) { atomic.StoreUint64(p, v) }

// loadTail returns the next index of a lane for its pinned producer.
func loadTail(l *lane) uint64 { return atomic.LoadUint64(&l.tail) }

// setTail advances a lane's tail.
func setTail(l *lane, v uint64) { atomic.StoreUint64(&l.tail, v) }

// acquire and release bracket a pinned producer's use of its lane: here
// they lock it, never contended, so that the race detector sees the order
// that pinning gives producers of one lane.
func (l *lane) acquire() { l.mu.Lock() }
func (l *lane) release() { l.mu.Unlock() }
