package jdk.internal.misc;

/**
 * The part of jdk.internal.misc.Unsafe (module java.base, JDK 9+) that
 * io.tadpole.Probe calls, for javac only: {@code --release 8} has no such
 * class. build.sh compiles against this with -implicit:none, so no class
 * file of it is made; at run time the JDK's own class is resolved, its
 * package exported to Probe by the agent (jni/probe.c).
 */
public final class Unsafe {
	private Unsafe() {}

	public static Unsafe getUnsafe() {
		throw new UnsupportedOperationException("compile-time stub");
	}

	public void putLong(long address, long x) {
		throw new UnsupportedOperationException("compile-time stub");
	}
}
