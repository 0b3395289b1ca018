//go:build !(amd64 || arm64) || race

package agent

import "sync/atomic"

// storeRelease stores v at *p so that a reader loading *p with sync/atomic
// sees every store made before it. Here it is sync/atomic's Store: on
// other architectures, and under the race detector, which must see the
// publication as synchronization.
func storeRelease(p *uint32, v uint32) { atomic.StoreUint32(p, v) }
