package hq

import "github.com/tadpole-trace/tadpole/transport/bytefrog"

// Processor receives the messages of one run, besides HQ's own analysis
// (the Report). Its methods are called from the run's core goroutine only,
// one at a time.
type Processor interface {
	// Message receives every message the agent sent: unsequenced ones
	// (mappings, heartbeats, class reports, errors) as they arrive, and
	// sequenced ones (events, markers) in sequence order. m and the slices
	// it holds are valid only during the call.
	Message(m *bytefrog.Msg)
	// DataBreak is called right before the event numbered seq: inferred
	// state such as call stacks should be dropped. A break for a number
	// already passed, or past the last event, is delivered when it is
	// known.
	DataBreak(seq int32)
	// Finish is called once, when the run has ended, with its report. It
	// may add to the report (e.g. Warnings).
	Finish(r *Report)
}
