package jvm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The source tree the javac workload compiles: this repository's own Java
// sources (the agent's helper classes, the Java example, this benchmark's
// workloads) and a generated tree of genPackages × genClasses classes (about 210 lines each) that
// use what javac spends its time on in real code: generics and inference,
// lambdas and streams, inner and anonymous classes, enums, records,
// interfaces with default methods, switch expressions, string
// concatenation, overloads and cross-package references. It is generated
// (deterministically) so that the benchmark needs nothing from the network.
const (
	genPackages = 3
	genClasses  = 2
	genMethods  = 4
)

// repoJava lists the repository's Java sources the tree includes, relative
// to the repository root.
var repoJava = []string{
	"jni/java/io/tadpole/JulHandler.java",
	"jni/java/io/tadpole/JulSync.java",
	"jni/java/io/tadpole/Tadpole.java",
	"examples/java/Shop.java",
	"bench/jvm/testdata/methods/MethodBench.java",
	"bench/jvm/testdata/methods/work/Fib.java",
	"bench/jvm/testdata/methods/work/Coll.java",
	"bench/jvm/testdata/methods/work/Interp.java",
}

// writeJavacTree writes the tree under dir, the repository's files (from
// root) copied and the generated ones, and returns its source files.
func writeJavacTree(root, dir string) ([]string, error) {
	var files []string
	for _, f := range repoJava {
		// Copied, so that the tree stays the same while the JVMs run.
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return nil, err
		}
		dst := filepath.Join(dir, "repo", f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return nil, err
		}
		files = append(files, dst)
	}
	for p := range genPackages {
		pkg := fmt.Sprintf("gen.p%02d", p)
		pdir := filepath.Join(dir, "gen", fmt.Sprintf("p%02d", p))
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			return nil, err
		}
		for c := range genClasses {
			name := fmt.Sprintf("C%02d", c)
			f := filepath.Join(pdir, name+".java")
			if err := os.WriteFile(f, []byte(genClass(pkg, p, c)), 0o644); err != nil {
				return nil, err
			}
			files = append(files, f)
		}
	}
	return files, nil
}

// genClass returns the source of class C<c> of package p: it refers to the
// class of the same name in the package before it, so that javac resolves
// across packages.
func genClass(pkg string, p, c int) string {
	var b strings.Builder
	name := fmt.Sprintf("C%02d", c)
	fmt.Fprintf(&b, "package %s;\n\n", pkg)
	b.WriteString("import java.util.*;\nimport java.util.function.*;\nimport java.util.stream.*;\n\n")
	fmt.Fprintf(&b, "public class %s<T extends Comparable<T>> implements Iterable<T> {\n", name)
	b.WriteString("\tpublic enum Kind { ALPHA, BETA, GAMMA, DELTA }\n\n")
	b.WriteString("\tpublic record Pair<A, B>(A first, B second) {\n\t\tpublic Pair {\n\t\t\tObjects.requireNonNull(first);\n\t\t}\n\t}\n\n")
	b.WriteString("\tpublic interface Visitor<R> {\n\t\tR visit(Object o);\n\n\t\tdefault R visitAll(List<?> l) {\n\t\t\tR last = null;\n\t\t\tfor (Object o : l) {\n\t\t\t\tlast = visit(o);\n\t\t\t}\n\t\t\treturn last;\n\t\t}\n\t}\n\n")
	b.WriteString("\tprivate final List<T> items = new ArrayList<>();\n\tprivate final Map<String, List<T>> index = new HashMap<>();\n\tprivate int version;\n\n")
	b.WriteString("\t@Override\n\tpublic Iterator<T> iterator() {\n\t\treturn new Iterator<T>() {\n\t\t\tint i;\n\n\t\t\t@Override\n\t\t\tpublic boolean hasNext() {\n\t\t\t\treturn i < items.size();\n\t\t\t}\n\n\t\t\t@Override\n\t\t\tpublic T next() {\n\t\t\t\treturn items.get(i++);\n\t\t\t}\n\t\t};\n\t}\n\n")
	for m := range genMethods {
		fmt.Fprintf(&b, "\tpublic <K extends Comparable<K>> Map<K, List<T>> group%d(Function<? super T, ? extends K> key, Predicate<T> keep) {\n", m)
		fmt.Fprintf(&b, "\t\tMap<K, List<T>> out = items.stream().filter(keep.and(x -> x != null)).collect(Collectors.groupingBy(key, TreeMap::new, Collectors.toList()));\n")
		fmt.Fprintf(&b, "\t\tversion += %d;\n\t\treturn out;\n\t}\n\n", m+1)
		fmt.Fprintf(&b, "\tpublic String describe%d(Kind k, int n, Object... extra) {\n", m)
		b.WriteString("\t\tString s = switch (k) {\n\t\t\tcase ALPHA -> \"a\" + n;\n\t\t\tcase BETA -> \"b\" + (n * 2) + extra.length;\n\t\t\tcase GAMMA -> {\n\t\t\t\tStringBuilder sb = new StringBuilder();\n\t\t\t\tfor (int i = 0; i < n; i++) {\n\t\t\t\t\tsb.append(i).append(',');\n\t\t\t\t}\n\t\t\t\tyield sb.toString();\n\t\t\t}\n\t\t\tdefault -> String.valueOf(extra.length > 0 ? extra[0] : k);\n\t\t};\n")
		fmt.Fprintf(&b, "\t\treturn s + \"/\" + version + \"/\" + %d;\n\t}\n\n", m)
		fmt.Fprintf(&b, "\tpublic long sum%d(List<? extends Number> ns) {\n\t\tlong t = 0;\n\t\tfor (Number x : ns) {\n\t\t\tif (x instanceof Integer i && i > %d) {\n\t\t\t\tt += i;\n\t\t\t} else if (x instanceof Long l) {\n\t\t\t\tt -= l;\n\t\t\t} else {\n\t\t\t\tt += x.intValue() * %d;\n\t\t\t}\n\t\t}\n\t\treturn t;\n\t}\n\n", m, m, m+3)
	}
	b.WriteString("\tpublic Optional<Pair<T, Integer>> best(Comparator<? super T> cmp) {\n\t\treturn items.stream().max(cmp).map(x -> new Pair<>(x, items.indexOf(x)));\n\t}\n\n")
	b.WriteString("\tpublic void add(T t) {\n\t\titems.add(t);\n\t\tindex.computeIfAbsent(t.toString(), k -> new ArrayList<>()).add(t);\n\t}\n\n")
	if p > 0 {
		prev := fmt.Sprintf("gen.p%02d.C%02d", p-1, c)
		fmt.Fprintf(&b, "\tpublic static int link(%s<String> prev) {\n\t\tprev.add(\"x\");\n\t\treturn prev.group0(String::length, s -> !s.isEmpty()).size() + prev.describe1(%s.Kind.BETA, 3).length();\n\t}\n\n", prev, prev)
	}
	b.WriteString("\tpublic static <T extends Comparable<T>> List<T> sorted(Collection<T> in) {\n\t\tList<T> l = new ArrayList<>(in);\n\t\tCollections.sort(l);\n\t\treturn l;\n\t}\n}\n")
	return b.String()
}
