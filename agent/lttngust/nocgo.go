//go:build !cgo

package lttngust

import (
	"errors"

	"github.com/tadpole-trace/tadpole/internal/host"
)

// ErrNoCgo: the program was built without cgo, so lttng-ust is out of reach.
var ErrNoCgo = errors.New("lttngust: built without cgo (CGO_ENABLED=0): no LTTng recording")

func init() {
	host.SetLTTngLoader(func(host.LTTngConfig) (host.LTTngRecorder, error) { return nil, ErrNoCgo })
}
