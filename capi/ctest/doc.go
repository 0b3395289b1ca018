// Package ctest holds the C API's integration tests and the helpers they
// use: it builds libtadpole.so with ./build.sh lib, compiles the C programs
// of testdata/ against it with gcc, and runs them as subprocesses against an
// in-test reference HQ (and, for loggers, a real lttng-sessiond). A C host
// can only be tested that way: one Go runtime per process, so the library
// cannot be loaded into the Go test binary.
//
// The tests skip with a message when gcc is missing, and fail instead when
// the environment has CI=true.
package ctest
