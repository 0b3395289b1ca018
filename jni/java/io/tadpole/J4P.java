/*
 * J4P: the JVM's platform MBean server as tadpole's management endpoint
 * (j4p=) sees it. The agent's Go side calls call() from its own attached
 * daemon threads ("tadpole-j4p-N"), one JNI crossing per MBean server
 * operation: the request and the answer are byte arrays in a small
 * tag-length-value encoding (jni/j4pwire.go), and values are converted as
 * Jolokia converts them (CompositeData and maps to objects, TabularData to
 * objects keyed by index, arrays and collections to lists, ObjectName to
 * {"objectName": …}, other objects to their bean properties). Nothing here
 * runs unless a client asks; ManagementFactory is first touched then.
 */
package io.tadpole;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.Charset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Date;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import javax.management.Attribute;
import javax.management.AttributeNotFoundException;
import javax.management.Descriptor;
import javax.management.InstanceNotFoundException;
import javax.management.InvalidAttributeValueException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanException;
import javax.management.MBeanInfo;
import javax.management.MBeanOperationInfo;
import javax.management.MBeanParameterInfo;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;
import javax.management.ReflectionException;
import javax.management.RuntimeErrorException;
import javax.management.RuntimeMBeanException;
import javax.management.RuntimeOperationsException;
import javax.management.openmbean.ArrayType;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.CompositeDataSupport;
import javax.management.openmbean.CompositeType;
import javax.management.openmbean.OpenDataException;
import javax.management.openmbean.OpenType;
import javax.management.openmbean.SimpleType;
import javax.management.openmbean.TabularData;
import javax.management.openmbean.TabularDataSupport;
import javax.management.openmbean.TabularType;

final class J4P {
	/* Operations (first byte of a request). */
	static final int OP_GET = 1, OP_SET = 2, OP_INVOKE = 3, OP_QUERY = 4, OP_INFO = 5, OP_GETALL = 6;

	/* Value tags. */
	static final byte T_NULL = 'N', T_TRUE = 'T', T_FALSE = 'F', T_LONG = 'I', T_DOUBLE = 'D', T_STRING = 'S',
			T_LIST = 'L', T_MAP = 'M', T_NUMBER = 'B', T_ERROR = 'E', T_OK = 'K', T_ATTR_ERROR = 'X';

	/* Error kinds, as the Go side maps them to j4p's errors. */
	static final int E_OTHER = 0, E_INSTANCE = 1, E_ATTRIBUTE = 2, E_OPERATION = 3, E_ARGUMENT = 4,
			E_UNSUPPORTED = 5;

	/* Bounds of one converted value: nesting (cycles end there), objects
	 * and bytes. The Go side applies the request's own, lower limits. */
	static final int MAX_DEPTH = 24, MAX_OBJECTS = 200000, MAX_BYTES = 16 << 20;

	private static final Charset UTF8 = Charset.forName("UTF-8");
	private static volatile MBeanServer server;

	private J4P(byte[] req) {
		rb = req;
	}

	private static MBeanServer server() {
		MBeanServer s = server;
		if (s == null) {
			synchronized (J4P.class) {
				if (server == null) {
					server = ManagementFactory.getPlatformMBeanServer();
				}
				s = server;
			}
		}
		return s;
	}

	/* call runs one encoded request and returns the encoded answer: T_OK
	 * and a value, or T_ERROR, kind, exception class and message. It never
	 * throws. */
	static byte[] call(byte[] req) {
		J4P o = new J4P(req);
		try {
			int op = o.u8();
			o.tag(T_OK);
			switch (op) {
			case OP_GET:
				get(o);
				break;
			case OP_SET:
				set(o);
				break;
			case OP_INVOKE:
				invoke(o);
				break;
			case OP_QUERY:
				query(o);
				break;
			case OP_INFO:
				info(o);
				break;
			case OP_GETALL:
				getAll(o);
				break;
			default:
				throw new IllegalArgumentException("unknown operation " + op);
			}
		} catch (Throwable t) {
			o.len = 0;
			o.seen = null;
			error(o, t);
		}
		return o.bytes();
	}

	/* Names parsed recently (a client reads the same few again and again). */
	private static final java.util.concurrent.ConcurrentHashMap<String, ObjectName> NAMES = new java.util.concurrent.ConcurrentHashMap<String, ObjectName>();

	private static ObjectName name(String s) throws MalformedObjectNameException {
		ObjectName n = NAMES.get(s);
		if (n == null) {
			n = ObjectName.getInstance(s);
			if (NAMES.size() >= 1024) {
				NAMES.clear();
			}
			NAMES.put(s, n);
		}
		return n;
	}

	private static void get(J4P o) throws Exception {
		ObjectName n = name(o.str());
		String attr = o.str();
		Object v = server().getAttribute(n, attr);
		o.value(v, 0);
	}

	/* iso8601 writes a date as Jolokia does: yyyy-MM-ddTHH:mm:ss and the
	 * JVM's time zone offset (+hh:mm, Z for UTC). */
	static String iso8601(Date d) {
		return new java.text.SimpleDateFormat("yyyy-MM-dd'T'HH:mm:ssXXX").format(d);
	}

	/* getAll reads several attributes (every readable one when none is
	 * named): an object of name to value, or to T_ATTR_ERROR for an
	 * attribute that failed. */
	private static void getAll(J4P o) throws Exception {
		ObjectName n = name(o.str());
		int count = o.count();
		String[] names = new String[count];
		for (int i = 0; i < count; i++) {
			names[i] = o.str();
		}
		MBeanServer s = server();
		if (count == 0) {
			ArrayList<String> all = new ArrayList<String>();
			for (MBeanAttributeInfo a : s.getMBeanInfo(n).getAttributes()) {
				if (a.isReadable()) {
					all.add(a.getName());
				}
			}
			names = all.toArray(new String[0]);
		} else if (!s.isRegistered(n)) {
			throw new InstanceNotFoundException(n.toString());
		}
		o.tag(T_MAP);
		o.count(names.length);
		for (String a : names) {
			o.str(a);
			int mark = o.len;
			try {
				o.value(s.getAttribute(n, a), 1);
			} catch (InstanceNotFoundException e) {
				throw e;
			} catch (Throwable t) {
				o.len = mark;
				o.seen = null;
				error(o, t);
				o.b[mark] = T_ATTR_ERROR;
			}
		}
	}

	private static void set(J4P o) throws Exception {
		ObjectName n = name(o.str());
		String attr = o.str();
		Object raw = o.value();
		MBeanServer s = server();
		MBeanAttributeInfo ai = null;
		for (MBeanAttributeInfo a : s.getMBeanInfo(n).getAttributes()) {
			if (a.getName().equals(attr)) {
				ai = a;
				break;
			}
		}
		if (ai == null) {
			throw new AttributeNotFoundException("No such attribute: " + attr);
		}
		s.setAttribute(n, new Attribute(attr, toJava(raw, ai.getType(), openType(ai.getDescriptor()))));
		o.tag(T_NULL);
	}

	private static void invoke(J4P o) throws Exception {
		ObjectName n = name(o.str());
		String op = o.str();
		int count = o.count();
		String[] sig = new String[count];
		Object[] args = new Object[count];
		for (int i = 0; i < count; i++) {
			sig[i] = o.str();
		}
		for (int i = 0; i < count; i++) {
			args[i] = o.value();
		}
		MBeanServer s = server();
		MBeanParameterInfo[] params = null;
		for (MBeanOperationInfo oi : s.getMBeanInfo(n).getOperations()) {
			MBeanParameterInfo[] p = oi.getSignature();
			if (oi.getName().equals(op) && p.length == count) {
				boolean same = true;
				for (int i = 0; i < count && same; i++) {
					same = p[i].getType().equals(sig[i]);
				}
				if (same) {
					params = p;
					break;
				}
			}
		}
		for (int i = 0; i < count; i++) {
			args[i] = toJava(args[i], sig[i], params == null ? null : openType(params[i].getDescriptor()));
		}
		Object v = s.invoke(n, op, args, sig);
		o.value(v, 0);
	}

	private static void query(J4P o) throws Exception {
		String p = o.str();
		Set<ObjectName> names = server().queryNames(p.length() == 0 ? null : name(p), null);
		TreeSet<String> sorted = new TreeSet<String>();
		Map<String, ObjectName> byCanon = new java.util.HashMap<String, ObjectName>();
		for (ObjectName n : names) {
			sorted.add(n.getCanonicalName());
			byCanon.put(n.getCanonicalName(), n);
		}
		o.tag(T_LIST);
		o.count(sorted.size());
		for (String c : sorted) {
			ObjectName n = byCanon.get(c);
			o.string(n.getDomain() + ":" + n.getKeyPropertyListString());
		}
	}

	/* info: class, description, attributes (name, type, description,
	 * readable, writable), operations (name, return type, description,
	 * arguments: name, type, description). */
	private static void info(J4P o) throws Exception {
		MBeanInfo mi = server().getMBeanInfo(name(o.str()));
		o.tag(T_LIST);
		o.count(4);
		o.string(mi.getClassName());
		o.string(mi.getDescription());
		MBeanAttributeInfo[] as = mi.getAttributes();
		o.tag(T_LIST);
		o.count(as.length);
		for (MBeanAttributeInfo a : as) {
			o.tag(T_LIST);
			o.count(5);
			o.string(a.getName());
			o.string(a.getType());
			o.string(a.getDescription());
			o.bool(a.isReadable());
			o.bool(a.isWritable());
		}
		MBeanOperationInfo[] ops = mi.getOperations();
		o.tag(T_LIST);
		o.count(ops.length);
		for (MBeanOperationInfo op : ops) {
			o.tag(T_LIST);
			o.count(4);
			o.string(op.getName());
			o.string(op.getReturnType());
			o.string(op.getDescription());
			MBeanParameterInfo[] ps = op.getSignature();
			o.tag(T_LIST);
			o.count(ps.length);
			for (MBeanParameterInfo p : ps) {
				o.tag(T_LIST);
				o.count(3);
				o.string(p.getName());
				o.string(p.getType());
				o.string(p.getDescription());
			}
		}
	}

	/* error encodes t: the exception a JMX wrapper carries is the one
	 * reported, as Jolokia does. */
	private static void error(J4P o, Throwable t) {
		int kind = E_OTHER;
		for (int i = 0; i < 8; i++) {
			Throwable c = null;
			if (t instanceof RuntimeMBeanException || t instanceof RuntimeErrorException
					|| t instanceof RuntimeOperationsException) {
				c = t.getCause();
			} else if (t instanceof MBeanException) {
				c = ((MBeanException) t).getTargetException();
			} else if (t instanceof ReflectionException) {
				c = ((ReflectionException) t).getTargetException();
			}
			if (c == null || c == t) {
				break;
			}
			if (t instanceof ReflectionException && c instanceof NoSuchMethodException) {
				kind = E_OPERATION;
			}
			t = c;
		}
		if (t instanceof InstanceNotFoundException) {
			kind = E_INSTANCE;
		} else if (t instanceof AttributeNotFoundException) {
			kind = E_ATTRIBUTE;
		} else if (t instanceof NoSuchMethodException) {
			kind = E_OPERATION;
		} else if (t instanceof IllegalArgumentException || t instanceof InvalidAttributeValueException
				|| t instanceof OpenDataException || t instanceof MalformedObjectNameException
				|| t instanceof ClassCastException) {
			kind = E_ARGUMENT;
		} else if (t instanceof UnsupportedOperationException) {
			kind = E_UNSUPPORTED;
		}
		o.tag(T_ERROR);
		o.count(kind);
		o.str(t.getClass().getName());
		String m = t.getMessage();
		o.str(m == null ? "" : m);
	}

	/* openType is the open type an MXBean's descriptor names, or null. */
	private static OpenType<?> openType(Descriptor d) {
		if (d == null) {
			return null;
		}
		Object t = d.getFieldValue("openType");
		return t instanceof OpenType ? (OpenType<?>) t : null;
	}

	/* toJava converts a decoded request value (null, Boolean, Long,
	 * Double, String, List, Map) to the declared type. */
	static Object toJava(Object v, String type, OpenType<?> ot) throws Exception {
		if (v == null) {
			if (type != null && isPrimitive(type)) {
				throw new IllegalArgumentException("null for primitive " + type);
			}
			return null;
		}
		if (ot instanceof CompositeType) {
			return toComposite(v, (CompositeType) ot);
		}
		if (ot instanceof TabularType) {
			return toTabular(v, (TabularType) ot);
		}
		if (ot instanceof ArrayType) {
			ArrayType<?> at = (ArrayType<?>) ot;
			return toArray(v, Class.forName(at.getClassName()).getComponentType().getName(),
					at.getDimension() == 1 ? at.getElementOpenType() : null);
		}
		if (ot instanceof SimpleType) {
			type = ot.getClassName();
		}
		if (type == null) {
			return v;
		}
		if (type.startsWith("[")) {
			Class<?> c = Class.forName(type);
			return toArray(v, c.getComponentType().getName(), null);
		}
		String s = v instanceof String ? (String) v : null;
		if ("java.lang.String".equals(type)) {
			return String.valueOf(v);
		} else if ("int".equals(type) || "java.lang.Integer".equals(type)) {
			return Integer.valueOf(s != null ? Integer.parseInt(s.trim()) : num(v).intValue());
		} else if ("long".equals(type) || "java.lang.Long".equals(type)) {
			return Long.valueOf(s != null ? Long.parseLong(s.trim()) : num(v).longValue());
		} else if ("short".equals(type) || "java.lang.Short".equals(type)) {
			return Short.valueOf(s != null ? Short.parseShort(s.trim()) : num(v).shortValue());
		} else if ("byte".equals(type) || "java.lang.Byte".equals(type)) {
			return Byte.valueOf(s != null ? Byte.parseByte(s.trim()) : num(v).byteValue());
		} else if ("double".equals(type) || "java.lang.Double".equals(type)) {
			return Double.valueOf(s != null ? Double.parseDouble(s.trim()) : num(v).doubleValue());
		} else if ("float".equals(type) || "java.lang.Float".equals(type)) {
			return Float.valueOf(s != null ? Float.parseFloat(s.trim()) : num(v).floatValue());
		} else if ("boolean".equals(type) || "java.lang.Boolean".equals(type)) {
			if (v instanceof Boolean) {
				return v;
			}
			return Boolean.valueOf(String.valueOf(v).trim());
		} else if ("char".equals(type) || "java.lang.Character".equals(type)) {
			String c = String.valueOf(v);
			if (c.length() != 1) {
				throw new IllegalArgumentException("want one character for " + type);
			}
			return Character.valueOf(c.charAt(0));
		} else if ("javax.management.ObjectName".equals(type)) {
			if (v instanceof Map) {
				v = ((Map<?, ?>) v).get("objectName");
			}
			return new ObjectName(String.valueOf(v));
		} else if ("java.math.BigDecimal".equals(type)) {
			return new BigDecimal(String.valueOf(v));
		} else if ("java.math.BigInteger".equals(type)) {
			return new BigInteger(String.valueOf(v));
		} else if ("java.util.Date".equals(type)) {
			if (s != null && s.indexOf('T') > 0) {
				return new java.text.SimpleDateFormat("yyyy-MM-dd'T'HH:mm:ssXXX").parse(s.trim());
			}
			return new Date(s != null ? Long.parseLong(s.trim()) : num(v).longValue());
		} else if ("java.lang.Object".equals(type)) {
			return v;
		}
		throw new IllegalArgumentException("cannot convert a value to " + type);
	}

	private static boolean isPrimitive(String t) {
		return "int".equals(t) || "long".equals(t) || "boolean".equals(t) || "double".equals(t) || "float".equals(t)
				|| "short".equals(t) || "byte".equals(t) || "char".equals(t);
	}

	private static Number num(Object v) {
		if (v instanceof Number) {
			return (Number) v;
		}
		throw new IllegalArgumentException("want a number, not " + v.getClass().getSimpleName());
	}

	private static Object toArray(Object v, String elem, OpenType<?> eot) throws Exception {
		List<?> items;
		if (v instanceof List) {
			items = (List<?>) v;
		} else if (v instanceof String) {
			items = Arrays.asList(((String) v).split(","));
		} else {
			throw new IllegalArgumentException("want a list for an array of " + elem);
		}
		Class<?> c = primitive(elem);
		if (c == null) {
			c = Class.forName(elem);
		}
		Object a = Array.newInstance(c, items.size());
		for (int i = 0; i < items.size(); i++) {
			Array.set(a, i, toJava(items.get(i), elem, eot));
		}
		return a;
	}

	private static Class<?> primitive(String t) {
		if ("int".equals(t)) {
			return int.class;
		} else if ("long".equals(t)) {
			return long.class;
		} else if ("boolean".equals(t)) {
			return boolean.class;
		} else if ("double".equals(t)) {
			return double.class;
		} else if ("float".equals(t)) {
			return float.class;
		} else if ("short".equals(t)) {
			return short.class;
		} else if ("byte".equals(t)) {
			return byte.class;
		} else if ("char".equals(t)) {
			return char.class;
		}
		return null;
	}

	private static CompositeData toComposite(Object v, CompositeType ct) throws Exception {
		if (!(v instanceof Map)) {
			throw new IllegalArgumentException("want an object for " + ct.getTypeName());
		}
		Map<?, ?> m = (Map<?, ?>) v;
		Set<String> keys = ct.keySet();
		String[] names = keys.toArray(new String[0]);
		Object[] vals = new Object[names.length];
		for (Object k : m.keySet()) {
			if (!keys.contains(k)) {
				throw new IllegalArgumentException("no item " + k + " in " + ct.getTypeName());
			}
		}
		for (int i = 0; i < names.length; i++) {
			OpenType<?> t = ct.getType(names[i]);
			vals[i] = toJava(m.get(names[i]), t.getClassName(), t);
		}
		return new CompositeDataSupport(ct, names, vals);
	}

	private static TabularData toTabular(Object v, TabularType tt) throws Exception {
		TabularDataSupport td = new TabularDataSupport(tt);
		CompositeType rt = tt.getRowType();
		if (v instanceof List) {
			for (Object row : (List<?>) v) {
				td.put(toComposite(row, rt));
			}
			return td;
		}
		if (!(v instanceof Map)) {
			throw new IllegalArgumentException("want an object for " + tt.getTypeName());
		}
		List<String> idx = tt.getIndexNames();
		if (rt.keySet().size() == 2 && rt.containsKey("key") && rt.containsKey("value") && idx.size() == 1
				&& "key".equals(idx.get(0))) {
			// An MXBean map: {key: value}.
			for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
				Map<String, Object> row = new java.util.HashMap<String, Object>();
				row.put("key", e.getKey());
				row.put("value", e.getValue());
				td.put(toComposite(row, rt));
			}
			return td;
		}
		for (Object row : ((Map<?, ?>) v).values()) {
			td.put(toComposite(row, rt));
		}
		return td;
	}

	/* Conversion state: values are written as Jolokia serializes them. */
	/* Containers being written that can hold themselves (beans,
	 * collections, maps, object arrays), made on first need. */
	private IdentityHashMap<Object, Boolean> seen;
	private int objects;

	void value(Object v, int depth) throws Exception {
		if (len > MAX_BYTES) {
			throw new IllegalStateException("value over " + MAX_BYTES + " bytes");
		}
		if (v == null) {
			tag(T_NULL);
		} else if (v instanceof String) {
			string((String) v);
		} else if (v instanceof Boolean) {
			bool(((Boolean) v).booleanValue());
		} else if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte
				|| v instanceof AtomicInteger || v instanceof AtomicLong) {
			tag(T_LONG);
			i64(((Number) v).longValue());
		} else if (v instanceof Double || v instanceof Float) {
			double d = ((Number) v).doubleValue();
			if (Double.isNaN(d) || Double.isInfinite(d)) {
				string(String.valueOf(d));
			} else {
				tag(T_DOUBLE);
				i64(Double.doubleToRawLongBits(d));
			}
		} else if (v instanceof BigInteger || v instanceof BigDecimal) {
			tag(T_NUMBER);
			str(v.toString());
		} else if (v instanceof Character || v instanceof Enum || v instanceof Class) {
			string(v instanceof Enum ? ((Enum<?>) v).name()
					: v instanceof Class ? ((Class<?>) v).getName() : v.toString());
		} else if (v instanceof ObjectName) {
			tag(T_MAP);
			count(1);
			str("objectName");
			string(((ObjectName) v).getCanonicalName());
		} else if (depth >= MAX_DEPTH || ++objects > MAX_OBJECTS) {
			string(depth >= MAX_DEPTH ? "[Depth limit " + v.getClass().getName() + "]"
					: "[Object limit exceeded]");
		} else if (v instanceof CompositeData || v instanceof TabularData
				|| v.getClass().isArray() && v.getClass().getComponentType().isPrimitive()) {
			container(v, depth); // open data and primitive arrays cannot hold themselves
		} else if (seen != null && seen.containsKey(v)) {
			string("[Reference " + v.getClass().getName() + "@" + Integer.toHexString(System.identityHashCode(v))
					+ "]");
		} else {
			if (seen == null) {
				seen = new IdentityHashMap<Object, Boolean>();
			}
			seen.put(v, Boolean.TRUE);
			try {
				container(v, depth);
			} finally {
				seen.remove(v);
			}
		}
	}

	private void container(Object v, int depth) throws Exception {
		if (v instanceof CompositeData) {
			CompositeData cd = (CompositeData) v;
			Set<String> keys = cd.getCompositeType().keySet();
			tag(T_MAP);
			count(keys.size());
			for (String k : keys) {
				str(k);
				value(cd.get(k), depth + 1);
			}
		} else if (v instanceof TabularData) {
			tabular((TabularData) v, depth);
		} else if (v.getClass().isArray()) {
			int n = Array.getLength(v);
			tag(T_LIST);
			count(n);
			for (int i = 0; i < n; i++) {
				value(Array.get(v, i), depth + 1);
			}
		} else if (v instanceof Collection) {
			Collection<?> c = (Collection<?>) v;
			Object[] items = c.toArray();
			tag(T_LIST);
			count(items.length);
			for (Object e : items) {
				value(e, depth + 1);
			}
		} else if (v instanceof Map) {
			Object[] es = ((Map<?, ?>) v).entrySet().toArray();
			tag(T_MAP);
			count(es.length);
			for (Object e : es) {
				Map.Entry<?, ?> me = (Map.Entry<?, ?>) e;
				str(String.valueOf(me.getKey()));
				value(me.getValue(), depth + 1);
			}
		} else if (v instanceof Date) {
			string(iso8601((Date) v));
		} else {
			bean(v, depth);
		}
	}

	/* tabular: an MXBean map (rows of key and value, keyed by key) is
	 * {key: value}; rows indexed by simple values are objects nested by
	 * index value; other rows are {"indexNames": […], "values": […]}. */
	private void tabular(TabularData td, int depth) throws Exception {
		TabularType tt = td.getTabularType();
		CompositeType rt = tt.getRowType();
		List<String> idx = tt.getIndexNames();
		boolean simple = true;
		for (String i : idx) {
			simple &= rt.getType(i) instanceof SimpleType;
		}
		Collection<?> rows = td.values();
		if (simple && idx.size() == 1 && "key".equals(idx.get(0)) && rt.keySet().size() == 2
				&& rt.containsKey("value")) {
			tag(T_MAP);
			count(rows.size());
			for (Object r : rows) {
				CompositeData cd = (CompositeData) r;
				str(String.valueOf(cd.get("key")));
				value(cd.get("value"), depth + 1);
			}
			return;
		}
		if (!simple) {
			tag(T_MAP);
			count(2);
			str("indexNames");
			tag(T_LIST);
			count(idx.size());
			for (String i : idx) {
				string(i);
			}
			str("values");
			tag(T_LIST);
			count(rows.size());
			for (Object r : rows) {
				value(r, depth + 1);
			}
			return;
		}
		// Nested by index values: build the tree first.
		Map<String, Object> tree = new java.util.LinkedHashMap<String, Object>();
		for (Object r : rows) {
			CompositeData cd = (CompositeData) r;
			Map<String, Object> m = tree;
			for (int i = 0; i < idx.size() - 1; i++) {
				String k = String.valueOf(cd.get(idx.get(i)));
				@SuppressWarnings("unchecked")
				Map<String, Object> next = (Map<String, Object>) m.get(k);
				if (next == null) {
					next = new java.util.LinkedHashMap<String, Object>();
					m.put(k, next);
				}
				m = next;
			}
			m.put(String.valueOf(cd.get(idx.get(idx.size() - 1))), cd);
		}
		nested(tree, depth, idx.size());
	}

	private void nested(Map<String, Object> m, int depth, int levels) throws Exception {
		tag(T_MAP);
		count(m.size());
		for (Map.Entry<String, Object> e : m.entrySet()) {
			str(e.getKey());
			if (levels > 1) {
				@SuppressWarnings("unchecked")
				Map<String, Object> sub = (Map<String, Object>) e.getValue();
				nested(sub, depth + 1, levels - 1);
			} else {
				value(e.getValue(), depth + 1);
			}
		}
	}

	/* bean writes the public getters of an object, or its string form
	 * when it has none. */
	private void bean(Object v, int depth) throws Exception {
		ArrayList<String> names = new ArrayList<String>();
		ArrayList<Method> getters = new ArrayList<Method>();
		for (Method m : v.getClass().getMethods()) {
			String n = m.getName();
			if (m.getParameterTypes().length != 0 || Modifier.isStatic(m.getModifiers())
					|| m.getReturnType() == void.class || n.equals("getClass")) {
				continue;
			}
			String prop = null;
			if (n.startsWith("get") && n.length() > 3) {
				prop = n.substring(3);
			} else if (n.startsWith("is") && n.length() > 2 && m.getReturnType() == boolean.class) {
				prop = n.substring(2);
			}
			if (prop == null) {
				continue;
			}
			names.add(Character.toLowerCase(prop.charAt(0)) + prop.substring(1));
			getters.add(m);
		}
		if (getters.isEmpty()) {
			string(v.toString());
			return;
		}
		tag(T_MAP);
		count(getters.size());
		Iterator<Method> it = getters.iterator();
		for (String n : names) {
			Method m = it.next();
			str(n);
			Object r;
			try {
				m.setAccessible(true);
				r = m.invoke(v);
			} catch (Throwable t) {
				string("[Error " + t.getClass().getName() + "]");
				continue;
			}
			if (r == v) {
				string("[this]");
			} else {
				value(r, depth + 1);
			}
		}
	}

	/* The answer: a growing byte buffer. Counts and lengths are unsigned
	 * varints; strings are UTF-8. */
	private byte[] b = new byte[256];
	private int len;

	private void room(int n) {
		if (len + n > b.length) {
			b = Arrays.copyOf(b, Math.max(b.length * 2, len + n));
		}
	}

	void tag(byte t) {
		room(1);
		b[len++] = t;
	}

	void bool(boolean v) {
		tag(v ? T_TRUE : T_FALSE);
	}

	void count(int n) {
		room(5);
		while ((n & ~0x7F) != 0) {
			b[len++] = (byte) ((n & 0x7F) | 0x80);
			n >>>= 7;
		}
		b[len++] = (byte) n;
	}

	void i64(long v) {
		room(8);
		for (int i = 7; i >= 0; i--) {
			b[len++] = (byte) (v >>> (i * 8));
		}
	}

	/* str writes a length-prefixed string (no tag). */
	void str(String s) {
		if (s == null) {
			s = "";
		}
		int n = s.length();
		boolean ascii = true;
		for (int i = 0; i < n && ascii; i++) {
			ascii = s.charAt(i) < 0x80;
		}
		if (ascii) {
			count(n);
			room(n);
			for (int i = 0; i < n; i++) {
				b[len++] = (byte) s.charAt(i);
			}
			return;
		}
		byte[] u = s.getBytes(UTF8);
		count(u.length);
		room(u.length);
		System.arraycopy(u, 0, b, len, u.length);
		len += u.length;
	}

	/* string writes a string value (tagged); null is T_NULL. */
	void string(String s) {
		if (s == null) {
			tag(T_NULL);
			return;
		}
		tag(T_STRING);
		str(s);
	}

	byte[] bytes() {
		return Arrays.copyOf(b, len);
	}

	/* The request being read. */
	private byte[] rb;
	private int p;

	int u8() {
		if (p >= rb.length) {
			throw new IllegalArgumentException("truncated request");
		}
		return rb[p++] & 0xFF;
	}

	int count() {
		int n = 0;
		for (int shift = 0; shift < 32; shift += 7) {
			int c = u8();
			n |= (c & 0x7F) << shift;
			if ((c & 0x80) == 0) {
				if (n < 0 || n > rb.length) {
					throw new IllegalArgumentException("bad length in request");
				}
				return n;
			}
		}
		throw new IllegalArgumentException("bad length in request");
	}

	long i64() {
		long v = 0;
		for (int i = 0; i < 8; i++) {
			v = v << 8 | u8();
		}
		return v;
	}

	String str() {
		int n = count();
		if (p + n > rb.length) {
			throw new IllegalArgumentException("truncated request");
		}
		String s = new String(rb, p, n, UTF8);
		p += n;
		return s;
	}

	Object value() {
		int t = u8();
		switch (t) {
		case T_NULL:
			return null;
		case T_TRUE:
			return Boolean.TRUE;
		case T_FALSE:
			return Boolean.FALSE;
		case T_LONG:
			return Long.valueOf(i64());
		case T_DOUBLE:
			return Double.valueOf(Double.longBitsToDouble(i64()));
		case T_STRING:
		case T_NUMBER:
			return str();
		case T_LIST: {
			int n = count();
			ArrayList<Object> l = new ArrayList<Object>(n);
			for (int i = 0; i < n; i++) {
				l.add(value());
			}
			return l;
		}
		case T_MAP: {
			int n = count();
			java.util.LinkedHashMap<String, Object> m = new java.util.LinkedHashMap<String, Object>();
			for (int i = 0; i < n; i++) {
				String k = str();
				m.put(k, value());
			}
			return m;
		}
		default:
			throw new IllegalArgumentException("bad value tag " + t);
		}
	}
}
