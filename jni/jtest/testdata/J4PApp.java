/*
 * J4PApp: the JVM program of the management endpoint tests. It registers
 * app MBeans in the platform MBean server (a standard MBean and an
 * MXBean, with composite, tabular, array and ObjectName values), prints
 * "J4PApp ready" and then, with "work", allocates a little in a loop (the
 * benchmark's workload) until stdin closes.
 */
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import javax.management.MBeanServer;
import javax.management.ObjectName;

public final class J4PApp {
	public interface ShopMBean {
		int getCount();

		void setCount(int c);

		String getName();

		void setName(String n);

		String[] getTags();

		long[] getPrices();

		double getRatio();

		ObjectName getOwner();

		Map<String, Integer> getStock();

		int price(String item, int qty);

		String echo(String s);

		String echo(String s, int times);

		void reset();

		String sleep(long ms) throws InterruptedException;

		java.util.Date getOpened();

		javax.management.openmbean.TabularData getTable();
	}

	public static final class Shop implements ShopMBean {
		private volatile int count = 3;
		private volatile String name = "main";

		public int getCount() {
			return count;
		}

		public void setCount(int c) {
			count = c;
		}

		public String getName() {
			return name;
		}

		public void setName(String n) {
			name = n;
		}

		public String[] getTags() {
			return new String[] {"fresh", "local"};
		}

		public long[] getPrices() {
			return new long[] {3, 5, 8};
		}

		public double getRatio() {
			return 0.25;
		}

		public ObjectName getOwner() {
			try {
				return new ObjectName("app:type=Owner,name=bob");
			} catch (Exception e) {
				throw new IllegalStateException(e);
			}
		}

		public Map<String, Integer> getStock() {
			Map<String, Integer> m = new TreeMap<String, Integer>();
			m.put("apples", 7);
			m.put("pears", 2);
			return m;
		}

		public int price(String item, int qty) {
			return item.length() * qty;
		}

		public String echo(String s) {
			return s;
		}

		public String echo(String s, int times) {
			StringBuilder b = new StringBuilder();
			for (int i = 0; i < times; i++) {
				b.append(s);
			}
			return b.toString();
		}

		public void reset() {
			count = 0;
		}

		/* Rows indexed by two keys: Jolokia nests them by region, then item. */
		public javax.management.openmbean.TabularData getTable() {
			try {
				javax.management.openmbean.CompositeType row = new javax.management.openmbean.CompositeType("Row", "a row",
						new String[] {"region", "item", "qty"}, new String[] {"region", "item", "quantity"},
						new javax.management.openmbean.OpenType<?>[] {javax.management.openmbean.SimpleType.STRING,
								javax.management.openmbean.SimpleType.STRING, javax.management.openmbean.SimpleType.INTEGER});
				javax.management.openmbean.TabularDataSupport t = new javax.management.openmbean.TabularDataSupport(
						new javax.management.openmbean.TabularType("Table", "stock by region", row, new String[] {"region", "item"}));
				String[][] rows = {{"north", "apples", "4"}, {"north", "pears", "1"}, {"south", "apples", "9"}};
				for (String[] r : rows) {
					t.put(new javax.management.openmbean.CompositeDataSupport(row, new String[] {"region", "item", "qty"},
							new Object[] {r[0], r[1], Integer.valueOf(r[2])}));
				}
				return t;
			} catch (javax.management.openmbean.OpenDataException e) {
				throw new IllegalStateException(e);
			}
		}

		public java.util.Date getOpened() {
			return new java.util.Date(1700000000000L);
		}

		public String sleep(long ms) throws InterruptedException {
			Thread.sleep(ms);
			return "slept";
		}
	}

	public static final class Point {
		private final int x, y;

		@java.beans.ConstructorProperties({"x", "y"})
		public Point(int x, int y) {
			this.x = x;
			this.y = y;
		}

		public int getX() {
			return x;
		}

		public int getY() {
			return y;
		}
	}

	public interface StatsMXBean {
		Point getOrigin();

		void setOrigin(Point p);

		Map<String, Long> getCounters();

		List<String> getNames();

		Point[] getPath();

		Point move(Point p, int dx);
	}

	public static final class Stats implements StatsMXBean {
		private volatile Point origin = new Point(1, 2);

		public Point getOrigin() {
			return origin;
		}

		public void setOrigin(Point p) {
			origin = p;
		}

		public Map<String, Long> getCounters() {
			Map<String, Long> m = new LinkedHashMap<String, Long>();
			m.put("hits", 40L);
			m.put("misses", 2L);
			return m;
		}

		public List<String> getNames() {
			return Arrays.asList("a", "b", "c");
		}

		public Point[] getPath() {
			return new Point[] {new Point(0, 0), new Point(3, 4)};
		}

		public Point move(Point p, int dx) {
			return new Point(p.getX() + dx, p.getY());
		}
	}

	public static void main(String[] args) throws Exception {
		MBeanServer s = ManagementFactory.getPlatformMBeanServer();
		s.registerMBean(new Shop(), new ObjectName("app:type=Shop,name=main"));
		s.registerMBean(new Stats(), new ObjectName("app:type=Stats"));
		System.out.println("J4PApp ready");
		System.out.flush();
		boolean work = args.length > 0 && args[0].equals("work");
		Thread t = null;
		if (work) {
			t = new Thread(new Runnable() {
				public void run() {
					List<byte[]> keep = new ArrayList<byte[]>();
					while (!Thread.currentThread().isInterrupted()) {
						keep.add(new byte[1024]);
						if (keep.size() > 2000) {
							keep.clear();
						}
						try {
							Thread.sleep(1);
						} catch (InterruptedException e) {
							return;
						}
					}
				}
			}, "workload");
			t.setDaemon(true);
			t.start();
		}
		while (System.in.read() >= 0) {
		}
		if (t != null) {
			t.interrupt();
		}
	}
}
