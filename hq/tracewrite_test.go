package hq

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// writerTraffic is a run's units as HQ's core hands them to the trace
// writer, made up at random from a seed: several data connections whose
// bytes arrive in reads cut anywhere, agent buffers of several threads
// dealt to them, mappings among the events, exceptions, bubbles, markers,
// visits (protocol v3), exits that do not match their thread's innermost
// call, stacks deeper than the encoder's, method ids of one to five varint
// bytes, times going back and jumping ahead, sequence numbers with gaps,
// duplicates and buffers out of order, data breaks, notes, data for a
// connection that is not open, data given as bytes only (no parse),
// connections closed inside a message and a parse error. Threads come and
// go in waves so that blocks see up to 200 of them (more than fit a nibble,
// and slots of two varint bytes).
type writerTraffic struct {
	d     bytefrog.Dialect
	rnd   *rand.Rand
	units []unit
	t     uint32
	seq   int32
	// per thread: its call stack (method ids) and its last time
	stacks map[uint16][]int32
	times  map[uint16]int32
	slabs  []*slab // references the test drops at the end
	perr   []error // the connections' parse errors
}

func (w *writerTraffic) add(u unit) {
	w.units = append(w.units, u)
}

// event appends one sequenced event of thread tid to b.
func (w *writerTraffic) event(b []byte, tid uint16) []byte {
	r := w.rnd
	t := w.times[tid]
	switch x := r.IntN(100); {
	case x < 55:
		// same time
	case x < 90:
		t += int32(r.IntN(100))
	case x < 95:
		t -= int32(r.IntN(1000)) // backwards
	default:
		t += int32(r.Uint32() >> 2) // a jump, wrapping at times
	}
	w.times[tid] = t
	seq := w.seq
	w.seq++
	st := w.stacks[tid]
	method := int32(r.IntN(40))
	switch r.IntN(20) {
	case 0:
		method = int32(r.IntN(1 << 14))
	case 1:
		method = int32(r.Uint32()) // up to five bytes, negative too
	}
	x := r.IntN(100)
	if len(st) > 300 {
		x = 60 // unwind a too-deep stack
	}
	switch {
	case x < 48 || len(st) == 0 && x < 80:
		st = append(st, method)
		b = bytefrog.AppendMethodEntry(b, t, seq, method, tid)
	case x < 86:
		if len(st) > 0 && r.IntN(30) > 0 {
			method = st[len(st)-1]
		}
		if len(st) > 0 {
			st = st[:len(st)-1]
		}
		if w.d.Flavor == bytefrog.FlavorCodePulse {
			b = bytefrog.AppendMethodExitCodePulse(b, t, seq, method, r.IntN(8) == 0, tid)
		} else {
			line := uint16(r.IntN(200))
			if r.IntN(10) == 0 {
				line = 0xffff
			}
			b = bytefrog.AppendMethodExit(b, t, seq, method, line, tid)
		}
	case x < 90:
		if len(st) > 0 && r.IntN(4) > 0 {
			method = st[len(st)-1]
		}
		b = bytefrog.AppendException(b, t, seq, method, int32(r.IntN(5)), uint16(r.IntN(300)), tid)
	case x < 94:
		if len(st) > 0 && r.IntN(4) > 0 {
			method = st[len(st)-1]
		}
		if len(st) > 0 {
			st = st[:len(st)-1]
		}
		b = bytefrog.AppendExceptionBubble(b, t, seq, method, int32(r.IntN(5)), tid)
	case x < 97 && w.d.Version >= bytefrog.Version3:
		b = bytefrog.AppendMethodVisit(b, t, seq, method, int32(r.IntN(1000)), tid)
	default:
		b = bytefrog.AppendMarker(b, t, seq, fmt.Sprint("k", r.IntN(3)), fmt.Sprint("value ", r.IntN(1000)))
	}
	w.stacks[tid] = st
	return b
}

// unsequenced appends a mapping (or, in v3, a source location) to b.
func (w *writerTraffic) unsequenced(b []byte, tid uint16) []byte {
	r := w.rnd
	switch r.IntN(4) {
	case 0:
		return bytefrog.AppendMapThreadName(b, tid, 0, fmt.Sprint("thread-", tid))
	case 1:
		return bytefrog.AppendMapException(b, int32(r.IntN(5)), "java.lang.IllegalStateException")
	case 2:
		if w.d.Version >= bytefrog.Version3 {
			return bytefrog.AppendMapSourceLocation(b, int32(r.IntN(1000)), int32(r.IntN(40)), 3, 9, -1, -1)
		}
	}
	return bytefrog.AppendMapMethodSignature(b, int32(r.IntN(40)), fmt.Sprintf("a/B.m%d;1;()V", r.IntN(40)))
}

// newWriterTraffic makes the units of one run of about events events over
// conns data connections.
func newWriterTraffic(seed uint64, d bytefrog.Dialect, conns, events int) *writerTraffic {
	r := rand.New(rand.NewPCG(seed, 18))
	w := &writerTraffic{d: d, rnd: r, stacks: map[uint16][]int32{}, times: map[uint16]int32{}}
	w.add(unit{kind: RecordSent, raw: cmd(bytefrog.MsgStart)})
	w.add(unit{kind: RecordRecv, raw: hb(bytefrog.ModeTracing)})
	parsers := make([]*chunkParser, conns+1)
	pendingBytes := make([][]byte, conns+1) // bytes of each connection not yet read
	held := make([][]byte, conns+1)         // a buffer sent after the connection's next one
	for c := 1; c <= conns; c++ {
		parsers[c] = newChunkParser(d, 1)
		w.add(unit{kind: RecordOpen, conn: uint16(c), raw: []byte("192.0.2.7:40001")})
	}
	// read delivers up to n bytes of connection c as one read.
	read := func(c, n int) {
		b := pendingBytes[c]
		n = min(n, len(b))
		if n == 0 {
			return
		}
		pendingBytes[c] = b[n:]
		if bytesOnly(c, conns) {
			// Given as bytes only: the writer parses them itself.
			w.add(unit{kind: RecordRecv, conn: uint16(c), t: w.t, raw: bytes.Clone(b[:n])})
			return
		}
		p := parsers[c]
		if p.err != nil {
			// The connection's reader stops at its parse error.
			pendingBytes[c] = nil
			return
		}
		for len(b[:n]) > 0 {
			k := copy(p.space(), b[:n])
			b, n = b[k:], n-k
			u := p.commit(k)
			u.conn, u.t = uint16(c), w.t
			w.slabs = append(w.slabs, u.s)
			w.add(u)
			if u.perr != nil {
				w.perr = append(w.perr, u.perr)
				pendingBytes[c] = nil
				return
			}
		}
	}
	wave := uint16(0)
	nthreads := 1 + r.IntN(8)
	for made := 0; made < events; {
		if r.IntN(200) == 0 {
			wave++ // a new set of threads
			nthreads = 1 + r.IntN(200)
		}
		// One agent buffer: a thread's events, or (sometimes) several
		// threads' mixed, with mappings among them.
		var buf []byte
		n := 1 + r.IntN(600)
		if r.IntN(10) == 0 {
			n = 1 + r.IntN(5000)
		}
		tid := wave*200 + uint16(r.IntN(nthreads))
		mixed := r.IntN(8) == 0
		start := w.seq
		for range n {
			if mixed {
				tid = wave*200 + uint16(r.IntN(nthreads))
			}
			if r.IntN(100) == 0 {
				buf = w.unsequenced(buf, tid)
			}
			buf = w.event(buf, tid)
		}
		made += n
		switch r.IntN(50) {
		case 0:
			w.seq += int32(r.IntN(4)) // a gap
		case 1:
			w.seq = start + int32(r.IntN(int(w.seq-start)+1)) // duplicates follow
		}
		c := 1 + r.IntN(conns)
		if r.IntN(30) == 0 && held[c] == nil {
			// The connection's next buffer goes before this one: numbers
			// go backwards.
			held[c] = buf
		} else {
			pendingBytes[c] = append(pendingBytes[c], buf...)
			pendingBytes[c] = append(pendingBytes[c], held[c]...)
			held[c] = nil
		}
		// Reads of the connections, cut anywhere.
		for range r.IntN(3) {
			c := 1 + r.IntN(conns)
			read(c, 1+r.IntN(70000))
		}
		switch x := r.IntN(100); {
		case x < 30:
			w.t += uint32(r.IntN(3))
		case x < 32:
			w.t += 600 + uint32(r.IntN(1000)) // a block's second goes by
		case x < 33:
			w.add(unit{kind: RecordRecv, t: w.t, raw: bytefrog.AppendDataBreak(nil, w.seq-int32(r.IntN(100)))})
		case x < 34:
			w.add(unit{kind: RecordNote, t: w.t, raw: []byte("a remark")})
		case x < 35:
			w.add(unit{kind: RecordRecv, conn: uint16(conns + 1), t: w.t, raw: []byte("not open")})
		case x < 37:
			w.add(unit{kind: RecordRecv, t: w.t, raw: hb(bytefrog.ModeTracing)})
		}
	}
	for c := 1; c <= conns; c++ {
		pendingBytes[c] = append(pendingBytes[c], held[c]...)
		for len(pendingBytes[c]) > 0 {
			read(c, 1+r.IntN(70000))
		}
	}
	// The last connection ends with a message it does not finish, the one
	// before it with one a data connection may not carry.
	if conns > 1 {
		pendingBytes[conns-1] = bytefrog.AppendDataBreak(nil, 3)
		read(conns-1, 100)
	}
	pendingBytes[conns] = bytefrog.AppendMethodEntry(nil, 1, w.seq, 1, 1)[:7]
	read(conns, 100)
	for c := 1; c <= conns; c++ {
		w.add(unit{kind: RecordClose, conn: uint16(c), t: w.t, pending: parsers[c].pending()})
		parsers[c].close()
	}
	w.add(unit{kind: RecordRecv, t: w.t, raw: hb(bytefrog.ModeShutdown)})
	w.add(unit{kind: RecordSent, t: w.t, raw: cmd(bytefrog.MsgStop)})
	w.add(unit{kind: RecordClose, t: w.t})
	w.add(unit{kind: RecordEnd, t: w.t, raw: appendEnd(nil, false, "the end")})
	return w
}

// bytesOnly reports whether connection c of conns comes as bytes only, not
// parsed: the writer parses it itself (as it does for units read back from
// a file of the older layouts).
func bytesOnly(c, conns int) bool { return c == 2 && conns > 2 }

// release drops the test's references to the traffic's slabs.
func (w *writerTraffic) release() {
	for _, s := range w.slabs {
		s.unref()
	}
	w.slabs = nil
}

// payloadDigest is the SHA-256 of the columnar trace file b's blocks as
// the format defines them, each block's payload size and its payload after
// zstd, checking first that b begins with h's header. It leaves out the
// compressed bytes, which depend on the zstd encoder's version too.
func payloadDigest(t *testing.T, h *TraceHeader, b []byte) string {
	t.Helper()
	hh := *h
	hh.Format = TraceFormatColumns
	head := hh.append(nil)
	if !bytes.HasPrefix(b, head) {
		t.Fatalf("the file does not begin with the header %x", head)
	}
	zd, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer zd.Close()
	sum := sha256.New()
	for o := len(head); o < len(b); {
		if len(b)-o < blockHeaderSize {
			t.Fatalf("block header at %d cut short", o)
		}
		rawLen := binary.BigEndian.Uint32(b[o:])
		n := int(binary.BigEndian.Uint32(b[o+i32Size:]))
		end := o + blockHeaderSize + n
		if end > len(b) {
			t.Fatalf("block at %d: %d bytes declared, %d left", o, n, len(b)-o-blockHeaderSize)
		}
		p, err := zd.DecodeAll(b[o+blockHeaderSize:end], nil)
		if err != nil || len(p) != int(rawLen) {
			t.Fatalf("block at %d: payload of %d bytes, %d declared (%v)", o, len(p), rawLen, err)
		}
		sum.Write(b[o : o+i32Size])
		sum.Write(p)
		o = end
	}
	return hex.EncodeToString(sum.Sum(nil))
}

// newWriterFile is the file the trace writer writes for units, through
// createTrace as a run writes it.
func newWriterFile(t *testing.T, h *TraceHeader, units []unit) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run"+CompressColumns.Ext())
	w, err := createTrace(path, h, CompressColumns)
	if err != nil {
		t.Fatal(err)
	}
	for i := range units {
		u := units[i]
		if u.s != nil {
			u.s.ref(1) // the writer's own reference, which it drops
		}
		w.record(&u)
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWriterSameBytes holds the trace writer to the file format: for the
// same units it writes the blocks that the format's first writer wrote
// (payloadDigest of its files, seeds 1 and 2 of each case), over varied
// traffic in each flavour and protocol version.
func TestWriterSameBytes(t *testing.T) {
	cases := []struct {
		v      uint8
		f      bytefrog.Flavor
		conns  int
		events int
		want   [2]string
	}{
		{bytefrog.Version1, bytefrog.FlavorBytefrog, 1, 20_000, [2]string{
			"c36303e32d9102690d5fe8bd7a4dc283206dee86623d86de8e89137d8b041ba1",
			"55b32dcb60a92a6bdb03253aa5d0d278457bb8a92359a361f46972781b1ac5a1"}},
		{bytefrog.Version1, bytefrog.FlavorBytefrog, 3, 100_000, [2]string{
			"8729e2e5fe45b205eb4bce1160f634013a2f63d409915307ec4be9009ccde428",
			"4e833f9edf569fa2810ce910572a62230cbfff0544d156a4548a658aec8f1369"}},
		{bytefrog.Version2, bytefrog.FlavorBytefrog, 4, 400_000, [2]string{ // blocks cut by their event count
			"10aa8859d8c94157888b245900888c37e21aa039bb389f307b37b20cd2651491",
			"919342c119d27951cc31730aa40e5d51a3a2a58954732c20bba3cc9c12af3aae"}},
		{bytefrog.Version3, bytefrog.FlavorBytefrog, 2, 50_000, [2]string{
			"dd6b22fd50c73c86871a4f83c3b244e1dd5dc4ff71f3224069b2205814d4017e",
			"906b3122b33549629cca81d88aa9fa8a7a91f5902c470f7e44ff848c7848b4ae"}},
		{bytefrog.Version3, bytefrog.FlavorCodePulse, 2, 50_000, [2]string{
			"46a1e7741267249fc2487a98d9bc99524bc21128f574b3e89c5b9bd7ddaa1f6f",
			"77be92dbbdd2b57b8270c2ecd426e93cbedff406640eeded81ac89325ae7233e"}},
		{bytefrog.Version2, bytefrog.FlavorCodePulse, 1, 20_000, [2]string{
			"6ff75ef4210bf83d197874fcaadd2258f62e31526144f6b0c4c3783c961bac4a",
			"c887c80c9f9ea1e8aa8f381b1e7edb39bd1b358630a1702159393cd7f7e77f2a"}},
	}
	if testing.Short() {
		cases = cases[:2]
	}
	for i, tc := range cases {
		for seed := uint64(1); seed <= 2; seed++ {
			t.Run(fmt.Sprintf("v%d/%v/conns=%d/seed=%d", tc.v, tc.f, tc.conns, seed), func(t *testing.T) {
				h := header(tc.v, tc.f)
				tr := newWriterTraffic(seed*100+uint64(i), bytefrog.Dialect{Version: tc.v, Flavor: tc.f}, tc.conns,
					tc.events)
				defer tr.release()
				wantErrs := 0
				if tc.conns > 1 && !bytesOnly(tc.conns-1, tc.conns) {
					wantErrs = 1 // the DataBreak
				}
				if len(tr.perr) != wantErrs {
					t.Fatalf("the traffic has parse errors %v; want %d", tr.perr, wantErrs)
				}
				got := newWriterFile(t, &h, tr.units)
				if d := payloadDigest(t, &h, got); d != tc.want[seed-1] {
					t.Fatalf("the file's blocks (%d bytes) are not the format's: digest %s, want %s", len(got), d,
						tc.want[seed-1])
				}
				// The file replays.
				if _, err := ReplayFile(writeTemp(t, got), nil); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func writeTemp(t *testing.T, b []byte) string {
	path := filepath.Join(t.TempDir(), "f"+CompressColumns.Ext())
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPackNibbles checks the word-wise packing of a block's order against
// packing byte by byte, for every length up to a few words and every
// position of each nibble value.
func TestPackNibbles(t *testing.T) {
	for n := range 40 {
		for v := range 16 {
			o := make([]byte, n)
			for i := range o {
				o[i] = byte((i*7 + v) % 16)
			}
			want := make([]byte, (n+1)/2)
			for i := range want {
				want[i] = o[2*i]
				if 2*i+1 < n {
					want[i] |= o[2*i+1] << 4
				}
			}
			got := o[:packNibbles(o)]
			if !bytes.Equal(got, want) {
				t.Fatalf("n=%d v=%d: got % x; want % x", n, v, got, want)
			}
		}
	}
}
