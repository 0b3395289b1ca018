//go:build !race

package agent

// storeRelease stores v at *p with release ordering (STLR): every store the
// caller made before it is visible to a reader that loads *p with
// sync/atomic and sees v. Unlike sync/atomic's sequentially consistent
// Store it does not wait for the store buffer to drain, which is most of
// what publishing a slot costs.
//
//go:noescape
func storeRelease(p *uint64, v uint64)
