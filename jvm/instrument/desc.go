package instrument

import "strconv"

// Access flags the instrumenter looks at (JVMS §4.6), and ASM's pseudo flag.
const (
	AccStatic       = 0x0008
	AccSynchronized = 0x0020
	AccBridge       = 0x0040
	AccVarargs      = 0x0080
	AccNative       = 0x0100
	AccAbstract     = 0x0400
	AccSynthetic    = 0x1000
	// AccDeprecated is ASM's pseudo flag for a method with a Deprecated attribute.
	AccDeprecated = 0x20000
)

// ASMAccess returns the access flags of a method as ASM's ClassReader reports
// them to a visitor (the flags Bytefrog's signatures carry): the class-file
// flags, plus ACC_SYNTHETIC for a Synthetic attribute and ACC_DEPRECATED
// (0x20000) for a Deprecated attribute.
func ASMAccess(flags uint16, deprecatedAttr, syntheticAttr bool) int {
	a := int(flags)
	if deprecatedAttr {
		a |= AccDeprecated
	}
	if syntheticAttr {
		a |= AccSynthetic
	}
	return a
}

// Signature returns the Bytefrog method signature string:
// <internal class name>.<method name>;<access flags, decimal>;<descriptor>,
// e.g. "com/ex/Main.main;9;([Ljava/lang/String;)V".
func Signature(class, name string, access int, desc string) string {
	b := make([]byte, 0, len(class)+len(name)+len(desc)+10)
	b = append(b, class...)
	b = append(b, '.')
	b = append(b, name...)
	b = append(b, ';')
	b = strconv.AppendInt(b, int64(access), 10)
	b = append(b, ';')
	b = append(b, desc...)
	return string(b)
}

// fieldSlots returns the number of stack slots of a field descriptor, or -1.
func fieldSlots(desc string) int {
	n, rest := typeSlots(desc)
	if n < 0 || rest != len(desc) {
		return -1
	}
	return n
}

// typeSlots parses one field type at the start of d: its slots and length.
func typeSlots(d string) (int, int) {
	i := 0
	for i < len(d) && d[i] == '[' {
		i++
	}
	if i >= len(d) {
		return -1, 0
	}
	switch d[i] {
	case 'B', 'C', 'F', 'I', 'S', 'Z':
		if i > 0 {
			return 1, i + 1
		}
		return 1, 1
	case 'J', 'D':
		if i > 0 {
			return 1, i + 1
		}
		return 2, 1
	case 'L':
		for j := i + 1; j < len(d); j++ {
			if d[j] == ';' {
				if j == i+1 {
					return -1, 0
				}
				return 1, j + 1
			}
		}
	}
	return -1, 0
}

// methodSlots returns the argument and return-value slots of a method
// descriptor, ok false if it is malformed.
func methodSlots(desc string) (args, ret int, ok bool) {
	if len(desc) < 3 || desc[0] != '(' {
		return 0, 0, false
	}
	i := 1
	for i < len(desc) && desc[i] != ')' {
		n, l := typeSlots(desc[i:])
		if n < 0 {
			return 0, 0, false
		}
		args += n
		i += l
	}
	if i >= len(desc)-1 {
		return 0, 0, false
	}
	if desc[i+1:] == "V" {
		return args, 0, true
	}
	ret = fieldSlots(desc[i+1:])
	return args, ret, ret >= 0
}
