package jni

import "errors"

// ErrNoClass: an embedded helper class is missing (jni/classes was not
// built; run ./build.sh lib).
var ErrNoClass = errors.New("jni: embedded helper class missing")

// ErrNoInstrumenter: the bytecode rewriter could not be set up.
var ErrNoInstrumenter = errors.New("jni: no bytecode rewriter")
