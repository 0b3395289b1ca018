/*
 * JulHandler: the java.util.logging Handler the agent attaches to each JUL
 * logger that is enabled (by the log policy or an LTTng session), and
 * removes when it is disabled. It records only its own logger's records:
 * a parent logger's handler ignores its children's records, which the
 * children's own handlers record when they are enabled.
 */
package io.tadpole;

import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.SimpleFormatter;
import java.util.function.ObjLongConsumer;

final class JulHandler extends Handler {
	private static final Formatter FORMAT = new SimpleFormatter();

	private final String name;
	private final int handle;
	/* Whether the logger's marker key fits the agent's strings: else its
	 * records take the native path, which names it. */
	private final boolean keyFits;

	JulHandler(String name, int handle) {
		this.name = name;
		this.handle = handle;
		this.keyFits = name.length() <= JUL_MSG_MAX;
	}

	String loggerName() {
		return name;
	}

	/* Chars of the longest message that goes into the thread's probe
	 * buffer: "<level> <message>" in modified UTF-8 (3 bytes a char at
	 * most) stays within the agent's 8192-byte strings. */
	static final int JUL_MSG_MAX = 2720;

	/* While HQ traces and no LTTng session records JUL events, the agent
	 * puts its probe buffers' way in into Tadpole.jul: a record of a
	 * standard level that the logger's state (Tadpole.julAccept, a
	 * mirror of the C side's) accepts is appended to the thread's probe buffer, no
	 * JNI call (Probe.Jul); one it rejects costs nothing more. Otherwise,
	 * while no HQ run is on, lttng0 takes the common record into the LTTng
	 * sessions with the few values they need (one native). Else one native
	 * per record, log0, wherever it goes (HQ, LTTng sessions, both):
	 * it decides on the record from the logger's state (kept in C),
	 * copies the strings into the thread's buffer or the LTTng event and
	 * sees renames from the name's hash. The record's time, thread id and
	 * call site go along for LTTng, as the official LTTng agent records
	 * them. */
	@Override
	public void publish(LogRecord r) {
		if (r == null) {
			return;
		}
		// The logger sets its own name, the string this handler holds.
		String ln = r.getLoggerName();
		if (ln != name && !name.equals(ln)) {
			return;
		}
		// The common case: a plain message of a standard level that the
		// logger's state records into the probe buffers. It stays short, a
		// few reads and the call that appends (Probe.Buf.jul, which C2 does
		// not inline), so that C2 inlines JUL's Logger.log(LogRecord) with
		// this handler into the logging call and keeps the LogRecord off
		// the heap, as for a handler that does nothing.
		ObjLongConsumer<String> j = Tadpole.jul;
		Level l = r.getLevel();
		String msg = r.getMessage();
		if (j != null && msg != null && keyFits && msg.length() <= JUL_MSG_MAX && r.getParameters() == null
				&& r.getResourceBundle() == null && standard(l) && Tadpole.julRecords(handle, l.intValue())) {
			j.accept(msg, (long) handle << 32 | (l.intValue() & 0xFFFFFFFFL));
			return;
		}
		publishOther(r, l);
	}

	/* publishOther publishes a record of level l that publish did not put
	 * into the probe buffers: the logger's state decides (julAccept). */
	private void publishOther(LogRecord r, Level l) {
		String msg = r.getMessage();
		if (r.getParameters() != null || r.getResourceBundle() != null) {
			msg = FORMAT.formatMessage(r);
		}
		if (msg == null) {
			msg = "";
		}
		ObjLongConsumer<String> j = Tadpole.jul;
		if (j != null && keyFits && msg.length() <= JUL_MSG_MAX && standard(l)) {
			int v = l.intValue();
			int d = Tadpole.julAccept(handle, v);
			if (d == Tadpole.JUL_RECORD) {
				j.accept(msg, (long) handle << 32 | (v & 0xFFFFFFFFL));
				return;
			}
			if (d == Tadpole.JUL_DROP) {
				return;
			}
		}
		// Set only when call sites are on (LTTng recording with sources).
		java.util.function.IntSupplier s = Tadpole.sites;
		int site = s != null ? s.getAsInt() : 0;
		int v = l.intValue();
		long millis = r.getMillis();
		int tid = r.getThreadID();
		// j set: HQ traces and no LTTng session records, log0 alone serves.
		if (j == null && Tadpole.lttng0(handle, v, msg, msg.length(), millis, tid, site)) {
			return;
		}
		String t = Thread.currentThread().getName();
		Tadpole.log0(handle, v, standard(l) ? null : l.getName(), msg, msg.length(), t, t.hashCode(), r, millis, tid,
				site);
	}

	/* standard reports whether l is one of java.util.logging's own levels,
	 * which the agent names from their values (no string to copy). */
	private static boolean standard(Level l) {
		return l == Level.INFO || l == Level.FINE || l == Level.WARNING || l == Level.SEVERE || l == Level.CONFIG
				|| l == Level.FINER || l == Level.FINEST;
	}

	@Override
	public void flush() {
	}

	@Override
	public void close() {
	}
}
