/*
 * Shop.java: a multi-threaded Java program traced by tadpole's JVM agent.
 *
 * Build and run (from the repository root):
 *
 *     ./build.sh lib && ./build.sh build          # out/libtadpole.so, out/tadpole-hq
 *     javac -cp jni/classes -d out/java examples/java/Shop.java
 *     out/tadpole-hq -exec java -agentpath:$PWD/out/libtadpole.so -cp out/java:jni/classes Shop
 *
 * tadpole-hq -exec runs the JVM against a private reference HQ and prints
 * the run summary. Against an HQ already listening:
 *
 *     java -agentpath:$PWD/out/libtadpole.so=hq=127.0.0.1:8765 -cp out/java:jni/classes Shop
 *
 * jni/classes on the class path is optional: it holds io.tadpole.Tadpole,
 * which the agent defines itself; with it the program also runs without the
 * agent (every Tadpole call then does nothing).
 *
 * Three named worker threads take orders; each order is logged on the
 * "shop.orders" logger, payments on "shop.pay" (FINE and WARNING), and
 * out-of-stock orders throw an exception that is caught and logged as
 * SEVERE on "shop.stock". Every JUL logger is listed by "lttng list -j"
 * while the program runs, and each record becomes an HQ marker
 * "log:<logger>" = "<LEVEL> <message>".
 *
 * Every method of these classes is traced (the agent rewrites application
 * classes as they load): a cashier serves an order through Pricing (a
 * recursive sum), Inventory (a recursive walk over the shelves down to
 * Warehouse.check, which throws OutOfStock) and Payments. The exception is
 * caught at a distance, in Shop.work, five frames up: HQ's summary shows
 * its bubble path, and the top methods by calls and by time.
 */
import io.tadpole.Tadpole;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;

public class Shop {
	static final Logger ORDERS = Logger.getLogger("shop.orders");
	static final Logger PAY = Logger.getLogger("shop.pay");
	static final Logger STOCK = Logger.getLogger("shop.stock");
	static final int ORDERS_TOTAL = 30;
	static final AtomicInteger next = new AtomicInteger();

	static final class OutOfStock extends Exception {
		OutOfStock(int order) {
			super("order " + order + " out of stock");
		}
	}

	public static void main(String[] args) throws Exception {
		for (Logger l : new Logger[] {ORDERS, PAY, STOCK}) {
			l.setUseParentHandlers(false); // keep the console quiet
			l.setLevel(Level.ALL);
		}
		Tadpole.syncLoggers(); // attach the agent's handlers now, not within 100 ms
		Tadpole.marker("shop", "open");
		Thread[] workers = new Thread[3];
		for (int i = 0; i < workers.length; i++) {
			workers[i] = new Thread(new Runnable() {
				public void run() {
					work();
				}
			}, "cashier-" + i);
			workers[i].start();
		}
		for (Thread w : workers) {
			w.join();
		}
		Tadpole.marker("shop", "closed");
		System.out.println("shop: " + ORDERS_TOTAL + " orders, tracing=" + Tadpole.tracing());
	}

	static void work() {
		Cashier c = new Cashier(Thread.currentThread().getName());
		int n;
		while ((n = next.incrementAndGet()) <= ORDERS_TOTAL) {
			try {
				c.serve(n);
			} catch (OutOfStock e) { // thrown by Warehouse.check, five frames down
				STOCK.log(Level.SEVERE, e.getMessage());
			}
		}
	}

	/** A cashier serves one order: price, reserve, pay. */
	static final class Cashier {
		final String name;

		Cashier(String name) {
			this.name = name;
		}

		void serve(int order) throws OutOfStock {
			ORDERS.info("order " + order + " by " + name);
			long cents = Pricing.total(order, 1 + order % 5);
			Inventory.reserve(order, 3);
			Payments.charge(order, cents);
		}
	}

	/** Prices: a recursive sum over an order's items. */
	static final class Pricing {
		static long total(int order, int items) {
			if (items == 0) {
				return 0;
			}
			return item(order, items) + total(order, items - 1);
		}

		static long item(int order, int i) {
			return 100L * ((order * 31 + i * 17) % 50 + 1);
		}
	}

	/** Inventory walks down the shelves to the warehouse. */
	static final class Inventory {
		static void reserve(int order, int shelves) throws OutOfStock {
			if (shelves == 0) {
				Warehouse.check(order);
				return;
			}
			reserve(order, shelves - 1);
		}
	}

	static final class Warehouse {
		static void check(int order) throws OutOfStock {
			if (order % 7 == 0) {
				throw new OutOfStock(order);
			}
		}
	}

	static final class Payments {
		static void charge(int order, long cents) {
			PAY.fine("paid order " + order + ": " + cents + " cents");
			if (order % 4 == 0) {
				PAY.log(Level.WARNING, "order {0} paid late", order);
			}
		}
	}
}
