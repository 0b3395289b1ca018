package classfile

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/jdkcorpus"
)

// TestMutatedJDKClasses applies deterministic random damage (byte flips,
// counts and lengths set to extremes, truncation) to a sample of JDK
// classes and checks FuzzParse's property on each result: the fuzzer
// seldom gets past the constant pool, these reach Code, stack maps and
// attributes of real classes.
func TestMutatedJDKClasses(t *testing.T) {
	jdkcorpus.Require(t)
	sample, err := jdkcorpus.Sample(400)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(12))
	parsed, failed := 0, 0
	for _, orig := range sample {
		for k := 0; k < 25; k++ {
			b := bytes.Clone(orig)
			switch k % 5 {
			case 0: // flip one byte
				b[rng.Intn(len(b))] ^= byte(1 + rng.Intn(255))
			case 1: // a u2 to 0xFFFF
				i := rng.Intn(len(b) - 1)
				b[i], b[i+1] = 0xFF, 0xFF
			case 2: // a u2 to 0
				i := rng.Intn(len(b) - 1)
				b[i], b[i+1] = 0, 0
			case 3: // truncate
				b = b[:rng.Intn(len(b))]
			case 4: // damage the tail, where methods and attributes are
				i := len(b)/2 + rng.Intn(len(b)/2)
				b[i] = byte(rng.Intn(256))
			}
			if _, err := Parse(b); err == nil {
				parsed++
			} else {
				failed++
			}
			checkClass(t, b)
			if t.Failed() {
				t.Fatalf("mutation %d of a %d-byte class", k, len(orig))
			}
		}
	}
	t.Logf("%d mutated classes parsed, %d rejected with a FormatError", parsed, failed)
}
