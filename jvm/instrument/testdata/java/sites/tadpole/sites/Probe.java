package tadpole.sites;

/**
 * Probe helper of the call-site test: method probes do nothing but clear a
 * stale site on bubble; site and siteEnd keep the current call site of the
 * thread, which the log handler reads.
 */
public final class Probe {
    static final ThreadLocal<int[]> SITE = ThreadLocal.withInitial(() -> new int[1]);

    public static void enter(int id) {}

    public static void exit(int id, int line) {}

    public static void thrown(int id, int line) {}

    public static void bubble(int id) { SITE.get()[0] = 0; }

    public static void site(int id) { SITE.get()[0] = id; }

    public static void siteEnd() { SITE.get()[0] = 0; }

    /** current is the call site of the running log call, 0 outside one. */
    public static int current() { return SITE.get()[0]; }
}
