// Package web is HQ's live page: one self-contained page (its HTML,
// script and style are embedded in the binary; it loads nothing from
// elsewhere) and the JSON it polls, for the runs of an hq.Server.
//
//	w, err := web.New(nil)
//	w.Hook(cfg)                    // before hq.New(cfg): every run gets a processor
//	err = w.Listen("127.0.0.1:8080")
//
// The page shows the connected agents and their runs (event rate, mode,
// health, HQ's control log), buttons that send a run pause, unpause,
// suspend, unsuspend and stop (the Run methods a lifecycle script calls),
// a flame graph of the run (total and self time, click to zoom, search), a
// per-thread timeline of calls, the exceptions with the paths they bubbled
// along, and the markers and log records with a filter; all of it updates
// while the run goes on.
//
// # Keeping up with large runs
//
// Each run's processor copies its call events into batches (Config.Batch
// events, or fewer when the agent's heartbeat arrives) that a worker
// goroutine hands to a calltree.Tree under one lock; when the worker is a
// full queue behind, the page leaves a batch's calls out (counted, and
// followed by a data break of its own) rather than slow HQ down. It keeps the
// timeline's spans (short calls that follow each other are merged, so a
// hot loop is one bar), the bubble paths and the markers in bounded rings
// and maps. Every Config.Tick a publisher takes a snapshot of the tree
// (calltree.Tree.Snapshot: open calls counted up to now) and gives each
// call path that changed the new version number. The page asks only for
// what changed:
//
//	GET  /api/runs                              the runs, with rate history and control log
//	GET  /api/runs/{key}/flame?since=V&after=I&names=K
//	                                            call paths changed after version V, from index I on
//	                                            (at most DeltaNodes; "more" and "resume" page on),
//	                                            method names from the K-th on
//	GET  /api/runs/{key}/timeline?since=S       spans after the S-th (the newest DeltaSpans), the
//	                                            spans still growing, the open calls, thread names
//	GET  /api/runs/{key}/exceptions             exception classes, bubble paths
//	GET  /api/runs/{key}/markers?since=S&q=TEXT&kind=all|log|marker&from=newest|oldest&limit=N
//	POST /api/runs/{key}/control?action=pause   (header X-Tadpole-Control: 1)
//
// A page gets at most Config.MaxNodes call paths of a run; the answers
// say what was left out.
//
// # Security
//
// The page has no authentication and its buttons control runs, so Listen
// refuses an address beyond loopback unless Config.AllowRemote is set;
// without it, requests naming another host than a loopback one are
// refused (421), which defeats DNS rebinding. Control requests must be
// POSTs carrying the header X-Tadpole-Control (a cross-site form cannot
// set it, and the page grants no CORS) and, when they carry an Origin, come
// from the page's own. Every answer forbids framing and sniffing and sets
// a Content-Security-Policy that allows the page's own script only.
// Numbers in queries are parsed with bounds, filters are capped to 256
// bytes, and marker texts to 1 KiB.
package web
