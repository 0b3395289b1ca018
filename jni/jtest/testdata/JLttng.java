import io.tadpole.Tadpole;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.Logger;

/*
 * JLttng logs the same JUL records under tadpole or under the official
 * LTTng Java agent (argument "official": its LttngLogHandler, loaded by
 * name, on each logger), so that a test compares the two LTTng traces.
 * It prints "ready", then for each line "emit <phase>" on stdin logs one
 * batch and prints "emitted <phase>"; it ends at EOF.
 */
public class JLttng {
	static final Logger ORDERS = Logger.getLogger("shop.orders");
	static final Logger PAY = Logger.getLogger("shop.pay");

	public static void main(String[] args) throws Exception {
		boolean official = args.length > 0 && args[0].equals("official");
		for (Logger l : new Logger[] {ORDERS, PAY}) {
			l.setUseParentHandlers(false);
			l.setLevel(Level.ALL);
			if (official) {
				l.addHandler((Handler) Class.forName("org.lttng.ust.agent.jul.LttngLogHandler")
						.getConstructor().newInstance());
			}
		}
		Tadpole.syncLoggers();
		System.out.println("ready");
		System.out.flush();
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
		for (String line; (line = in.readLine()) != null;) {
			if (line.startsWith("emit ")) {
				Tadpole.syncLoggers(); // tadpole: handlers follow the daemon now, not within 100 ms
				emit(line.substring(5));
				System.out.println("emitted " + line.substring(5));
				System.out.flush();
			}
		}
		if (!official) {
			// The agent's count of records whose source was found on the
			// stack, not named by the call site (jni/tpj.h).
			java.lang.reflect.Method m = Tadpole.class.getDeclaredMethod("selfTest0", int.class);
			m.setAccessible(true);
			System.err.println("tadpole source walks " + m.invoke(null, 5));
		}
	}

	static void emit(String p) {
		for (int i = 0; i < 3; i++) {
			ORDERS.info(p + " order " + i);
			ORDERS.fine(p + " fine " + i);
			ORDERS.warning(p + " warn " + i);
			ORDERS.log(Level.INFO, p + " param {0} of {1}", new Object[] {Integer.valueOf(i), "three"});
			PAY.info(p + " pay " + i);
			PAY.severe(p + " payfail " + i);
		}
	}
}
