package hce

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

func addVectors(f *testing.F) {
	for _, b := range readVectors(f) {
		f.Add(b)
	}
}

// FuzzCodecRead: any stream reads without panic; every envelope accepted
// re-encodes to an envelope that reads back the same.
func FuzzCodecRead(f *testing.F) {
	addVectors(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, _ := NewCodec(bytes.NewReader(data), nil, &Config{MaxPayload: 1 << 16})
		for i := 0; i < len(data)+1; i++ {
			e, err := c.Read()
			if Recoverable(err) {
				continue
			}
			if err != nil {
				if err != io.EOF && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			again := AppendEnvelope(nil, e.Flags.Type(), e.Flags&FlagMD5 != 0, e.Payload)
			c2, _ := NewCodec(bytes.NewReader(again), nil, nil)
			e2, err := c2.Read()
			if err != nil || e2.Flags != e.Flags || !bytes.Equal(e2.Payload, e.Payload) {
				t.Fatalf("re-read %v %v %x; want %v %x", err, e2.Flags, e2.Payload, e.Flags, e.Payload)
			}
		}
		t.Fatalf("reader made no progress")
	})
}

// FuzzParsePayload: decode, encode, decode gives the same blocks and the
// same bytes.
func FuzzParsePayload(f *testing.F) {
	for _, b := range readVectors(f) {
		if len(b) > EnvelopeHeader {
			f.Add(b[EnvelopeHeader:])
		}
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		bs, err := ParsePayload(nil, p)
		if err != nil {
			if len(bs) != 0 {
				t.Fatalf("error %v with %d blocks", err, len(bs))
			}
			return
		}
		ptrs := make([]*Block, len(bs))
		for i := range bs {
			ptrs[i] = &bs[i]
		}
		enc := AppendPayload(nil, ptrs...)
		if !bytes.Equal(enc, p) {
			t.Fatalf("re-encoded %x; want %x", enc, p)
		}
		bs2, err := ParsePayload(nil, enc)
		if err != nil || !reflect.DeepEqual(bs, bs2) {
			t.Fatalf("decode again: %v", err)
		}
	})
}

// FuzzCommandData: every data decoder survives any bytes, and what it
// accepts encodes back to the same bytes.
func FuzzCommandData(f *testing.F) {
	for _, b := range readVectors(f) {
		bs, err := ParsePayload(nil, b[min(len(b), EnvelopeHeader):])
		if err == nil {
			for _, bl := range bs {
				f.Add(bl.Data)
			}
		}
	}
	f.Add(AppendStatus(nil, &Status{Name: "n", PID: 1, Mode: "TRACING", Events: 2, HQ: "h", Loggers: 3, EnabledLoggers: 1}))
	f.Add(AppendStrings(nil, []string{"a", "bc"}))
	f.Fuzz(func(t *testing.T, d []byte) {
		if r, err := ParseRegistration(d); err == nil {
			got := AppendRegistration(nil, &r)
			if r.Ifaces == nil && len(r.Ifaces) == 0 && len(got) == len(d)+4 {
				got = got[:len(got)-4] // the seed's layout, without the extension
			}
			if !bytes.Equal(got, d) {
				t.Fatalf("registration %+v: %x; want %x", r, got, d)
			}
		}
		if ls, err := ParseLoggers(d); err == nil {
			// Enabled is 0 or 1 on the wire; other values read as 1.
			if got := AppendLoggers(nil, ls); len(got) != len(d) {
				t.Fatalf("loggers: %x; want %x", got, d)
			}
		}
		if s, err := ParseStatus(d); err == nil {
			if got := AppendStatus(nil, &s); !bytes.Equal(got, d) {
				t.Fatalf("status: %x; want %x", got, d)
			}
		}
		if ss, err := ParseStrings(d); err == nil {
			if got := AppendStrings(nil, ss); !bytes.Equal(got, d) {
				t.Fatalf("strings: %x; want %x", got, d)
			}
		}
		if ids, err := ParseIDs[uint32](d); err == nil {
			if got := AppendIDs(nil, ids); !bytes.Equal(got, d) {
				t.Fatalf("ids: %x; want %x", got, d)
			}
		}
		if n, err := ParsePipeConnect(d); err == nil {
			if got := AppendPipeConnect(nil, n); !bytes.Equal(got, d) {
				t.Fatalf("pipe name: %x; want %x", got, d)
			}
		}
		if r, i, c, err := ParseRejected(d); err == nil {
			if got := AppendRejected(nil, r, i, c); !bytes.Equal(got, d) {
				t.Fatalf("rejected: %x; want %x", got, d)
			}
		}
	})
}
