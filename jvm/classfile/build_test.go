package classfile

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// buildClass makes a class from scratch with one static method
// "m(I)I" whose Code has an exception table and every decoded table kind.
func buildClass(t testing.TB) (*Class, *Code) {
	t.Helper()
	p := NewPool()
	must := func(i uint16, err error) uint16 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	c := &Class{Major: 52, Pool: p, Access: AccPublic | AccSuper}
	c.This = must(p.AddClass("B"))
	c.Super = must(p.AddClass("java/lang/Object"))
	thr := must(p.AddClass("java/lang/Throwable"))
	code := &Code{
		MaxStack: 2, MaxLocals: 1,
		// 0 iload_0; 1 ifeq +5 (->6); 4 iconst_1; 5 ireturn; 6 iconst_0; 7 ireturn; 8 athrow
		Code:       []byte{0x1a, 0x99, 0x00, 0x05, 0x04, 0xac, 0x03, 0xac, 0xbf},
		Exceptions: []ExceptionEntry{{StartPC: 0, EndPC: 8, HandlerPC: 8, CatchType: thr}},
		Attrs: []CodeAttr{
			{Name: must(p.AddUTF8(AttrLineNumberTable)), Kind: CodeAttrLineNumbers,
				Lines: []LineNumber{{0, 10}, {4, 11}, {6, 12}}},
			{Name: must(p.AddUTF8(AttrLocalVariableTable)), Kind: CodeAttrLocalVars,
				Locals: []LocalVar{{StartPC: 0, Length: 9, Name: must(p.AddUTF8("x")), Desc: must(p.AddUTF8("I")), Index: 0}}},
			{Name: must(p.AddUTF8(AttrStackMapTable)), Kind: CodeAttrStackMap, Frames: []Frame{
				{Kind: FrameSame, Offset: 6},
				{Kind: FrameSameLocals1, Offset: 8, Stack: []VType{{Tag: VObject, Index: thr}}},
			}},
			{Name: must(p.AddUTF8("Custom")), Kind: CodeAttrRaw, Data: []byte{1, 2, 3}},
		},
	}
	c.Methods = []Member{{Access: AccStatic, Name: must(p.AddUTF8("m")), Desc: must(p.AddUTF8("(I)I"))}}
	if err := c.Methods[0].SetCode(p, code); err != nil {
		t.Fatal(err)
	}
	return c, code
}

func TestBuildAndParse(t *testing.T) {
	c, code := buildClass(t)
	b, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	c2, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := c2.Name(); got != "B" {
		t.Errorf("name %q; want B", got)
	}
	got, err := c2.Methods[0].Code(c2.Pool)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got.Attrs {
		got.Attrs[i].Offset = -1
		code.Attrs[i].Offset = -1
	}
	if !reflect.DeepEqual(got, code) {
		t.Errorf("decoded Code\n got %+v\nwant %+v", got, code)
	}
	if line, ok := got.LineAt(5); !ok || line != 11 {
		t.Errorf("LineAt(5) = %d, %v; want 11, true", line, ok)
	}
	if _, _, err := roundTrip(b); err != nil {
		t.Error(err)
	}
}

func TestCodeTooLarge(t *testing.T) {
	_, code := buildClass(t)
	code.Code = make([]byte, 65536)
	if _, err := code.Encode(); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Encode of 65536 bytes of code: %v; want ErrTooLarge", err)
	}
}

func TestFrameEncoding(t *testing.T) {
	obj := VType{Tag: VObject, Index: 7}
	tests := []struct {
		name   string
		frames []Frame
		want   []byte
	}{
		{"same", []Frame{{Kind: FrameSame, Offset: 5}}, []byte{0, 1, 5}},
		{"same widened", []Frame{{Kind: FrameSame, Offset: 64}}, []byte{0, 1, 251, 0, 64}},
		{"same chain", []Frame{{Kind: FrameSame, Offset: 3}, {Kind: FrameSame, Offset: 10}}, []byte{0, 2, 3, 6}},
		{"locals1", []Frame{{Kind: FrameSameLocals1, Offset: 2, Stack: []VType{obj}}}, []byte{0, 1, 66, 7, 0, 7}},
		{"locals1 widened", []Frame{{Kind: FrameSameLocals1, Offset: 300, Stack: []VType{{Tag: VInteger}}}},
			[]byte{0, 1, 247, 1, 44, 1}},
		{"locals1 extended kept", []Frame{{Kind: FrameSameLocals1Ext, Offset: 1, Stack: []VType{{Tag: VNull}}}},
			[]byte{0, 1, 247, 0, 1, 5}},
		{"same extended kept", []Frame{{Kind: FrameSameExt, Offset: 1}}, []byte{0, 1, 251, 0, 1}},
		{"chop 2", []Frame{{Kind: FrameChop, Chop: 2, Offset: 9}}, []byte{0, 1, 249, 0, 9}},
		{"append uninitialized", []Frame{{Kind: FrameAppend, Offset: 4,
			Locals: []VType{{Tag: VLong}, {Tag: VUninitialized, Index: 0x1234}}}},
			[]byte{0, 1, 253, 0, 4, 4, 8, 0x12, 0x34}},
		{"full", []Frame{{Kind: FrameFull, Offset: 0, Locals: []VType{{Tag: VUninitializedThis}, {Tag: VTop}},
			Stack: []VType{{Tag: VDouble}}}}, []byte{0, 1, 255, 0, 0, 0, 2, 6, 0, 0, 1, 3}},
	}
	p := NewPool()
	for i := 0; i < 6; i++ { // make #7 a Class
		if _, err := p.AddUTF8(string(rune('a' + i))); err != nil {
			t.Fatal(err)
		}
	}
	if i, err := p.AddClass("a"); err != nil || i != 7 {
		t.Fatalf("AddClass = %d, %v; want 7", i, err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := appendFrames(nil, tt.frames)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Errorf("got % x; want % x", got, tt.want)
			}
			if n := framesSize(tt.frames); n != len(got) {
				t.Errorf("framesSize = %d; want %d", n, len(got))
			}
			back := decodeFrames(&reader{b: got}, p, nil)
			if back == nil {
				t.Fatal("decode failed")
			}
			again, err := appendFrames(nil, back)
			if err != nil || !bytes.Equal(again, tt.want) {
				t.Errorf("decode+encode = % x, %v; want % x", again, err, tt.want)
			}
		})
	}
}

func TestFrameEncodeErrors(t *testing.T) {
	bad := [][]Frame{
		{{Kind: FrameSame, Offset: 5}, {Kind: FrameSame, Offset: 5}},
		{{Kind: FrameSame, Offset: 70000}},
		{{Kind: FrameChop, Chop: 4}},
		{{Kind: FrameAppend}},
		{{Kind: FrameSameLocals1}},
		{{Kind: FrameKind(9)}},
	}
	for i, fs := range bad {
		if _, err := appendFrames(nil, fs); !errors.Is(err, ErrBadAttribute) {
			t.Errorf("case %d: %v; want ErrBadAttribute", i, err)
		}
	}
}

// TestMalformedCode corrupts the Code attribute of buildClass and checks
// the error and its offset in the class file. Code info layout: 0
// max_stack, 2 max_locals, 4 code_length, 8 code (9 bytes), 17
// exception_table_length, 19 entry (catch_type at 25), 27
// attributes_count, 29 LineNumberTable (name, length, count at 35), ...
func TestMalformedCode(t *testing.T) {
	c, _ := buildClass(t)
	b, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	c, err = Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	a := c.Methods[0].Attrs[0]
	lnt, lvt := 29, 29+6+2+3*lineEntrySize
	smt := lvt + 6 + 2 + localEntrySize
	tests := []struct {
		name string
		at   int
		v    []byte
		cut  int // truncate Data to this length when > 0
		err  error
		off  int
	}{
		{"code_length 0", 4, []byte{0, 0, 0, 0}, 0, ErrBadAttribute, 4},
		{"code_length 65536", 4, []byte{0, 1, 0, 0}, 0, ErrBadAttribute, 4},
		{"code beyond attribute", 4, []byte{0, 0, 1, 0}, 0, ErrTruncated, 4},
		{"catch_type not a Class", 25, []byte{0, 1}, 0, ErrBadConstant, 25},
		{"exception table beyond attribute", 17, []byte{0x10, 0}, 0, ErrTruncated, 19},
		{"line table count too big", lnt + 6, []byte{0, 4}, 0, ErrTruncated, lnt + 8},
		{"line table count too small", lnt + 6, []byte{0, 2}, 0, ErrBadAttribute, lnt + 8 + 2*lineEntrySize},
		{"sub-attribute length beyond Code", lnt + 2, []byte{0, 0, 1, 0}, 0, ErrTruncated, lnt + 6},
		{"reserved frame type", smt + 8, []byte{200}, 0, ErrBadAttribute, smt + 8},
		{"bad verification tag", smt + 10, []byte{9}, 0, ErrBadAttribute, smt + 10},
		{"Object not a Class", smt + 11, []byte{0, 1}, 0, ErrBadConstant, smt + 10},
		{"truncated Code", 0, nil, 20, ErrTruncated, 19},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := bytes.Clone(a.Data)
			copy(d[tt.at:], tt.v)
			if tt.cut > 0 {
				d = d[:tt.cut]
			}
			got, err := DecodeCode(c.Pool, &Attribute{Name: a.Name, Data: d, Offset: a.Offset})
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("DecodeCode = %+v, %v; want *FormatError", got, err)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("error %v; want %v", err, tt.err)
			}
			if fe.Offset != a.Offset+tt.off {
				t.Errorf("offset %d; want %d (%v)", fe.Offset, a.Offset+tt.off, err)
			}
		})
	}
}
