// Command libjvm is libtadpole.so as the jni tests build it: the C API and
// the JVM agent, linked like cmd/libtadpole, so that the tests do not
// depend on cmd/libtadpole's imports.
package main

import (
	_ "github.com/tadpole-trace/tadpole/capi"
	_ "github.com/tadpole-trace/tadpole/jni"
)

func main() {}
