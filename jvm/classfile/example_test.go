package classfile_test

import (
	"bytes"
	"fmt"
	"os"

	"github.com/tadpole-trace/tadpole/jvm/classfile"
)

// Parse a class, read its methods' code, append a probe method reference
// to its pool and write it back: the pool grew by the five constants
// (19+3+8+7+5+5 bytes: Utf8 class name, Class, Utf8 name, Utf8
// descriptor, NameAndType, Methodref).
func Example() {
	b, err := os.ReadFile("testdata/classes/Sample8$Inner.class")
	if err != nil {
		panic(err)
	}
	c, err := classfile.Parse(b)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Name(), c.Major, len(c.Methods), "methods")
	for i := range c.Methods {
		m := &c.Methods[i]
		code, err := m.Code(c.Pool)
		if err != nil {
			panic(err)
		}
		line, _ := code.LineAt(0)
		fmt.Printf("%s%s max_stack=%d code=%d bytes line %d\n",
			c.MemberName(m), c.MemberDesc(m), code.MaxStack, len(code.Code), line)
	}
	same, _ := c.Bytes()
	fmt.Println("unchanged round trip identical:", bytes.Equal(same, b))

	idx, err := c.Pool.AddMethodref("io/tadpole/Probe", "enter", "(I)V")
	if err != nil {
		panic(err)
	}
	out, _ := c.Bytes()
	fmt.Println("new Methodref at", idx, "class grew by", len(out)-len(b), "bytes")
	// Output:
	// Sample8$Inner 52 2 methods
	// <init>(LSample8;)V max_stack=2 code=10 bytes line 71
	// get()I max_stack=1 code=8 bytes line 73
	// unchanged round trip identical: true
	// new Methodref at 36 class grew by 47 bytes
}

// Errors name the offset of the problem in the class file.
func ExampleFormatError() {
	_, err := classfile.Parse([]byte{0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 70})
	fmt.Println(err)
	// Output: classfile: unsupported class file version at offset 6 (version 70.0)
}
