package hce

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// loopReader serves the same bytes forever.
type loopReader struct {
	b   []byte
	off int
}

func (r *loopReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.b[r.off:])
		n += c
		r.off = (r.off + c) % len(r.b)
	}
	return n, nil
}

func benchEnv(md5 bool) []byte {
	return AppendBlocksEnvelope(nil, md5, &Block{Dest: 2, Src: 3, Iface: IfaceTadpole, Cmd: TPMark,
		Data: AppendString(AppendString(nil, "bench.key"), "a value of some bytes")})
}

func BenchmarkCodecRead(b *testing.B) {
	for _, md5 := range []bool{false, true} {
		b.Run(fmt.Sprintf("md5=%v", md5), func(b *testing.B) {
			env := benchEnv(md5)
			c, _ := NewCodec(&loopReader{b: env}, nil, nil)
			var blocks []Block
			b.SetBytes(int64(len(env)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				e, err := c.Read()
				if err != nil {
					b.Fatal(err)
				}
				if blocks, err = ParsePayload(blocks, e.Payload); err != nil || len(blocks) != 1 {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCodecWrite(b *testing.B) {
	for _, md5 := range []bool{false, true} {
		b.Run(fmt.Sprintf("md5=%v", md5), func(b *testing.B) {
			c, _ := NewCodec(nil, io.Discard, &Config{MD5: md5})
			bl := &Block{Dest: 2, Src: 3, Iface: IfaceTadpole, Cmd: TPMark, Data: []byte("0123456789abcdef0123456789abcdef")}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := c.WriteBlocks(bl); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCodecAllocs: reading and writing envelopes costs no allocation once
// the buffers have grown.
func TestCodecAllocs(t *testing.T) {
	env := benchEnv(true)
	c, _ := NewCodec(&loopReader{b: env}, io.Discard, &Config{MD5: true})
	var blocks []Block
	bl := &Block{Dest: 2, Src: 3, Iface: IfaceTadpole, Cmd: TPMark, Data: bytes.Repeat([]byte{1}, 40)}
	run := func() {
		e, err := c.Read()
		if err != nil {
			t.Fatal(err)
		}
		if blocks, err = ParsePayload(blocks, e.Payload); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteBlocks(bl); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if n := testing.AllocsPerRun(1000, run); n != 0 {
		t.Fatalf("%v allocations per envelope read and written", n)
	}
}
