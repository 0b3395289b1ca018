// Package jtest holds the JVM agent's integration tests: they build
// libtadpole.so (from ./libjvm, the C API plus package jni), compile the
// Java program in testdata/ with javac and run java -Xcheck:jni
// -agentpath:… as a subprocess against an in-test reference HQ (never a
// JVM inside the test binary: one Go runtime per process). The tests skip
// when java, javac or gcc is missing, and fail instead under CI=true.
package jtest
