package tadpole.sites;

import java.util.function.Supplier;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Calls java.util.logging.Logger in the shapes a call site can take. The
 * handler prints, for each record, "site=ID msg=MESSAGE" on stdout; each
 * message names the tag that marks its call's source line (TAG-x).
 */
public final class Main {
    static final Logger LOG = Logger.getLogger("sites");

    static final class Print extends Handler {
        @Override
        public void publish(LogRecord r) {
            if ("boom".equals(r.getMessage())) {
                throw new IllegalStateException("boom");
            }
            System.out.println("site=" + Probe.current() + " msg=" + r.getMessage());
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    }

    static void plain() {
        LOG.info("TAG-plain");
    }

    static int loop(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            if (i % 2 == 0) LOG.warning("TAG-loop"); else s += i;
        }
        return s;
    }

    static void twice() {
        LOG.info("TAG-first"); LOG.severe("TAG-second");
    }

    static void disabledThenExplicit() {
        LOG.fine("TAG-disabled");
        LOG.logp(Level.INFO, "Explicit", "source", "TAG-explicit");
    }

    static void supplier() {
        Supplier<String> s = () -> "TAG-supplier";
        LOG.info(s);
    }

    static void throwing() {
        LOG.info("boom");
    }

    static void afterThrow() {
        try {
            throwing();
        } catch (IllegalStateException e) {
            LOG.logp(Level.INFO, "Explicit", "source", "TAG-afterthrow");
        }
    }

    static String ternary(boolean b) {
        LOG.log(Level.INFO, b ? "TAG-ternary" : "TAG-ternary");
        return b ? "y" : "n";
    }

    public static void main(String[] args) {
        LOG.setUseParentHandlers(false);
        LOG.addHandler(new Print());
        LOG.setLevel(Level.INFO);
        plain();
        System.out.println("loop " + loop(5));
        twice();
        disabledThenExplicit();
        supplier();
        afterThrow();
        System.out.println("ternary " + ternary(true));
    }
}
