//go:build (amd64 || arm64) && !race

package agent

// storeRelease stores v at *p with release ordering: every store the
// caller made before it is visible to a reader that loads *p with
// sync/atomic and sees v. On amd64 that is a plain MOV (stores are not
// reordered with older stores), on arm64 STLR. Unlike sync/atomic's
// sequentially consistent Store it does not wait for the store buffer to
// drain, which is most of what publishing a slot costs.
//
//go:noescape
func storeRelease(p *uint32, v uint32)
