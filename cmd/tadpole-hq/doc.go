// Command tadpole-hq is the reference Bytefrog HQ: it accepts tadpole (and
// other Bytefrog) agents, runs their traces, writes trace files and prints
// a summary of each run.
//
//	tadpole-hq [flags]                      serve until interrupted (or -runs N)
//	tadpole-hq [flags] -exec CMD [ARGS...]  run CMD against a private HQ
//	tadpole-hq replay FILE...               summaries of trace files
//	tadpole-hq ctl [-hce ADDR] COMMAND      drive agents through an HCE hub
//	tadpole-hq export -format F [-o OUT] FILE  export a trace file's calls
//
// export writes speedscope's file format, Chrome trace-event JSON or a
// flame graph (SVG, or HTML with -o NAME.html); see docs/exports.md.
//
// With -hce ADDR[,ADDR] (host:port, pipe:/path), serving HQ also runs an
// HCE hub (package transport/hce/hub) where agents started with hce=ADDR
// register; ctl lists them and sends them commands (docs/hce.md).
//
// -listen ADDR[,ADDR] takes host:port (TCP), unix:/path (a Unix-domain
// socket file: cheaper than loopback TCP for an agent on this host) and
// @name (Linux's abstract namespace); agents name the same in hq=.
//
// With -exec, HQ listens on 127.0.0.1:0, starts CMD with TADPOLE_HQ=<addr>
// added to its environment and its standard streams passed through, waits
// for CMD to exit and for its runs to end (at most -wait), prints the
// summaries on stdout and exits with CMD's status if CMD failed, with 3 if a
// run failed or fewer than -runs runs came (default 1), else 0.
//
// With -dir, every run is written to a trace file there, S2-compressed
// unless -compress says zstd (smaller files, more CPU) or none; replay reads
// any of them.
//
// With -http ADDR, HQ also serves a live page of its runs on ADDR: rates,
// modes, health, buttons that pause, suspend and stop a run, a flame graph,
// a timeline, exceptions and markers (package hq/web, docs/web.md). ADDR
// must be loopback unless -http-allow-remote is given: the page has no
// authentication.
//
// While serving, a status line (agents, mode, events/s, health) is redrawn
// on stderr when it is a terminal; otherwise the same shows as a log line
// every 10 s. Exit status: 0 all runs completed, 1 HQ could not run, 2 bad
// usage, 3 a run failed.
package main
