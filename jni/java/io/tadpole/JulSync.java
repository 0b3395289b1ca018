/*
 * JulSync: the daemon thread "tadpole-jul" that keeps JUL loggers in step
 * with the agent. It leaves java.util.logging alone until the application
 * has initialised LogManager itself (so -Djava.util.logging.manager and
 * managers set in main keep working), then every PERIOD_MS registers the
 * loggers LogManager lists with the agent (the names LTTng's LIST shows)
 * and attaches the agent's handler to the enabled ones, removing it from
 * the disabled ones.
 */
package io.tadpole;

import java.util.Enumeration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.logging.LogManager;
import java.util.logging.Logger;

final class JulSync implements Runnable {
	static final long PERIOD_MS = 100;

	/* Logger name → agent handle, for every logger seen. */
	private static final HashMap<String, Integer> HANDLES = new HashMap<String, Integer>();
	/* Logger name → the logger holding the agent's handler (a strong
	 * reference: LogManager keeps loggers weakly). */
	private static final HashMap<String, Logger> ATTACHED = new HashMap<String, Logger>();
	private static final HashMap<String, JulHandler> HANDLERS = new HashMap<String, JulHandler>();

	private static volatile boolean ready;
	private static Class<?> logManager;

	private JulSync() {
	}

	/* Called by the agent once its natives are bound: the thread to start,
	 * or null without the java.logging module. The agent starts it once it
	 * has taken note of it, so as to leave its own thread out of the trace. */
	static Thread create() {
		try {
			logManager = Class.forName("java.util.logging.LogManager", false, null);
		} catch (ClassNotFoundException e) {
			return null; // no java.logging module: nothing to do
		}
		Thread t = new Thread(new JulSync(), "tadpole-jul");
		t.setDaemon(true);
		return t;
	}

	@Override
	public void run() {
		try {
			for (;;) {
				sync();
				Thread.sleep(PERIOD_MS);
			}
		} catch (InterruptedException e) {
			return;
		}
	}

	static synchronized void sync() {
		if (!ready) {
			// Initialising LogManager here would run before the
			// application chose its manager.
			if (logManager == null || !Tadpole.initialized0(logManager)) {
				return;
			}
			ready = true;
		}
		LogManager m = LogManager.getLogManager();
		Enumeration<String> names = m.getLoggerNames();
		while (names.hasMoreElements()) {
			String n = names.nextElement();
			if (n.length() == 0 || HANDLES.containsKey(n)) {
				continue;
			}
			int h = Tadpole.loggerRegister0(n);
			if (h > 0) {
				HANDLES.put(n, Integer.valueOf(h));
			}
		}
		Iterator<Map.Entry<String, Integer>> it = HANDLES.entrySet().iterator();
		while (it.hasNext()) {
			Map.Entry<String, Integer> e = it.next();
			String n = e.getKey();
			int h = e.getValue().intValue();
			boolean on = Tadpole.loggerEnabled0(h);
			JulHandler jh = HANDLERS.get(n);
			if (on && jh == null) {
				Logger l = m.getLogger(n);
				if (l == null) {
					continue;
				}
				jh = new JulHandler(l.getName(), h); // the string its records carry
				l.addHandler(jh);
				HANDLERS.put(n, jh);
				ATTACHED.put(n, l);
			} else if (!on && jh != null) {
				ATTACHED.remove(n).removeHandler(jh);
				HANDLERS.remove(n);
			}
		}
	}
}
