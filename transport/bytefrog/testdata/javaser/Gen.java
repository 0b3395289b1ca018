// Gen writes Java-serialized RuntimeAgentConfigurationV1 streams (the
// Bytefrog protocol v1 Configuration payload, without its i32 length) into
// the directory given as its only argument. The bytefrog package tests read
// the .bin files; java is not needed to run them.
//
// Regenerate from this directory with:
//
//	javac -d /tmp/javaser-classes $(find . -name '*.java') && java -cp /tmp/javaser-classes Gen .
import java.io.ByteArrayOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedList;
import java.util.List;

public class Gen {
	private static String dir;

	public static void main(String[] args) throws IOException {
		dir = args[0];

		// The reference vector: ArrayLists of distinct strings.
		write("arraylist", bf(0, 1000, al(".*"), al("^com/example/[^/]+$"), 25600, 5, 1));
		write("arraylist_empty", bf(-2, 250, al(), al(), 1 << 20, 0, 4));
		write("arraylist_many", bf(127, -1,
				al("^java/", "^javax/", "^sun/", "^com/sun/"),
				al("^com/example/[^/]+$", "^org/acme/app/.*", "^jsp/", "", "[a-z]+\\$[0-9]+"),
				Integer.MAX_VALUE, Integer.MIN_VALUE, 3));
		write("unicode", bf(5, 1000,
				al("caf\u00e9", "\u65e5\u672c\u8a9e/\u30af\u30e9\u30b9", "emoji\ud83d\ude00end"),
				al("nul\u0000inside", "\u00a9\u07ff\u0800\uffff", "\ud800\udc00\udbff\udfff"),
				25600, 5, 1));
		write("lone_surrogate", bf(6, 1000, al("x\ud800y"), al("\udc00"), 25600, 5, 1));
		StringBuilder sb = new StringBuilder();
		for (int i = 0; i < 21846; i++) {
			sb.append('\u65e5'); // 3 bytes each: 65538 encoded bytes, 21846 chars
		}
		write("longstring", bf(7, 1000, al(sb.toString()), al("short"), 25600, 5, 1));
		write("codepulse", cp(3, 2000, al(".*"), al("^com/example/[^/]+$", "^org/example/[^/]+$"),
				50 << 20, 10, 2));

		// Other List classes the HQ side may produce.
		write("linkedlist", bf(8, 1000, ll("^java/", "^sun/"), ll("^com/example/.*"), 25600, 5, 1));
		write("linkedlist_empty", bf(8, 1000, ll(), ll(), 25600, 5, 1));
		write("aslist", bf(9, 1000, Arrays.asList(d("^java/"), d("^sun/")), Arrays.asList(d("^com/example/.*")),
				25600, 5, 1));
		write("aslist_empty", bf(9, 1000, Arrays.asList(new String[0]), Arrays.asList(new String[0]),
				25600, 5, 1));
		String[] shared = { d("^a/"), d("^b/") };
		write("aslist_shared_array", bf(10, 1000, Arrays.asList(shared), Arrays.asList(shared), 25600, 5, 1));
		Object[] objs = { d("^obj/") };
		@SuppressWarnings("unchecked")
		List<String> objList = (List<String>) (List<?>) Arrays.asList(objs);
		write("mixed", bf(11, 1000, ll("^java/"), objList, 25600, 5, 1));
		write("null_lists", bf(12, 1000, null, null, 25600, 5, 1));

		// Back-references: one String object repeated, within and across lists.
		String rep = d("^repeated/");
		List<String> exc = new ArrayList<>(Arrays.asList(rep, d("^other/"), rep));
		List<String> inc = new ArrayList<>(Arrays.asList(rep, "lit", "lit"));
		write("repeated_strings", bf(13, 1000, exc, inc, 25600, 5, 1));
		List<String> same = al("^same/");
		write("same_list", bf(14, 1000, same, same, 25600, 5, 1));

		// Streams a reader must refuse.
		write("bad_listof", bf(15, 1000, List.of("^x/"), al(), 25600, 5, 1));
		write("bad_emptylist", bf(16, 1000, Collections.emptyList(), al(), 25600, 5, 1));
		write("bad_null_element", bf(17, 1000, new ArrayList<>(Arrays.asList(d("a"), null)), al(), 25600, 5, 1));
	}

	// d returns a String object distinct from every other, as an HQ that
	// builds its lists from parsed input has.
	private static String d(String s) {
		return new String(s);
	}

	private static List<String> al(String... xs) {
		List<String> l = new ArrayList<>();
		for (String x : xs) {
			l.add(d(x));
		}
		return l;
	}

	private static List<String> ll(String... xs) {
		List<String> l = new LinkedList<>();
		for (String x : xs) {
			l.add(d(x));
		}
		return l;
	}

	private static com.secdec.bytefrog.common.config.RuntimeAgentConfigurationV1 bf(int runId, int hb,
			List<String> exc, List<String> inc, int budget, int retry, int senders) {
		return new com.secdec.bytefrog.common.config.RuntimeAgentConfigurationV1((byte) runId, hb, exc, inc,
				budget, retry, senders);
	}

	private static com.codedx.codepulse.agent.common.config.RuntimeAgentConfigurationV1 cp(int runId, int hb,
			List<String> exc, List<String> inc, int budget, int retry, int senders) {
		return new com.codedx.codepulse.agent.common.config.RuntimeAgentConfigurationV1((byte) runId, hb, exc,
				inc, budget, retry, senders);
	}

	private static void write(String name, Serializable obj) throws IOException {
		ByteArrayOutputStream bout = new ByteArrayOutputStream();
		try (ObjectOutputStream out = new ObjectOutputStream(bout)) {
			out.writeObject(obj);
		}
		try (FileOutputStream f = new FileOutputStream(dir + "/" + name + ".bin")) {
			f.write(bout.toByteArray());
		}
	}
}
