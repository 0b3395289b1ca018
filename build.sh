#!/usr/bin/env bash
# tadpole's one entry point. ./build.sh help lists the commands.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
OUT=$ROOT/out
GO=${GO:-go}
export GOFLAGS=${GOFLAGS:--mod=mod}

usage() {
	cat <<'USAGE'
usage: ./build.sh COMMAND

  demo     build everything and run the example under the reference HQ,
           printing the HQ's run summary
  test     every test: vet, gofmt, unit, race, integration with real peers
  bench    every benchmark (go test -bench -benchmem) and side-by-side ratios
  fuzz     run each fuzz target for FUZZTIME (default 60s)
  build    build the commands and the Go example into out/
  lib      build the c-shared library out/libtadpole.so and out/tadpole.pc
  examples build every example: out/example-go, examples/c/example
  peers    install the Debian peers the tests use (lttng-tools, babeltrace2, …)
  help     this text

Environment: CI=true installs missing peers with apt-get and makes a missing
peer a failure instead of a skip.
USAGE
}

# peer: command → Debian package
PEER_CMDS="lttng:lttng-tools lttng-sessiond:lttng-tools lttng-relayd:lttng-tools babeltrace2:babeltrace2 lttng-gen-tp:liblttng-ust-dev java:openjdk-17-jdk-headless javac:openjdk-17-jdk-headless gcc:gcc g++:g++ make:make nm:binutils pkg-config:pkg-config jimage:openjdk-17-jdk-headless node:nodejs npm:npm chromium:chromium"
PEER_FILES="/usr/share/java/lttng-ust-agent-jul.jar:liblttng-ust-agent-java /usr/share/java/asm-9.4.jar:libasm-java /usr/share/java/asm-commons-9.4.jar:libasm-java /usr/share/java/asm-util-9.4.jar:libasm-java"
PEER_FILES="$PEER_FILES /usr/share/java/jolokia-core.jar:libjolokia-core-java /usr/share/java/json-simple.jar:libjson-simple-java"

missing_peers() {
	local p c f pkgs=""
	for p in $PEER_CMDS; do
		c=${p%%:*}
		command -v "$c" >/dev/null 2>&1 || pkgs="$pkgs ${p#*:}"
	done
	for p in $PEER_FILES; do
		f=${p%%:*}
		[ -e "$f" ] || pkgs="$pkgs ${p#*:}"
	done
	echo "$pkgs" | tr ' ' '\n' | sort -u | tr '\n' ' '
}

peers() {
	local need
	need=$(missing_peers)
	if [ -z "${need// /}" ]; then
		return 0
	fi
	if [ "${CI:-}" = true ] || [ "${1:-}" = install ]; then
		echo "build.sh: installing peers:$need" >&2
		local sudo=""
		[ "$(id -u)" = 0 ] || sudo=sudo
		$sudo apt-get update -qq
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $need >&2
		need=$(missing_peers)
		if [ -n "${need// /}" ]; then
			echo "build.sh: peers still missing after apt-get:$need" >&2
			exit 1
		fi
	else
		echo "build.sh: peers missing (tests that need them will skip):$need" >&2
		echo "build.sh: run ./build.sh peers to install them" >&2
	fi
}

build() {
	mkdir -p "$OUT"
	$GO build -trimpath -o "$OUT/tadpole-hq" ./cmd/tadpole-hq
	$GO build -trimpath -o "$OUT/example-go" ./examples/go
}

# JDK: the one JDK of every command, found once: $JAVA_HOME when it has
# include/jni.h, else the JDK of the javac in PATH; empty without one.
# JNI_CFLAGS: its include flags for jni.h and jvmti.h (package jni), put in
# front of CGO_CFLAGS for every go command here (jni/cflags.go lists the
# usual Debian paths for a plain go build).
jdk_home() {
	local javac
	if [ -n "${JAVA_HOME:-}" ] && [ -f "$JAVA_HOME/include/jni.h" ]; then
		echo "$JAVA_HOME"
	elif javac=$(command -v javac); then
		javac=$(dirname "$(dirname "$(readlink -f "$javac")")")
		[ -f "$javac/include/jni.h" ] && echo "$javac"
	fi
	return 0
}
JDK=$(jdk_home)
JNI_CFLAGS=${JDK:+-I$JDK/include -I$JDK/include/linux}
export CGO_CFLAGS="${CGO_CFLAGS:--g -O2}${JNI_CFLAGS:+ $JNI_CFLAGS}"

# jvm_classes compiles the JVM agent's Java helpers (jni/java) for Java 8+
# into jni/classes, which libtadpole.so embeds. The class files are kept in
# the tree, so a machine without a JDK builds with them; only changed files
# are rewritten, so concurrent builds never see a half-written class.
jvm_classes() {
	local javac tmp f
	javac=${JDK:+$JDK/bin/javac}
	[ -x "$javac" ] || javac=$(command -v javac || true)
	if [ -z "$javac" ]; then
		echo "build.sh: javac not found: using the committed jni/classes" >&2
		return 0
	fi
	tmp=$(mktemp -d)
	"$javac" --release 8 -Xlint:-options -nowarn -d "$tmp" jni/java/io/tadpole/*.java
	for f in "$tmp"/io/tadpole/*.class; do
		if ! cmp -s "$f" "jni/classes/io/tadpole/${f##*/}"; then
			mkdir -p jni/classes/io/tadpole
			cp "$f" "jni/classes/io/tadpole/${f##*/}.tmp.$$"
			mv "jni/classes/io/tadpole/${f##*/}.tmp.$$" "jni/classes/io/tadpole/${f##*/}"
		fi
	done
	rm -rf "$tmp"
}

lib() {
	# LIBOUT: where libtadpole.so and tadpole.pc go (default out/).
	local dest=${LIBOUT:-$OUT}
	mkdir -p "$dest"
	jvm_classes
	# Reproducible: CGO_CFLAGS without -g (no build paths), no build id, no
	# VCS stamp. The version script exports only tadpole_* and the JVMTI
	# entry points.
	CGO_ENABLED=1 CGO_CFLAGS="-O2${JNI_CFLAGS:+ $JNI_CFLAGS}" $GO build -trimpath -buildvcs=false -buildmode=c-shared \
		-ldflags="-s -w -buildid= '-extldflags=-Wl,--version-script=$ROOT/cmd/libtadpole/exports.map'" \
		-o "$dest/libtadpole.so" ./cmd/libtadpole
	rm -f "$dest/libtadpole.h"
	lttng_lib "$dest"
	cat >"$dest/tadpole.pc" <<PC
libdir=$dest
includedir=$ROOT/include

Name: tadpole
Description: tadpole in-process tracing agent, C API (include/tadpole.h)
Version: 0.1
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -ltadpole
Libs.private: -pthread
Cflags: -I\${includedir}
PC
}

# lttng_lib builds libtadpole-lttng.so into $1: the LTTng tracepoint
# providers (lttng_jul:event, lttng_log4j:event, lttng_python:event) that
# libtadpole.so loads at run time from its own directory. It needs
# lttng-ust's headers (liblttng-ust-dev); without them it is skipped and
# libtadpole.so runs without LTTng recording.
lttng_lib() {
	local dest=$1 cc=${CC:-gcc} flags
	if pkg-config --exists lttng-ust 2>/dev/null; then
		flags="$(pkg-config --cflags lttng-ust) $(pkg-config --libs lttng-ust)"
	elif [ -f /usr/include/lttng/tracepoint.h ] || [ -f "/usr/include/$(gcc -print-multiarch 2>/dev/null)/lttng/tracepoint.h" ]; then
		flags="-llttng-ust -ldl"
	else
		echo "build.sh: no lttng-ust headers (liblttng-ust-dev): libtadpole-lttng.so not built, no LTTng recording" >&2
		return 0
	fi
	# shellcheck disable=SC2086
	$cc -O2 -Wall -fPIC -shared -fvisibility=hidden -Icapi/lttng -o "$dest/libtadpole-lttng.so.tmp.$$" \
		capi/lttng/tadpole_lttng.c $flags
	mv "$dest/libtadpole-lttng.so.tmp.$$" "$dest/libtadpole-lttng.so"
}

examples() {
	build
	lib
	make -C examples/c
}

demo() {
	build
	lib
	echo "== tadpole demo 1/2: examples/go traced into the reference HQ" >&2
	# j4p on a free loopback port: the example prints one read of its own MBean.
	TADPOLE_J4P=127.0.0.1:0 "$OUT/tadpole-hq" -dir "$OUT/traces" -live 127.0.0.1:0 -exec "$OUT/example-go"
	echo >&2
	echo "== tadpole demo 2/2: examples/java under java -agentpath:out/libtadpole.so" >&2
	mkdir -p "$OUT/java"
	javac -cp jni/classes -d "$OUT/java" examples/java/Shop.java
	"$OUT/tadpole-hq" -dir "$OUT/traces" -exec java -agentpath:"$OUT/libtadpole.so" -cp "$OUT/java:jni/classes" Shop
}

lint() {
	local bad
	bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
	if [ -n "$bad" ]; then
		echo "gofmt needed:" $bad >&2
		return 1
	fi
	$GO vet ./...
	# The core, the transports and the HQ are pure Go.
	CGO_ENABLED=0 $GO build ./agent/... ./transport/... ./hq/... ./cmd/tadpole-hq
}

test() {
	peers
	lint
	local timeout=${TEST_TIMEOUT:-20m}
	# Tests named *Busy keep every core busy on purpose, and the rewriter's
	# tests run JVMs over the whole JDK: they run on their own, after the
	# rest, so that they slow no other package's timed test.
	$GO test -count=1 -skip 'Busy$' -timeout "$timeout" $($GO list ./... | grep -v '/jvm/')
	$GO test -count=1 -timeout "$timeout" ./jvm/...
	$GO test -count=1 -skip 'Busy$' -race -timeout "$timeout" ./agent/... ./transport/... ./hq/... ./capi/... ./jni/...
	$GO test -count=1 -p 1 -run 'Busy$' -timeout "$timeout" ./agent/... ./capi/... ./jni/...
	if [ -f bench/go.mod ]; then
		# -v for the side-by-side figures the comparisons print; the
		# lines naming each passing (sub)test are left out.
		(cd bench && $GO vet ./... && $GO test -count=1 -v -timeout "$timeout" ./... |
			grep -v -e '^=== ' -e '^ *--- PASS' -e '^PASS$')
	fi
}

# cpu_ticks prints the steal and total CPU ticks so far (Linux /proc/stat).
cpu_ticks() {
	awk 'NR == 1 { print $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat 2>/dev/null || echo "0 0"
}

bench() {
	local count=${BENCHCOUNT:-1} before after
	before=$(cpu_ticks)
	$GO test -run '^$' -bench "${BENCH:-.}" -benchmem -count "$count" ./...
	if [ -f bench/go.mod ]; then
		# bench/jvm's method-tracing comparison runs JVMs for a quarter of an hour.
		(cd bench && $GO test -run '^$' -bench "${BENCH:-.}" -benchmem -count "$count" -timeout "${BENCH_TIMEOUT:-2h}" ./...)
	fi
	after=$(cpu_ticks)
	# On a virtual machine, time the host gives to others (steal) makes
	# every figure above slower by about as much.
	echo "$before $after" | awk '$4 > $2 { printf "host steal during the benchmarks: %.1f%% of CPU time\n", 100 * ($3 - $1) / ($4 - $2) }'
}

fuzz() {
	local t=${FUZZTIME:-60s} pkg target
	for pkg in $($GO list ./...); do
		for target in $($GO test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
			echo "== fuzz $pkg $target ($t)" >&2
			$GO test -run '^$' -fuzz "^${target}\$" -fuzztime "$t" -parallel "${FUZZPARALLEL:-2}" "$pkg"
		done
	done
}

case "${1:-help}" in
demo) demo ;;
test) test ;;
bench) bench ;;
fuzz) fuzz ;;
build) build ;;
examples) examples ;;
lib) lib ;;
peers) peers install ;;
help | -h | --help) usage ;;
*)
	usage >&2
	exit 2
	;;
esac
