package host

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/transport/j4p"
)

// TestAppendBatchRecord checks the record layout field by field: the bytes
// capi's C encoder writes (capi/layout.go proves the offsets agree).
func TestAppendBatchRecord(t *testing.T) {
	tests := []struct {
		name   string
		kind   uint8
		flags  uint8
		line   uint16
		m, e   int32
		mono   int64
		s1, s2 string
		size   int
	}{
		{"entry", BatchEntry, 0, 0xFFFF, 7, 0, 123456789, "", "", BatchHeaderSize},
		{"throw", BatchThrow, BatchFlagThrown, 42, 7, 3, 1, "", "", BatchHeaderSize},
		{"name", BatchName, 0, 0, 0, 0, 2, "main", "", BatchHeaderSize + 8},
		{"marker", BatchMarker, BatchFlagMUTF8, 0, 0, 0, 3, "key", "value!", BatchHeaderSize + 16},
		{"aligned", BatchMarker, 0, 0, 0, 0, 4, "12345678", "", BatchHeaderSize + 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prefix := []byte{0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE}
			b := AppendBatchRecord(append([]byte(nil), prefix...), tc.kind, tc.flags, tc.line, tc.m, tc.e, tc.mono, tc.s1, tc.s2)
			if !bytes.Equal(b[:len(prefix)], prefix) {
				t.Fatalf("prefix overwritten: % x", b[:len(prefix)])
			}
			r := b[len(prefix):]
			if len(r) != tc.size || len(r)%BatchAlign != 0 {
				t.Fatalf("got %d bytes; want %d, a multiple of %d", len(r), tc.size, BatchAlign)
			}
			if got := RecordSize(r); got != tc.size {
				t.Errorf("RecordSize: got %d; want %d", got, tc.size)
			}
			le := binary.LittleEndian
			if r[0] != tc.kind || r[1] != tc.flags || le.Uint16(r[2:]) != tc.line ||
				int32(le.Uint32(r[4:])) != tc.m || int32(le.Uint32(r[8:])) != tc.e ||
				int(le.Uint16(r[12:])) != len(tc.s1) || int(le.Uint16(r[14:])) != len(tc.s2) ||
				int64(le.Uint64(r[16:])) != tc.mono {
				t.Fatalf("header: got % x", r[:BatchHeaderSize])
			}
			p := r[BatchHeaderSize:]
			if got := string(p[:len(tc.s1)+len(tc.s2)]); got != tc.s1+tc.s2 {
				t.Errorf("strings: got %q; want %q", got, tc.s1+tc.s2)
			}
			for i, c := range p[len(tc.s1)+len(tc.s2):] {
				if c != 0 {
					t.Errorf("padding byte %d: got %#x; want 0", i, c)
				}
			}
		})
	}
}

// TestMonoNow: the clock of batch records is monotonic and in nanoseconds.
func TestMonoNow(t *testing.T) {
	a := MonoNow()
	time.Sleep(2 * time.Millisecond)
	b := MonoNow()
	if d := b - a; d < int64(2*time.Millisecond) || d > int64(10*time.Second) {
		t.Fatalf("MonoNow advanced %d ns over a 2 ms sleep", d)
	}
}

// TestRegisterIncomplete: an agent that leaves a call out is refused at
// registration, not at a host's first event.
func TestRegisterIncomplete(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Register accepted an agent without calls")
		}
	}()
	Register(Agent{SubmitBatch: func(uint64, []byte) (int, error) { return 0, nil }})
}

// TestSetters: what a host plugs in is what the agent gets back, and nil
// removes it.
func TestSetters(t *testing.T) {
	if PlatformMBeans() != nil || LTTngLoaderOf() != nil {
		t.Fatal("set before any host set them")
	}
	reg := j4p.NewRegistry()
	SetPlatformMBeans(reg)
	if got := PlatformMBeans(); got != j4p.MBeanServer(reg) {
		t.Errorf("PlatformMBeans: got %v; want the registry set", got)
	}
	SetPlatformMBeans(nil)
	if PlatformMBeans() != nil {
		t.Error("PlatformMBeans: set after SetPlatformMBeans(nil)")
	}
	var seen LTTngConfig
	SetLTTngLoader(func(c LTTngConfig) (LTTngRecorder, error) { seen = c; return nil, nil })
	want := LTTngConfig{Lib: "/x/libtadpole-lttng.so", Domain: "log4j", Source: true}
	if f := LTTngLoaderOf(); f == nil {
		t.Fatal("LTTngLoaderOf: nil after SetLTTngLoader")
	} else if r, err := f(want); r != nil || err != nil || seen != want {
		t.Errorf("loader: got %v, %v, saw %+v; want nil, nil, %+v", r, err, seen, want)
	}
	SetLTTngLoader(nil)
	if LTTngLoaderOf() != nil {
		t.Error("LTTngLoaderOf: set after SetLTTngLoader(nil)")
	}
}
