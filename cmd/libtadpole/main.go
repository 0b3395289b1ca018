// Command libtadpole is the c-shared library libtadpole.so: one library for
// C programs (include/tadpole.h, package capi) and, through the JVMTI entry
// points, for JVMs. Build it with
//
//	./build.sh lib
//
// which runs
//
//	CGO_CFLAGS=-O2 go build -trimpath -buildvcs=false -buildmode=c-shared \
//	    -ldflags="-s -w -buildid= -extldflags=-Wl,--version-script=cmd/libtadpole/exports.map" \
//	    -o out/libtadpole.so ./cmd/libtadpole
//
// The version script exports only the public C API (tadpole_*) and the
// JVMTI entry points; cgo's own symbols and the Go exports stay local.
// Never load a second Go-based shared library into the same process: one Go
// runtime per process.
package main

import (
	_ "github.com/tadpole-trace/tadpole/capi"
	_ "github.com/tadpole-trace/tadpole/jni"
)

func main() {}
