package ctest

import (
	"os"
	"testing"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/testhq"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

// testHQ is the in-test reference HQ, with the environment of a program
// tracing into it.
type testHQ struct{ *testhq.HQ }

func startHQ(t testing.TB, tweak func(*hq.Config)) *testHQ {
	return &testHQ{testhq.Start(t, tweak)}
}

// env is the environment of a program tracing into h: quick flushes, no
// LTTng registration, agent warnings on stderr.
func (h *testHQ) env(extra ...string) []string {
	return Env(append([]string{
		"TADPOLE_HQ=" + h.Addr(),
		"TADPOLE_FLUSH_INTERVAL=5ms",
		"TADPOLE_LTTNG=off",
	}, extra...)...)
}
