/*
 * JolokiaAgent: the reference Jolokia agent for the side-by-side tests, a
 * -javaagent that serves Debian's jolokia-core 1.7.1 request handler over
 * the JDK's com.sun.net.httpserver, as Jolokia's own JVM agent does (its
 * JVM agent jar is not packaged). Options: port=<n> (0: any; the port is
 * printed as "jolokia <port>" on stderr), threads=<n> (1, the JVM agent's
 * default "single" executor; more: a fixed pool, its executor=fixed),
 * pool=<n>: a second port, printed "jolokia-pool <port>", served by the
 * same handler with a fixed pool of n threads. Loopback only.
 */
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.instrument.Instrumentation;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;

import org.jolokia.backend.BackendManager;
import org.jolokia.config.ConfigKey;
import org.jolokia.config.Configuration;
import org.jolokia.http.HttpRequestHandler;
import org.jolokia.util.LogHandler;
import org.jolokia.util.QuietLogHandler;
import org.json.simple.JSONAware;

public final class JolokiaAgent implements HttpHandler {
	private static final String CONTEXT = "/jolokia";
	private final HttpRequestHandler handler;

	private JolokiaAgent(HttpRequestHandler handler) {
		this.handler = handler;
	}

	public static void premain(String args, Instrumentation inst) throws Exception {
		int port = 0, threads = 1, pool = 0;
		if (args != null) {
			for (String kv : args.split(",")) {
				String[] p = kv.split("=", 2);
				if (p.length == 2 && p[0].equals("port")) {
					port = Integer.parseInt(p[1]);
				} else if (p.length == 2 && p[0].equals("threads")) {
					threads = Integer.parseInt(p[1]);
				} else if (p.length == 2 && p[0].equals("pool")) {
					pool = Integer.parseInt(p[1]);
				}
			}
		}
		// The JVM agent's defaults: maxDepth 15, agent context /jolokia.
		Configuration config = new Configuration(ConfigKey.AGENT_ID, "jolokia-reference", ConfigKey.MAX_DEPTH, "15",
				ConfigKey.AGENT_CONTEXT, CONTEXT, ConfigKey.DISCOVERY_ENABLED, "false");
		LogHandler log = new QuietLogHandler();
		BackendManager backend = new BackendManager(config, log);
		JolokiaAgent agent = new JolokiaAgent(new HttpRequestHandler(config, backend, log));
		System.err.println("jolokia " + serve(agent, port, threads));
		if (pool > 0) {
			System.err.println("jolokia-pool " + serve(agent, 0, pool));
		}
	}

	private static int serve(JolokiaAgent agent, int port, int threads) throws IOException {
		HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 10);
		server.createContext(CONTEXT, agent);
		server.setExecutor(threads <= 1 ? Executors.newSingleThreadExecutor() : Executors.newFixedThreadPool(threads));
		server.start();
		return server.getAddress().getPort();
	}

	@Override
	public void handle(HttpExchange x) throws IOException {
		JSONAware json;
		try {
			URI uri = x.getRequestURI();
			Map<String, String[]> params = query(uri.getRawQuery());
			if ("GET".equals(x.getRequestMethod())) {
				String path = uri.getPath();
				path = path.length() > CONTEXT.length() ? path.substring(CONTEXT.length()) : "";
				json = handler.handleGetRequest(uri.toString(), path, params);
			} else if ("POST".equals(x.getRequestMethod())) {
				InputStream in = x.getRequestBody();
				json = handler.handlePostRequest(uri.toString(), in, "UTF-8", params);
			} else {
				throw new IllegalArgumentException("method " + x.getRequestMethod());
			}
		} catch (Throwable t) {
			json = handler.handleThrowable(t);
		}
		byte[] out = json.toJSONString().getBytes("UTF-8");
		x.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
		x.sendResponseHeaders(200, out.length);
		OutputStream os = x.getResponseBody();
		os.write(out);
		os.close();
	}

	private static Map<String, String[]> query(String q) throws IOException {
		Map<String, List<String>> m = new HashMap<String, List<String>>();
		if (q != null) {
			for (String kv : q.split("&")) {
				if (kv.isEmpty()) {
					continue;
				}
				String[] p = kv.split("=", 2);
				String k = URLDecoder.decode(p[0], "UTF-8");
				String v = p.length > 1 ? URLDecoder.decode(p[1], "UTF-8") : "";
				List<String> l = m.get(k);
				if (l == null) {
					l = new ArrayList<String>();
					m.put(k, l);
				}
				l.add(v);
			}
		}
		Map<String, String[]> out = new HashMap<String, String[]>();
		for (Map.Entry<String, List<String>> e : m.entrySet()) {
			out.put(e.getKey(), e.getValue().toArray(new String[0]));
		}
		return out;
	}
}
