package jni

// The C compiler flags of package jni, in this one file (cgo applies a
// package's #cgo flags to all its C files):
//
//   - include/ for tadpole.h, and capi/ for capi's JVM host interface,
//     jvmhost.h: the tp_j* functions natives.c, jvmti.c and probe.c call
//     are package capi's (capi/jvmhost.c), imported below;
//   - the JDK's include directories for jni.h and jvmti.h: the usual
//     Debian and Ubuntu locations of OpenJDK 17 and default-java below.
//     ./build.sh puts the JDK it finds ($JAVA_HOME, else the one of javac
//     in PATH) in CGO_CFLAGS, which go before these; with another JDK
//     elsewhere, build with
//
//     CGO_CFLAGS="-O2 -I$JAVA_HOME/include -I$JAVA_HOME/include/linux" go build ./jni/

/*
#cgo CFLAGS: -I${SRCDIR}/../include -I${SRCDIR}/../capi -fvisibility=hidden -Wall
#cgo CFLAGS: -I/usr/lib/jvm/java-17-openjdk-amd64/include -I/usr/lib/jvm/java-17-openjdk-amd64/include/linux
#cgo CFLAGS: -I/usr/lib/jvm/java-17-openjdk-arm64/include -I/usr/lib/jvm/java-17-openjdk-arm64/include/linux
#cgo CFLAGS: -I/usr/lib/jvm/default-java/include -I/usr/lib/jvm/default-java/include/linux
*/
import "C"

import (
	// The C API's recorder and the tp_j* functions of capi/jvmhost.h,
	// which this package's C code calls: linked into the same library.
	_ "github.com/tadpole-trace/tadpole/capi"
)
