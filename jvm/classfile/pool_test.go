package classfile

import (
	"errors"
	"math"
	"testing"
)

func TestPoolAddLookupAndRoundTrip(t *testing.T) {
	orig, err := Parse(minimalClass())
	if err != nil {
		t.Fatal(err)
	}
	p := orig.Pool
	if i, err := p.AddClass("java/lang/Object"); err != nil || i != 4 {
		t.Errorf("AddClass(existing) = %d, %v; want 4", i, err)
	}
	if i, err := p.AddUTF8("A"); err != nil || i != 1 {
		t.Errorf("AddUTF8(existing) = %d, %v; want 1", i, err)
	}
	type added struct {
		i   uint16
		tag Tag
	}
	var got []added
	add := func(i uint16, err error) uint16 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, added{i, p.Tag(i)})
		return i
	}
	long := add(p.AddLong(-5))
	if add(p.AddInteger(7)) != long+2 {
		t.Errorf("Long did not take two slots")
	}
	dbl := add(p.AddDouble(math.Pi))
	flt := add(p.AddFloat(1.5))
	mref := add(p.AddMethodref("io/tadpole/Probe", "enter", "(I)V"))
	iref := add(p.AddInterfaceMethodref("java/util/List", "size", "()I"))
	fref := add(p.AddFieldref("A", "f", "J"))
	mh := add(p.AddMethodHandle(RefInvokeStatic, mref))
	mt := add(p.AddMethodType("()V"))
	dyn := add(p.AddDynamic(0, "c", "I"))
	indy := add(p.AddInvokeDynamic(1, "run", "()Ljava/lang/Runnable;"))
	mod := add(p.AddModule("java.base"))
	pkg := add(p.AddPackage("java/lang"))
	str := add(p.AddString("hello"))
	// Adding again finds every entry.
	again := []func() (uint16, error){
		func() (uint16, error) { return p.AddLong(-5) },
		func() (uint16, error) { return p.AddDouble(math.Pi) },
		func() (uint16, error) { return p.AddMethodref("io/tadpole/Probe", "enter", "(I)V") },
		func() (uint16, error) { return p.AddMethodHandle(RefInvokeStatic, mref) },
		func() (uint16, error) { return p.AddInvokeDynamic(1, "run", "()Ljava/lang/Runnable;") },
		func() (uint16, error) { return p.AddString("hello") },
	}
	want := []uint16{long, dbl, mref, mh, indy, str}
	for k, f := range again {
		if i, err := f(); err != nil || i != want[k] {
			t.Errorf("re-add %d = %d, %v; want %d", k, i, err, want[k])
		}
	}
	b, err := orig.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	q := c.Pool
	if q.Count() != p.Count() {
		t.Fatalf("count %d; want %d", q.Count(), p.Count())
	}
	for _, a := range got {
		if q.Tag(a.i) != a.tag {
			t.Errorf("#%d is %v; want %v", a.i, q.Tag(a.i), a.tag)
		}
	}
	if v := q.Long(long); v != -5 {
		t.Errorf("Long = %d", v)
	}
	if v := q.Double(dbl); v != math.Pi {
		t.Errorf("Double = %v", v)
	}
	if v := q.Float(flt); v != 1.5 {
		t.Errorf("Float = %v", v)
	}
	if v := q.Integer(long + 2); v != 7 {
		t.Errorf("Integer = %v", v)
	}
	if cl, n, d := q.MemberRef(mref); cl != "io/tadpole/Probe" || n != "enter" || d != "(I)V" {
		t.Errorf("MemberRef = %s.%s%s", cl, n, d)
	}
	if cl, n, d := q.MemberRef(iref); cl != "java/util/List" || n != "size" || d != "()I" {
		t.Errorf("MemberRef = %s.%s%s", cl, n, d)
	}
	if cl, n, d := q.MemberRef(fref); cl != "A" || n != "f" || d != "J" {
		t.Errorf("MemberRef = %s.%s%s", cl, n, d)
	}
	if e := q.Get(mh); e.Kind != RefInvokeStatic || e.A != mref {
		t.Errorf("MethodHandle = %+v", e)
	}
	if n, d := q.NameAndType(q.Get(dyn).B); n != "c" || d != "I" {
		t.Errorf("Dynamic NameAndType = %s %s", n, d)
	}
	if s := q.Utf8(q.Get(mt).A); s != "()V" {
		t.Errorf("MethodType = %s", s)
	}
	if s := q.Utf8(q.Get(mod).A); s != "java.base" {
		t.Errorf("Module = %s", s)
	}
	if s := q.Utf8(q.Get(pkg).A); s != "java/lang" {
		t.Errorf("Package = %s", s)
	}
	// Writing the reparsed class copies the pool as bytes: same output.
	b2, err := c.Bytes()
	if err != nil || string(b2) != string(b) {
		t.Errorf("second write differs (%v)", err)
	}
}

func TestPoolManyLookups(t *testing.T) {
	p := NewPool()
	idx := make(map[string]uint16)
	for round := 0; round < 2; round++ {
		for i := 0; i < 200; i++ {
			s := string(rune('a'+i%26)) + string(rune('a'+i/26))
			j, err := p.AddClass(s)
			if err != nil {
				t.Fatal(err)
			}
			if round == 0 {
				idx[s] = j
			} else if idx[s] != j {
				t.Fatalf("AddClass(%q) = %d after map built; want %d", s, j, idx[s])
			}
		}
	}
	if p.Count() != 401 {
		t.Errorf("count %d; want 401", p.Count())
	}
}

func TestPoolFull(t *testing.T) {
	p := NewPool()
	var err error
	for i := 0; err == nil; i++ {
		_, err = p.AddInteger(int32(i))
	}
	if !errors.Is(err, ErrPoolFull) {
		t.Fatalf("err %v; want ErrPoolFull", err)
	}
	if p.Count() != maxPoolCount {
		t.Errorf("count %d; want %d", p.Count(), maxPoolCount)
	}
	if _, err := p.AddLong(1); !errors.Is(err, ErrPoolFull) {
		t.Errorf("AddLong on a full pool: %v", err)
	}
	if _, err := p.Add(Constant{Tag: TagNone}); !errors.Is(err, ErrBadConstant) {
		t.Errorf("Add(TagNone): %v", err)
	}
}

func TestPoolBadMethodHandle(t *testing.T) {
	// Replace #4 (Class #3, offset 36) by MethodHandle kind 10 -> #3, then
	// by kind 1 (getField) -> #2, which is not a Fieldref.
	for _, v := range [][]byte{{byte(TagMethodHandle), 10, 0, 3}, {byte(TagMethodHandle), 1, 0, 2}} {
		b := minimalClass()
		b = append(append(b[:36:36], v...), minimalClass()[39:]...)
		b[44] = 2 // super_class #2, so the class itself stays valid
		_, err := Parse(b)
		var fe *FormatError
		if !errors.As(err, &fe) || !errors.Is(err, ErrBadConstant) || fe.Offset != 36 {
			t.Errorf("% x: %v; want ErrBadConstant at 36", v, err)
		}
	}
}

func TestTagStrings(t *testing.T) {
	for tag, want := range map[Tag]string{TagUtf8: "Utf8", TagInvokeDynamic: "InvokeDynamic", 2: "UNKNOWN_TAG_2", 200: "UNKNOWN_TAG_200"} {
		if got := tag.String(); got != want {
			t.Errorf("Tag(%d) = %s; want %s", tag, got, want)
		}
	}
	if got := RefKind(11).String(); got != "UNKNOWN_REF_KIND_11" {
		t.Errorf("RefKind(11) = %s", got)
	}
	if got := FrameFull.String(); got != "full_frame" {
		t.Errorf("FrameFull = %s", got)
	}
	if got := VUninitialized.String(); got != "Uninitialized" {
		t.Errorf("VUninitialized = %s", got)
	}
}
