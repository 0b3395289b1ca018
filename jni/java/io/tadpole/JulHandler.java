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

final class JulHandler extends Handler {
	private static final Formatter FORMAT = new SimpleFormatter();

	private final String name;
	private final int handle;

	JulHandler(String name, int handle) {
		this.name = name;
		this.handle = handle;
	}

	String loggerName() {
		return name;
	}

	/* One native per record, wherever it goes (HQ, LTTng sessions, both):
	 * it decides on the record from the logger's state (kept in C),
	 * copies the strings into the thread's buffer or the LTTng event and
	 * sees renames from the name's hash. The record's time, thread id and
	 * call site go along for LTTng, as the official LTTng agent records
	 * them. */
	@Override
	public void publish(LogRecord r) {
		if (r == null || !name.equals(r.getLoggerName())) {
			return;
		}
		Level l = r.getLevel();
		String msg = r.getMessage();
		if (r.getParameters() != null || r.getResourceBundle() != null) {
			msg = FORMAT.formatMessage(r);
		}
		if (msg == null) {
			msg = "";
		}
		String t = Thread.currentThread().getName();
		// Set only when call sites are on (LTTng recording with sources).
		java.util.function.IntSupplier s = Tadpole.sites;
		Tadpole.log0(handle, l.intValue(), standard(l) ? null : l.getName(), msg, msg.length(), t, t.hashCode(), r,
				r.getMillis(), r.getThreadID(), s != null ? s.getAsInt() : 0);
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
