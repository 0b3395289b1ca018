package capi

/*
#include "tp.h"
*/
import "C"

import (
	"github.com/tadpole-trace/tadpole/agent"
	"github.com/tadpole-trace/tadpole/internal/host"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Offsets in a batch record (agent/batch.go) of its two string lengths, and
// the records' alignment.
const (
	offLen1 = 1 + 1 + 2 + 4 + 4
	offLen2 = offLen1 + 2
	align   = 8
)

// The C encoder's record layout and modes must be the agent's: each pair of
// array lengths below fails to compile unless the two constants are equal.
var (
	_ [C.TP_HDR - host.BatchHeaderSize]struct{}
	_ [host.BatchHeaderSize - C.TP_HDR]struct{}
	_ [C.TP_HDR - (C.TP_OFF_TIME + 8)]struct{}
	_ [C.TP_OFF_TIME + 8 - C.TP_HDR]struct{}
	_ [C.TP_OFF_LEN1 - offLen1]struct{}
	_ [offLen1 - C.TP_OFF_LEN1]struct{}
	_ [C.TP_OFF_LEN2 - offLen2]struct{}
	_ [offLen2 - C.TP_OFF_LEN2]struct{}
	_ [C.TP_ALIGN - align]struct{}
	_ [align - C.TP_ALIGN]struct{}

	_ [C.TP_KIND_ENTRY - host.BatchEntry]struct{}
	_ [host.BatchEntry - C.TP_KIND_ENTRY]struct{}
	_ [C.TP_KIND_EXIT - host.BatchExit]struct{}
	_ [host.BatchExit - C.TP_KIND_EXIT]struct{}
	_ [C.TP_KIND_THROW - host.BatchThrow]struct{}
	_ [host.BatchThrow - C.TP_KIND_THROW]struct{}
	_ [C.TP_KIND_BUBBLE - host.BatchBubble]struct{}
	_ [host.BatchBubble - C.TP_KIND_BUBBLE]struct{}
	_ [C.TP_KIND_MARKER - host.BatchMarker]struct{}
	_ [host.BatchMarker - C.TP_KIND_MARKER]struct{}
	_ [C.TP_KIND_NAME - host.BatchName]struct{}
	_ [host.BatchName - C.TP_KIND_NAME]struct{}
	_ [C.TP_KIND_END - host.BatchEnd]struct{}
	_ [host.BatchEnd - C.TP_KIND_END]struct{}
	_ [C.TP_FLAG_THROWN - host.BatchFlagThrown]struct{}
	_ [host.BatchFlagThrown - C.TP_FLAG_THROWN]struct{}
	_ [C.TP_FLAG_MUTF8 - host.BatchFlagMUTF8]struct{}
	_ [host.BatchFlagMUTF8 - C.TP_FLAG_MUTF8]struct{}

	_ [C.TP_ACCEPT_NONE - agent.AcceptNone]struct{}
	_ [agent.AcceptNone - C.TP_ACCEPT_NONE]struct{}
	_ [C.TP_ACCEPT_ALL - agent.AcceptAll]struct{}
	_ [agent.AcceptAll - C.TP_ACCEPT_ALL]struct{}
	_ [C.TP_ACCEPT_RANGE - agent.AcceptRange]struct{}
	_ [agent.AcceptRange - C.TP_ACCEPT_RANGE]struct{}
	_ [C.TP_ACCEPT_SINGLE - agent.AcceptSingle]struct{}
	_ [agent.AcceptSingle - C.TP_ACCEPT_SINGLE]struct{}
	_ [C.TP_ACCEPT_LOG - agent.AcceptLog]struct{}
	_ [agent.AcceptLog - C.TP_ACCEPT_LOG]struct{}

	_ [C.TP_MODE_INITIALIZING - bytefrog.ModeInitializing]struct{}
	_ [bytefrog.ModeInitializing - C.TP_MODE_INITIALIZING]struct{}
	_ [C.TP_MODE_TRACING - bytefrog.ModeTracing]struct{}
	_ [bytefrog.ModeTracing - C.TP_MODE_TRACING]struct{}
	_ [C.TP_MODE_PAUSED - bytefrog.ModePaused]struct{}
	_ [bytefrog.ModePaused - C.TP_MODE_PAUSED]struct{}
	_ [C.TP_MODE_SUSPENDED - bytefrog.ModeSuspended]struct{}
	_ [bytefrog.ModeSuspended - C.TP_MODE_SUSPENDED]struct{}
	_ [C.TP_MODE_SHUTDOWN - bytefrog.ModeShutdown]struct{}
	_ [bytefrog.ModeShutdown - C.TP_MODE_SHUTDOWN]struct{}
)
