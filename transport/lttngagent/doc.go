// Package lttngagent is the agent side of the LTTng session daemon ⇄
// language agent protocol, version 2.0 (lttng-tools 2.8 to 2.13 and later):
// it registers the process with lttng-sessiond so that `lttng list -j`
// shows its loggers and `lttng enable-event -j` / `disable-event -j` reach
// it. The 2013 RFC v0.1 layout is available as DialectRFC01.
//
// # Wire format (Dialect20)
//
// One TCP connection per (agent, sessiond), to 127.0.0.1 only. Every
// integer is big-endian; structs are packed.
//
//	agent → sessiond, once, right after connect (16 bytes):
//	  u32 domain (JUL 3, LOG4J 4, PYTHON 5) | u32 pid | u32 major=2 | u32 minor=0
//	sessiond → agent, command header (16 bytes), then data_size bytes:
//	  u64 data_size | u32 cmd | u32 cmd_version (ignored)
//
//	cmd  name             data_size           payload                       reply
//	 1   LIST             0                   —                             list
//	 2   ENABLE           268 + filter_len    s32 loglevel_value,           generic
//	                                          u32 loglevel_type (0 ALL,
//	                                          1 RANGE, 2 SINGLE),
//	                                          char name[256] (NUL, zero-padded),
//	                                          u32 filter_len (NUL included, or 0),
//	                                          filter
//	 3   DISABLE          256                 char name[256]                generic
//	 4   REG_DONE         0                   —                             none, ever
//	 5   APP_CTX_ENABLE   8 + len1 + len2     u32 len1, provider\0,         generic
//	 6   APP_CTX_DISABLE                      u32 len2, ctx\0               generic
//	 other                any ≤ MaxDataSize   discarded                     generic INVALID
//
//	generic reply: u32 ret_code (1 SUCCESS, 2 INVALID, 3 UNKNOWN_NAME; 0 is not success)
//	list reply:    u32 ret_code=1 | u32 data_size (names with their NULs) | u32 nb_event |
//	               names, each followed by \0
//
// ENABLEs for events that already exist arrive between the registration and
// REG_DONE; the connection counts as registered once REG_DONE is read.
//
// # RFC v0.1 (DialectRFC01)
//
// No registration message; header u64 data_size | u64 cmd | u64 version;
// commands LIST 1, ENABLE 2 and DISABLE 3 whose payload is a NUL-terminated
// name of at most 256 bytes (ENABLE maps to level type ALL, INT32_MIN);
// list reply u64 nb | names\0… | u32 ret_code. Integers are big-endian, as
// in the Java agents of that time.
//
// # Behaviour
//
// A Client runs one connection loop per daemon (root: RootPortFile; user:
// $LTTNG_HOME/.lttng/agent.port, else $HOME), re-reading the port file before
// each attempt and retrying every RetryDelay (3 s) forever. A missing port
// file means no daemon (Config.FallbackPort can name a port to try instead).
// When both files give the same port only the root loop connects.
//
// The client defends the host against a broken or hostile daemon: a
// data_size above MaxDataSize ends the connection before anything is read or
// allocated; a command must arrive completely within CommandTimeout of its
// first byte; a reply must be written within WriteTimeout; a malformed
// command of a known size gets INVALID (LIST still gets a valid list, REG_DONE
// never gets anything). Every problem is logged once through Config.Logger,
// nothing goes to stdout, and the loop reconnects after RetryDelay.
//
// The read loop writes each reply itself: with one command in flight and a
// daemon that blocks until it reads the reply, a separate writer goroutine
// would add nothing but a hand-off; WriteTimeout bounds the write.
//
// Names in LIST replies are 1–255 bytes without NUL, sorted and unique; a
// DISABLE is answered as the Handler decides (the agent core answers
// UNKNOWN_NAME for a name it never enabled, as the Java agent does).
package lttngagent
