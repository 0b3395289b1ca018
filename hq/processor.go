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

// BlockProcessor is a Processor that takes the run's sequenced events by
// reference, a Block at a time, instead of one Message per event: the
// core's cost for it is one call per block, whatever the block holds.
// Its Message still receives every unsequenced message, and its
// DataBreak every break (between the blocks, where it falls).
type BlockProcessor interface {
	Processor
	// Events receives the next events in sequence order. b is valid
	// only during the call unless retained (Block.Retain).
	Events(b Block)
}

// Block is a run of consecutive sequenced events, in sequence order, that
// lie in one of HQ's read buffers (BlockBufferSize bytes).
type Block struct {
	s  *slab
	ev []event
}

// BlockBufferSize is the memory a retained Block keeps: its read buffer,
// shared with the other blocks of that buffer. (A run with a
// BlockProcessor reads into buffers of this size; others, into larger
// ones.)
const BlockBufferSize = slabSize

// Len returns the number of events in b.
func (b Block) Len() int { return len(b.ev) }

// Event returns the bytes of event i of b, from its first byte to the end
// of its buffer: parse one message from it.
func (b Block) Event(i int) []byte { return b.s.raw[b.ev[i].Off:] }

// SameBuffer reports whether b and o lie in the same read buffer.
func (b Block) SameBuffer(o Block) bool { return b.s == o.s }

// Retain keeps b's buffer until Release: b stays valid after Events
// returns.
func (b Block) Retain() { b.s.ref(1) }

// Release lets go of a retained block.
func (b Block) Release() { b.s.unref() }

// Processors is a Processor made of several, called in order. A run's
// core calls each one directly, so that a BlockProcessor among them gets
// blocks and the others single events.
type Processors []Processor

// Message implements Processor.
func (ps Processors) Message(m *bytefrog.Msg) {
	for _, p := range ps {
		p.Message(m)
	}
}

// DataBreak implements Processor.
func (ps Processors) DataBreak(seq int32) {
	for _, p := range ps {
		p.DataBreak(seq)
	}
}

// Finish implements Processor.
func (ps Processors) Finish(r *Report) {
	for _, p := range ps {
		p.Finish(r)
	}
}

// flatten expands nested Processors and drops nil ones.
func flatten(procs []Processor) []Processor {
	var out []Processor
	for _, p := range procs {
		switch q := p.(type) {
		case nil:
		case Processors:
			out = append(out, flatten(q)...)
		default:
			out = append(out, p)
		}
	}
	return out
}
