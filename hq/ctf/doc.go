// Package ctf turns HQ's runs into CTF 1.8 traces that babeltrace2 and
// Trace Compass read: live, through the LTTng live relay of
// transport/live, or written to a directory (Export).
//
// # One trace per run; a stream per thread
//
// Each run is one trace with one stream class (id 0) and these stream
// instances:
//
//	instance 0      "run"        markers, thread names, method signatures,
//	                             exception classes, source locations, data breaks
//	instance tid+1  "thread-<tid>"  the thread's method_entry, method_exit,
//	                             exception, exception_bubble, method_visit
//
// A stream per traced thread (not per data connection) because a thread's
// events are what a reader follows, and because an agent deals one
// thread's events over every data connection. HQ has already put the
// events in sequence order: each thread's stream holds its events in that
// order, and timestamps (run start + relTime, raised by 1 ns where needed)
// strictly increase across all streams, so a viewer that merges streams by
// time prints HQ's order.
//
// # Event classes
//
// All are declared up front (the metadata never changes, so a live viewer
// never needs an update); names start with "tadpole:". Method and
// exception ids are resolved to their names in every event, as string
// fields, so babeltrace2's text output shows them:
//
//	method_entry          seq, tid, method_id, method
//	method_exit           seq, tid, method_id, method, line (-1 unknown), exception_thrown
//	exception             seq, tid, method_id, method, exception_id, exception, line
//	exception_bubble      seq, tid, method_id, method, exception_id, exception
//	method_visit          seq, tid, method_id, method, source_location_id
//	marker                seq, key, value
//	thread_name           tid, name
//	method_signature      method_id, signature
//	exception_class       exception_id, name
//	data_break            seq
//	source_location       source_location_id, method_id, method, start_line, end_line, start_char, end_char
//	source_location_count method_id, method, count
//
// # Packets
//
// Little-endian, fully packed (align 8 bits): a 16-byte header (magic
// 0xC1FC1FC1, stream class id, stream instance id), a 48-byte context
// (timestamp_begin, timestamp_end, content_size and packet_size in bits,
// packet_seq_num, events_discarded), then events of a 10-byte header (u16
// id, u64 timestamp) and their fields. The clock "tadpole" counts
// nanoseconds since the Unix epoch. A packet is cut when it reaches
// Config.PacketSize and, in a live run, at every tick of Config.LiveTimer
// (1 s): a thread with events shows within a tick, an idle stream gets an
// inactivity beacon instead. A new thread's first packet begins after
// every packet published before it; when threads appeared since the last
// tick, the run stream gets a packet (empty if need be), so that a viewer
// whose streams are all idle still learns of them (babeltrace 2.0.4 reads
// the NEW_STREAM flag only with a packet, and fetches new streams before
// it decodes that packet).
//
// # Live runs
//
// Catalog makes every run of an hq.Server a live session named
// <host>/<program>-<pid>-<run> (the program and pid are found in /proc
// for a local agent) and every trace file of the trace directory a
// recorded one. A run is handed to the live side by reference: its core
// gives the Feed (an hq.BlockProcessor) each block of events it releases,
// in sequence order, as one call and one buffer reference, nothing per
// event; mappings and data breaks are copied (they are few). Nothing is
// encoded on the ingest's side. A viewer asking for a packet it has not
// got (GET_NEXT_INDEX, live.Trace's demand hook) encodes, in its own
// goroutine, the events kept since the last encoding into the shared
// trace, and cuts the packets once per live-timer period: the run is
// encoded once, at the pace of its fastest viewer, and every viewer reads
// the same packets. The Feed keeps at most CatalogConfig.Backlog (1 MiB,
// about 50 k events) before the first viewer comes and DefaultFeedMax (16
// MiB) after: beyond, the oldest events are dropped (mappings and breaks kept)
// and the encoding counts them in the run stream's events_discarded,
// which babeltrace reports as discarded events. A session holds at most
// 64 MiB of packets; a viewer that lags further skips the oldest
// (babeltrace reports the discarded packets).
//
// # Pacing
//
// While runs are being ingested heavily (within the last 300 ms, more
// than CatalogConfig.PaceAbove events a second: 1 M; below that the
// ingest leaves cores to spare and viewers are served at full speed),
// the Pacer holds serving back, in the viewers' goroutines, after
// each reply: the serving work (encoding on demand, answering, sending;
// the CPU time of each request's thread) to CatalogConfig.ServeShare of
// one core (5%), and the packet bytes delivered to all viewers together
// to CatalogConfig.ServeRate (1 MiB/s, about 20 k events/s). A viewer
// waits for its reply meanwhile, so its own CPU follows the rate (a
// babeltrace2 viewer spends about 0.6 µs per event decoding, its text
// output more): however fast it reads, it cannot take the machine from
// the ingest. Encoding follows the delivery (at most 4096 events per
// demand), so a paced run is encoded only as far as it is delivered. A
// viewer served less than the run brings falls behind, by up to the
// feed's 16 MiB, and then skips ahead to the oldest events kept (the rest
// counted as discarded): it shows slices of the run with counted gaps
// between, while a burst shorter than the feed is shown whole. Once the
// ingest stops, serving is not paced and viewers catch up on everything
// kept, to the run's end. A recorded run is replayed for each
// viewer into its own trace, its producer waiting for
// the viewer.
package ctf
