// Package live is the relay side of the LTTng live trace reading protocol,
// version 2.4 (lttng-tools doc/live-reading-protocol.txt; the behaviour of
// lttng-relayd 2.13 as babeltrace2 2.0.4 expects it): HQ serves CTF traces
// to babeltrace2 or Trace Compass over TCP (port 5344 by default) while
// they are being written.
//
// # Wire format
//
// Integers are big-endian, structs packed, strings NUL-padded char arrays
// (host 64, names 255, path 4096 bytes, the last byte always NUL). Each
// request is a 16-byte header followed by its command's fixed payload;
// one request, one reply, no pipelining.
//
//	header          u64 data_size, u32 cmd, u32 cmd_version            16
//
//	cmd  name              request payload                 reply
//	 1   CONNECT           u64 viewer_session_id, u32 major, same 20 bytes: a new id, 2, min(4, minor), 0
//	                       u32 minor, u32 type (1 command)
//	 2   LIST_SESSIONS     —                               u32 n, n × {u64 id, u32 live_timer µs,
//	                                                       u32 clients, u32 streams, char host[64],
//	                                                       char name[255]} (339)
//	 8   CREATE_SESSION    —                               u32 status (1 OK)
//	 3   ATTACH_SESSION    u64 session_id, u64 offset,     u32 status, u32 n, n × {u64 id,
//	                       u32 seek (1 beginning, 2 last)  u64 ctf_trace_id, u32 metadata_flag,
//	                                                       char path[4096], char channel[255]} (4371)
//	 6   GET_METADATA      u64 stream_id                   u64 len, u32 status, len bytes of TSDL
//	 4   GET_NEXT_INDEX    u64 stream_id                   u64 offset (bytes), packet_size,
//	                                                       content_size (bits), timestamp_begin,
//	                                                       timestamp_end, events_discarded,
//	                                                       stream_id (CTF stream class);
//	                                                       u32 status, u32 flags (64)
//	 5   GET_PACKET        u64 stream_id, u64 offset,      u32 status, u32 len, u32 flags, len bytes
//	                       u32 len
//	 7   GET_NEW_STREAMS   u64 session_id                  as ATTACH_SESSION
//	 9   DETACH_SESSION    u64 session_id                  u32 status
//
// Statuses: ATTACH 1 OK, 2 ALREADY, 3 UNK, 4 NOT_LIVE, 5 SEEK_ERR,
// 6 NO_SESSION; INDEX 1 OK, 2 RETRY, 3 HUP, 4 ERR, 5 INACTIVE, 6 EOF
// (never sent: fatal in babeltrace 2.0.4); PACKET 1 OK, 2 RETRY, 3 ERR,
// 4 EOF; METADATA 1 OK, 2 NO_NEW, 3 ERR; NEW_STREAMS 1 OK, 2 NO_NEW,
// 3 ERR, 4 HUP; CREATE 1 OK, 2 ERR; DETACH 1 OK, 2 UNK, 3 ERR. Flags
// (INDEX and PACKET replies, set on every status as lttng-relayd does):
// 1 NEW_METADATA, 2 NEW_STREAM.
//
// # Relay rules
//
//   - data_size must equal the command's fixed payload size (0 for
//     LIST_SESSIONS and CREATE_SESSION). An unknown command, or a wrong
//     size, gets lttng-relayd's generic reply (u32 11, LTTNG_ERR_UNK) and
//     the connection closes; so does a command before CONNECT or another
//     protocol major.
//   - CREATE_SESSION comes before ATTACH (else NO_SESSION) and may repeat.
//   - ATTACH sends the metadata stream and every data stream of the trace.
//     Unlike lttng-relayd, any number of viewers may attach to a session;
//     each connection has its own cursors (next packet per stream, metadata
//     sent, streams announced). SeekBeginning starts at the oldest packet
//     held, SeekLast after the newest; a recorded session (and every
//     session with Config.ForceBeginning) starts at the beginning.
//   - GET_METADATA answers every unsent byte at once, or NO_NEW (never OK
//     with length 0).
//   - GET_NEXT_INDEX, in order: HUP once the trace has ended and the
//     viewer has every packet; INACTIVE with the stream's beacon
//     (timestamp_end, stream_id) when it has none to hand out; RETRY; OK.
//   - GET_PACKET serves any range inside a packet held, at most
//     Config.MaxPacketRead bytes; ERR (length 0) otherwise.
//   - GET_NEW_STREAMS: the streams not announced yet, else HUP once the
//     viewer has read the whole ended trace, else NO_NEW. A session a
//     connection has read to its end is no longer listed to that
//     connection, so that a viewer looking for its session again
//     (babeltrace's session-not-found-action=continue) does not read it
//     twice.
//
// # Resources
//
// One goroutine per connection reads a request and writes its reply in
// one Write under Config.WriteTimeout: a viewer that stops reading loses
// its own connection and nothing else. Requests are read into a fixed
// 36-byte buffer; a reply is at most one packet slice (capped) or the
// stream list. A Trace holds at most TraceConfig.MaxBytes of packets:
// a live trace drops its oldest packets (a lagging viewer skips them, the
// packet sequence numbers tell it), a replayed recording makes its
// producer wait for its viewer.
//
// A producer may encode on demand (Trace.SetDemand): GET_NEXT_INDEX on a
// stream whose packets the viewer has all read calls the hook first, in
// the viewer's goroutine and without the trace's lock, so that packets are
// made at the pace of the viewers and shared by all of them.
// Config.Pacer, told after each reply of the CPU time it took and the
// packet bytes it carried, lets the embedder hold serving back: requests
// are strictly sequential, so a viewer held back waits for its reply and
// its own CPU follows the pace (tadpole-hq keeps serving to a share of a
// core, and the bytes delivered to a rate, while it ingests).
package live
