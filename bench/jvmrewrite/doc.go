// Package jvmrewrite compares tadpole's bytecode rewriter (jvm/instrument)
// with ASM 9.4 doing the transformation of the Bytefrog agent
// (AdviceAdapter, COMPUTE_MAXS) on the same sample of JDK classes, in one
// run, and prints ns per class, MB/s and the ratio.
package jvmrewrite
