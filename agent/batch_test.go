package agent

import (
	"errors"
	"testing"
)

func TestScanBatchRejects(t *testing.T) {
	good := AppendBatchRecord(nil, BatchMarker, 0, 0, 0, 0, 1, "key", "value")
	tests := map[string][]byte{
		"short header":  good[:BatchHeaderSize-1],
		"overrun":       good[:BatchHeaderSize+2],
		"unknown kind":  AppendBatchRecord(nil, 9, 0, 0, 1, 0, 1, "", ""),
		"zero kind":     AppendBatchRecord(nil, 0, 0, 0, 1, 0, 1, "", ""),
		"trailing junk": append(append([]byte{}, good...), 1, 2, 3),
	}
	for name, b := range tests {
		if _, err := scanBatch(b); !errors.Is(err, ErrBadBatch) {
			t.Errorf("%s: scanBatch = %v; want ErrBadBatch", name, err)
		}
	}
	if n, err := scanBatch(good); n != 1 || err != nil {
		t.Errorf("scanBatch(good) = %d, %v", n, err)
	}
}
