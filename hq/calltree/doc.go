// Package calltree builds call trees from a run's events and exports them
// for people: speedscope's file format, Chrome's trace-event JSON (which
// Perfetto and chrome://tracing open) and a self-contained flame graph
// (SVG, or HTML around it).
//
// A Tree is an hq.Processor, so the same code serves a live run
// (hq.Config.NewProcessor) and a trace file (hq.ReplayFile):
//
//	t := calltree.New(nil)
//	rep, err := hq.ReplayFile(path, &hq.ReplayOptions{Processors: []hq.Processor{t}})
//	...
//	err = t.WriteSpeedscope(w, "run 3")
//
// # What is counted
//
// Each thread has a stack of frames. MethodEntry pushes one; MethodExit and
// ExceptionBubble (a call ended by an exception) pop the innermost one. As
// HQ's own checks do, an exit or bubble pops the innermost call even when it
// names another method (Stats.Mismatched counts those); an exit on an empty
// stack (a call entered before tracing began or before a data break) is
// counted in Stats.UnmatchedExits and otherwise ignored. Exception events
// (a throw) and bubbles are counted on the call path of the innermost frame.
// A DataBreak drops every open stack, closing its frames at their thread's
// last timestamp; Finish does the same with what is still open.
//
// Events carry RelTime, milliseconds since the run started. A frame's total
// time is its exit time minus its entry time; its self time is the total
// minus its callees' totals. Timestamps are made monotonic per thread (an
// event stamped before its thread's previous event counts at that event's
// time), so self ≤ total always holds. Calls of a few microseconds show as
// 0 ms: the agents stamp with millisecond resolution.
//
// # Bounds
//
// Memory is bounded by Config: at most MaxPaths distinct call paths
// (further paths are merged into their caller's self time and counted in
// Stats.MergedCalls), MaxDepth frames per thread (deeper calls are counted,
// not kept) and MaxTimeline timeline events for the per-thread exports
// (further calls are left out of speedscope and Chrome output and counted in
// Stats.UntimedCalls). Per-method counters stay exact in all cases. When a
// bound is reached, Finish adds a warning to the run's report.
//
// A Tree is not safe for concurrent use: its methods are called from the
// run's core goroutine; read it after the run ended (or synchronise).
package calltree
