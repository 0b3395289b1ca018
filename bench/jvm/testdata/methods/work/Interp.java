package work;

/**
 * Call-dense interpreter: a tree-walking evaluator of a tiny expression
 * language with functions, all of whose classes are traced. run(n) evaluates
 * the interpreted program fib(n) + sum(0..n·100) through virtual eval calls,
 * several per interpreted operation.
 */
public final class Interp {
	private Interp() {
	}

	abstract static class Node {
		abstract int eval(Frame f);
	}

	static final class Frame {
		final int[] slots;

		Frame(int n) {
			slots = new int[n];
		}

		int get(int i) {
			return slots[i];
		}

		void set(int i, int v) {
			slots[i] = v;
		}
	}

	static final class Const extends Node {
		final int v;

		Const(int v) {
			this.v = v;
		}

		@Override
		int eval(Frame f) {
			return v;
		}
	}

	static final class Var extends Node {
		final int slot;

		Var(int slot) {
			this.slot = slot;
		}

		@Override
		int eval(Frame f) {
			return f.get(slot);
		}
	}

	static final class Bin extends Node {
		final char op;
		final Node l, r;

		Bin(char op, Node l, Node r) {
			this.op = op;
			this.l = l;
			this.r = r;
		}

		@Override
		int eval(Frame f) {
			int a = l.eval(f), b = r.eval(f);
			switch (op) {
			case '+':
				return a + b;
			case '-':
				return a - b;
			case '<':
				return a < b ? 1 : 0;
			default:
				throw new IllegalStateException("op " + op);
			}
		}
	}

	static final class If extends Node {
		final Node c, t, e;

		If(Node c, Node t, Node e) {
			this.c = c;
			this.t = t;
			this.e = e;
		}

		@Override
		int eval(Frame f) {
			return c.eval(f) != 0 ? t.eval(f) : e.eval(f);
		}
	}

	static final class Assign extends Node {
		final int slot;
		final Node v;

		Assign(int slot, Node v) {
			this.slot = slot;
			this.v = v;
		}

		@Override
		int eval(Frame f) {
			int x = v.eval(f);
			f.set(slot, x);
			return x;
		}
	}

	static final class While extends Node {
		final Node c, body;

		While(Node c, Node body) {
			this.c = c;
			this.body = body;
		}

		@Override
		int eval(Frame f) {
			int last = 0;
			while (c.eval(f) != 0) {
				last = body.eval(f);
			}
			return last;
		}
	}

	static final class Seq extends Node {
		final Node[] body;

		Seq(Node... body) {
			this.body = body;
		}

		@Override
		int eval(Frame f) {
			int last = 0;
			for (Node n : body) {
				last = n.eval(f);
			}
			return last;
		}
	}

	static final class Fn {
		final int slots;
		Node body;

		Fn(int slots) {
			this.slots = slots;
		}

		int call(int arg) {
			Frame f = new Frame(slots);
			f.set(0, arg);
			return body.eval(f);
		}
	}

	static final class Call extends Node {
		final Fn fn;
		final Node arg;

		Call(Fn fn, Node arg) {
			this.fn = fn;
			this.arg = arg;
		}

		@Override
		int eval(Frame f) {
			return fn.call(arg.eval(f));
		}
	}

	static Node fibProgram(Fn fib) {
		// fib(n) = n < 2 ? n : fib(n-1) + fib(n-2)
		Node n = new Var(0);
		return new If(new Bin('<', n, new Const(2)), n,
				new Bin('+', new Call(fib, new Bin('-', n, new Const(1))), new Call(fib, new Bin('-', n, new Const(2)))));
	}

	static Node sumProgram() {
		// i = 0; s = 0; while (i < n) { s = s + i; i = i + 1 }; s
		return new Seq(new Assign(1, new Const(0)), new Assign(2, new Const(0)),
				new While(new Bin('<', new Var(1), new Var(0)),
						new Seq(new Assign(2, new Bin('+', new Var(2), new Var(1))),
								new Assign(1, new Bin('+', new Var(1), new Const(1))))),
				new Var(2));
	}

	public static long run(int n) {
		Fn fib = new Fn(1);
		fib.body = fibProgram(fib);
		Fn sum = new Fn(3);
		sum.body = sumProgram();
		return fib.call(n) + (long) sum.call(n * 100);
	}
}
