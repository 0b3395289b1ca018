package instrument_test

import (
	"fmt"
	"os"

	"github.com/tadpole-trace/tadpole/jvm/instrument"
)

func ExampleSignature() {
	fmt.Println(instrument.Signature("com/ex/Main", "main", 9, "([Ljava/lang/String;)V"))
	// Output: com/ex/Main.main;9;([Ljava/lang/String;)V
}

func ExampleInstrumenter_InstrumentClass() {
	b, err := os.ReadFile("testdata/classes/Switches.class")
	if err != nil {
		panic(err)
	}
	cfg := instrument.DefaultConfig()
	next := int32(100)
	cfg.MethodID = func(class, name, desc string) (int32, bool) {
		next++
		return next, name != "<init>" // constructors left alone
	}
	x, err := instrument.New(&cfg)
	if err != nil {
		panic(err)
	}
	out, res, err := x.InstrumentClass(b)
	if err != nil {
		panic(err)
	}
	for _, m := range res.Methods {
		fmt.Println(m.ID, m.Signature, m.Err)
	}
	fmt.Println(len(out) > len(b))
	// Output:
	// 102 tadpole/test/Switches.table;8;(I)I <nil>
	// 103 tadpole/test/Switches.lookup;8;(I)I <nil>
	// 104 tadpole/test/Switches.strings;8;(Ljava/lang/String;)I <nil>
	// 105 tadpole/test/Switches.colors;8;(Ltadpole/test/Color;)I <nil>
	// 106 tadpole/test/Switches.run;8;()J <nil>
	// true
}
