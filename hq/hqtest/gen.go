package hqtest

import (
	"fmt"
	"math/rand/v2"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Gen encodes agent traffic as an agent would: one global sequence counter
// from 0, and each mapping written into the current buffer right before
// the first event that uses its id.
type Gen struct {
	Flavor  bytefrog.Flavor
	Seq     int32 // next sequence number
	RelTime int32

	buf     []byte
	methods map[int32]bool
	excs    map[int32]bool
	threads map[uint16]bool
}

// NewGen returns a generator for the MethodExit layout of flavor.
func NewGen(flavor bytefrog.Flavor) *Gen {
	return &Gen{Flavor: flavor, methods: map[int32]bool{}, excs: map[int32]bool{}, threads: map[uint16]bool{}}
}

// MethodName is the signature Gen maps method id to.
func MethodName(id int32) string { return fmt.Sprintf("com/example/C%d.m%d;9;()V", id%17, id) }

// ExceptionName is the class name Gen maps exception id to.
func ExceptionName(id int32) string { return fmt.Sprintf("com.example.Failure%d", id) }

// ThreadName is the name Gen maps thread id to.
func ThreadName(tid uint16) string { return fmt.Sprintf("worker-%d", tid) }

func (g *Gen) thread(tid uint16) {
	if !g.threads[tid] {
		g.threads[tid] = true
		g.buf = bytefrog.AppendMapThreadName(g.buf, tid, g.RelTime, ThreadName(tid))
	}
}

func (g *Gen) method(id int32) {
	if !g.methods[id] {
		g.methods[id] = true
		g.buf = bytefrog.AppendMapMethodSignature(g.buf, id, MethodName(id))
	}
}

func (g *Gen) exception(id int32) {
	if !g.excs[id] {
		g.excs[id] = true
		g.buf = bytefrog.AppendMapException(g.buf, id, ExceptionName(id))
	}
}

func (g *Gen) seq() int32 {
	s := g.Seq
	g.Seq++
	return s
}

// Entry appends a MethodEntry (and the mappings it needs).
func (g *Gen) Entry(tid uint16, method int32) {
	g.thread(tid)
	g.method(method)
	g.buf = bytefrog.AppendMethodEntry(g.buf, g.RelTime, g.seq(), method, tid)
}

// Exit appends a MethodExit in the generator's flavour.
func (g *Gen) Exit(tid uint16, method int32, line uint16) {
	g.thread(tid)
	g.method(method)
	if g.Flavor == bytefrog.FlavorCodePulse {
		g.buf = bytefrog.AppendMethodExitCodePulse(g.buf, g.RelTime, g.seq(), method, false, tid)
		return
	}
	g.buf = bytefrog.AppendMethodExit(g.buf, g.RelTime, g.seq(), method, line, tid)
}

// Throw appends an Exception event.
func (g *Gen) Throw(tid uint16, method, exc int32, line uint16) {
	g.thread(tid)
	g.method(method)
	g.exception(exc)
	g.buf = bytefrog.AppendException(g.buf, g.RelTime, g.seq(), method, exc, line, tid)
}

// Bubble appends an ExceptionBubble event.
func (g *Gen) Bubble(tid uint16, method, exc int32) {
	g.thread(tid)
	g.method(method)
	g.exception(exc)
	g.buf = bytefrog.AppendExceptionBubble(g.buf, g.RelTime, g.seq(), method, exc, tid)
}

// Marker appends a Marker event.
func (g *Gen) Marker(key, value string) {
	g.buf = bytefrog.AppendMarker(g.buf, g.RelTime, g.seq(), key, value)
}

// Raw appends bytes as they are.
func (g *Gen) Raw(b []byte) { g.buf = append(g.buf, b...) }

// Len returns the size of the current buffer.
func (g *Gen) Len() int { return len(g.buf) }

// Take returns the current buffer and starts a new one.
func (g *Gen) Take() []byte {
	b := g.buf
	g.buf = nil
	return b
}

// Workload describes traffic for Generate.
type Workload struct {
	Events  int    // sequenced events, about (entry/exit pairs)
	Methods int    // distinct methods; calls follow a skewed distribution
	Threads int    // threads, each with its own call stack
	Chunk   int    // bytes per agent buffer
	Seed    uint64 // for the random choices
	Flavor  bytefrog.Flavor
}

// Generate returns realistic traffic: nested entry/exit pairs on several
// threads, cut into agent buffers of about w.Chunk bytes, with every
// mapping in the buffer of its first use. It returns the buffers (in
// sequence order) and the number of sequenced events.
func Generate(w Workload) ([][]byte, int) {
	g := NewGen(w.Flavor)
	rng := rand.New(rand.NewPCG(w.Seed, w.Seed^0x9e3779b97f4a7c15))
	threads := max(w.Threads, 1)
	methods := max(w.Methods, 1)
	stacks := make([][]int32, threads)
	var chunks [][]byte
	flush := func() {
		if g.Len() >= w.Chunk {
			chunks = append(chunks, g.Take())
		}
	}
	for int(g.Seq) < w.Events {
		tid := rng.IntN(threads)
		st := stacks[tid]
		if len(st) == 0 || (len(st) < 12 && rng.IntN(2) == 0) {
			// Skewed: low ids are called far more often.
			m := int32(rng.IntN(1 + rng.IntN(methods)))
			g.Entry(uint16(tid), m)
			stacks[tid] = append(st, m)
		} else {
			g.Exit(uint16(tid), st[len(st)-1], uint16(10+len(st)))
			stacks[tid] = st[:len(st)-1]
		}
		flush()
	}
	for tid, st := range stacks {
		for i := len(st) - 1; i >= 0; i-- {
			g.Exit(uint16(tid), st[i], 1)
		}
	}
	if g.Len() > 0 {
		chunks = append(chunks, g.Take())
	}
	return chunks, int(g.Seq)
}

// Spread deals buffers round-robin to k connections and concatenates each
// connection's share: every connection then carries ascending numbers.
func Spread(chunks [][]byte, k int) [][]byte {
	out := make([][]byte, k)
	for i, c := range chunks {
		out[i%k] = append(out[i%k], c...)
	}
	return out
}
