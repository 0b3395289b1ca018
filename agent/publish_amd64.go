//go:build !race

package agent

// storeRelease stores v at *p with release ordering: every store the
// caller made before it is visible to a reader that loads *p with
// sync/atomic and sees v. On amd64 that is a plain store: the processor
// does not reorder stores with older stores, and the compiler keeps stores
// in program order (it is how the runtime's own release stores compile).
// Unlike sync/atomic's sequentially consistent Store it does not wait for
// the store buffer to drain, which is most of what publishing a slot
// costs; and it inlines.
func storeRelease(p *uint64, v uint64) { *p = v }
