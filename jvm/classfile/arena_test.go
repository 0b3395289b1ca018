package classfile

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/jdkcorpus"
)

// arenaRoundTrip decodes every Code of b with arena and without, checks
// both agree, stores them back through the arena and checks the class
// bytes are unchanged.
func arenaRoundTrip(t *testing.T, arena *CodeArena, b []byte) {
	t.Helper()
	c, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Methods {
		m := &c.Methods[i]
		want, err := m.Code(c.Pool)
		if err != nil {
			t.Fatal(err)
		}
		got, err := arena.Code(c.Pool, m)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s%s: arena decode differs\n got %+v\nwant %+v", c.MemberName(m), c.MemberDesc(m), got, want)
		}
		if got != nil {
			if err := arena.SetCode(c.Pool, m, got); err != nil {
				t.Fatal(err)
			}
		}
	}
	out, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, b) {
		t.Fatalf("%s: class with arena-encoded Code differs", c.Name())
	}
}

func TestCodeArena(t *testing.T) {
	var arena CodeArena
	for round := 0; round < 2; round++ { // the second round reuses the slabs
		for _, b := range testdataClasses(t) {
			arenaRoundTrip(t, &arena, b)
			arena.Reset()
		}
	}
	jdkcorpus.Require(t)
	sample, err := jdkcorpus.Sample(300)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range sample {
		arenaRoundTrip(t, &arena, b)
		arena.Reset()
	}
	// Without Reset the arena keeps growing and earlier Codes stay intact.
	c, err := Parse(sample[0])
	if err != nil {
		t.Fatal(err)
	}
	var codes []*Code
	for i := range c.Methods {
		code, err := arena.Code(c.Pool, &c.Methods[i])
		if err != nil {
			t.Fatal(err)
		}
		codes = append(codes, code)
	}
	for _, b := range sample[1:50] {
		arenaRoundTrip(t, &arena, b)
	}
	for i := range c.Methods {
		want, _ := c.Methods[i].Code(c.Pool)
		if !reflect.DeepEqual(codes[i], want) {
			t.Fatalf("method %d: Code changed while the arena grew", i)
		}
	}
}

func TestCodeArenaAllocs(t *testing.T) {
	b := testdataClasses(t)["Sample8.class"]
	c, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	// SetCode replaces the Code attributes in place: restore the original
	// ones before each run, since the arena's bytes are recycled by Reset.
	saved := make([][]Attribute, len(c.Methods))
	for i := range c.Methods {
		saved[i] = append([]Attribute(nil), c.Methods[i].Attrs...)
	}
	var arena CodeArena
	run := func() {
		for i := range c.Methods {
			copy(c.Methods[i].Attrs, saved[i])
		}
		for i := range c.Methods {
			code, err := arena.Code(c.Pool, &c.Methods[i])
			if err != nil {
				t.Fatal(err)
			}
			if code != nil {
				if err := arena.SetCode(c.Pool, &c.Methods[i], code); err != nil {
					t.Fatal(err)
				}
			}
		}
		arena.Reset()
	}
	run()
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Errorf("%v allocations per class with a warm arena; want 0", n)
	}
}

// Writing into a reused buffer and finding constants that exist allocate
// nothing.
func TestZeroAllocPaths(t *testing.T) {
	b := testdataClasses(t)["Sample8.class"]
	c, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, len(b))
	if n := testing.AllocsPerRun(50, func() {
		if buf, err = c.AppendTo(buf[:0]); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("AppendTo: %v allocations; want 0", n)
	}
	if !bytes.Equal(buf, b) {
		t.Error("AppendTo output differs")
	}
	p := c.Pool
	if _, err := p.AddMethodref("java/util/ArrayList", "<init>", "(I)V"); err != nil {
		t.Fatal(err)
	}
	count := p.Count()
	// Both the scanning phase and, after maxFullScans lookups, the map.
	if n := testing.AllocsPerRun(5, func() { // 6 runs x 7 scans, under maxFullScans
		if _, err := p.AddMethodref("java/util/ArrayList", "<init>", "(I)V"); err != nil {
			t.Fatal(err)
		}
		if _, err := p.AddUTF8("Code"); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("finding existing constants by scanning: %v allocations; want 0", n)
	}
	if p.index != nil {
		t.Fatal("index built during the scanning phase")
	}
	for i := 0; i <= maxFullScans; i++ {
		p.AddUTF8("Code")
	}
	if p.index == nil {
		t.Fatal("no index built")
	}
	if n := testing.AllocsPerRun(50, func() {
		if _, err := p.AddMethodref("java/util/ArrayList", "<init>", "(I)V"); err != nil {
			t.Fatal(err)
		}
		if _, err := p.AddUTF8("Code"); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("finding existing constants: %v allocations; want 0", n)
	}
	if p.Count() != count {
		t.Errorf("pool grew from %d to %d re-adding existing constants", count, p.Count())
	}
}
