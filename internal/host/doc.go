// Package host is the plumbing between the agent core (package agent) and
// the hosts built into libtadpole.so: the C API (package capi) and the JVM
// agent (package jni), and agent/lttngust. It is internal: Go programs use
// package agent, whose public API is the user's (Start, Config, Method,
// Mark, loggers, …).
//
// It declares what a host needs and the agent provides: the layout of host
// batches (BatchHeaderSize, Batch*, AppendBatchRecord) and JVM probe words
// (Probe*), their clock (MonoNow), the calls into the active run
// (SubmitBatch, SubmitProbes, HandProbes, Gate, CurrentMode, AddModeHook, ReportClass,
// ClassFilters, Log) and what a host plugs in (SetPlatformMBeans, the LTTng
// recorder hook SetLTTngLoader).
//
// Package agent implements the calls and registers them once, from its
// init function (Register): a host that calls them also imports package
// agent, which the Go initialisation order then sets up first. Each call
// is one load of a function value and a direct call, no interface
// dispatch: SubmitBatch, SubmitProbes and HandProbes carry every C and JVM
// event. HandProbes lends the words (ProbeOwner gets them back), with no copy.
package host
