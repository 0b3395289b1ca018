package hq

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// TestDecodeEventMatchesParse checks the core's direct decode of events
// and markers against the codec, field by field, for both flavours.
func TestDecodeEventMatchesParse(t *testing.T) {
	for _, f := range []bytefrog.Flavor{bytefrog.FlavorBytefrog, bytefrog.FlavorCodePulse} {
		d := bytefrog.Dialect{Version: bytefrog.Version3, Flavor: f}
		exit := bytefrog.AppendMethodExit(nil, -7, 1<<31-1, 785932, 34, 13)
		if f == bytefrog.FlavorCodePulse {
			exit = bytefrog.AppendMethodExitCodePulse(nil, -7, 1<<31-1, 785932, true, 13)
		}
		for _, raw := range [][]byte{
			bytefrog.AppendMethodEntry(nil, 376433, 372, 785932, 65535),
			exit,
			bytefrog.AppendException(nil, 1, -2, 3, 4, 5, 6),
			bytefrog.AppendExceptionBubble(nil, 11, 12, 13, -14, 15),
			bytefrog.AppendMethodVisit(nil, 21, 22, 23, 24, 25),
			bytefrog.AppendMarker(nil, 1, 2, "k", "v"),
			bytefrog.AppendMarker(nil, -1, 1<<31-1, "", "välue \x00 😀"),
			bytefrog.AppendMarker(nil, 3, 4, strings.Repeat("k", bytefrog.MaxStringLen), ""),
		} {
			// A trailing byte must not be taken into the message.
			raw = append(raw, 0xEE)
			var want, got bytefrog.Msg
			if _, err := d.Parse(&want, raw); err != nil {
				t.Fatalf("%v: Parse: %v", bytefrog.MsgType(raw[0]), err)
			}
			if !decodeEvent(d, &got, raw) {
				t.Fatalf("%v: decodeEvent refused it", want.Type)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%v %v: decodeEvent got %+v; want %+v", f, want.Type, got, want)
			}
		}
		var m bytefrog.Msg
		if decodeEvent(d, &m, bytefrog.AppendMapThreadName(nil, 1, 2, "main")) {
			t.Errorf("decodeEvent took a MapThreadName; want false")
		}
	}
}
