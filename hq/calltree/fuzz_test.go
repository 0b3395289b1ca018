package calltree_test

import (
	"bytes"
	"testing"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/calltree"
)

// FuzzTree feeds any sequence of events, breaks and small bounds to a
// tree: it must not panic, its sums must hold, and its exports must stay
// well-nested.
func FuzzTree(f *testing.F) {
	f.Add([]byte{0, 0x10, 0x20, 0x11, 0x21, 0x31, 0x41, 0x12, 0x51})
	f.Add([]byte{3, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x02, 0x02, 0x03, 0x04, 0x05})
	f.Add(bytes.Repeat([]byte{0x10, 0x00, 0x81, 0x21, 0x33}, 20))
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) == 0 {
			return
		}
		cfg := &calltree.Config{}
		if ops[0]&1 != 0 {
			cfg.MaxPaths = 4
		}
		if ops[0]&2 != 0 {
			cfg.MaxDepth = 3
		}
		if ops[0]&4 != 0 {
			cfg.MaxTimeline = 6
		}
		if ops[0]&8 != 0 {
			cfg.MaxTimeline = -1
		}
		tr := newTree(t, cfg)
		fd := &feeder{t: tr}
		fd.name(1, "a/A.one;1;()V")
		at := int32(0)
		for i, op := range ops[1:] {
			tid := uint16(op>>6) & 3
			method := int32(op>>3)&7 | int32(i&1)<<3 // 16 methods: more callees than a list holds
			at += int32(op>>5) - 2                   // sometimes backwards
			switch op & 7 {
			case 0, 1, 2:
				fd.entry(tid, method, at)
			case 3, 4:
				fd.exit(tid, method, at)
			case 5:
				fd.bubble(tid, method, int32(op>>4), at)
			case 6:
				fd.throw(tid, method, int32(op>>4), at)
			case 7:
				tr.DataBreak(fd.sq)
			}
		}
		// A run still going (calls open) exports as well as a finished one;
		// its sums hold once Finish has closed every call.
		checkExports(t, tr)
		tr.Finish(&hq.Report{})
		checkTree(t, tr)
		checkExports(t, tr)
	})
}

func checkExports(t *testing.T, tr *calltree.Tree) {
	t.Helper()
	{
		var buf bytes.Buffer
		if err := tr.WriteSpeedscope(&buf, nil); err != nil {
			t.Fatal(err)
		}
		checkSpeedscope(t, buf.Bytes())
		buf.Reset()
		if err := tr.WriteChrome(&buf, nil); err != nil {
			t.Fatal(err)
		}
		checkChrome(t, buf.Bytes(), tr)
		buf.Reset()
		if err := tr.WriteFlameSVG(&buf, nil); err != nil {
			t.Fatal(err)
		}
	}
}
