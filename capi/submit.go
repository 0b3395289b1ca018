//go:build cgo

package capi

import "github.com/tadpole-trace/tadpole/internal/host"

// submit hands a thread's records to the agent: one batch, whatever its
// number of records, takes one slot of the agent's lanes.
func submit(thread uint64, b []byte) error {
	_, err := host.SubmitBatch(thread, b)
	return err
}
