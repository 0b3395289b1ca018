package work;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * Collection-heavy: objects of its own class go through ArrayList, HashMap,
 * TreeMap and a sort, which call back into its hashCode, equals and compareTo
 * (traced), and a stream with a lambda (a synthetic method, traced). The
 * JDK's collection classes themselves are not traced. Deterministic: the
 * same calls every round.
 */
public final class Coll {
	private Coll() {
	}

	static final class Item implements Comparable<Item> {
		private final int key;
		private final int weight;

		Item(int key, int weight) {
			this.key = key;
			this.weight = weight;
		}

		int key() {
			return key;
		}

		int weight() {
			return weight;
		}

		@Override
		public int compareTo(Item o) {
			return Integer.compare(key, o.key);
		}

		@Override
		public int hashCode() {
			return key * 0x9E3779B1;
		}

		@Override
		public boolean equals(Object o) {
			return o instanceof Item && ((Item) o).key == key;
		}
	}

	static int bucket(Item it) {
		return it.key() & 63;
	}

	public static long run(int n) {
		Random r = new Random(42);
		List<Item> list = new ArrayList<>();
		Map<Item, Integer> counts = new HashMap<>();
		for (int i = 0; i < n; i++) {
			Item it = new Item(r.nextInt(n / 2), r.nextInt(100));
			list.add(it);
			counts.merge(it, 1, Integer::sum);
		}
		Collections.sort(list);
		TreeMap<Integer, Long> byBucket = new TreeMap<>();
		long sum = 0;
		for (Item it : list) {
			sum += it.weight();
			byBucket.merge(bucket(it), (long) it.weight(), Long::sum);
		}
		long dup = list.stream().filter(it -> counts.get(it) > 1).count();
		return sum + dup + byBucket.size() + counts.size();
	}
}
