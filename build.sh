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
PEER_CMDS="lttng:lttng-tools lttng-sessiond:lttng-tools lttng-relayd:lttng-tools babeltrace2:babeltrace2 lttng-gen-tp:liblttng-ust-dev java:openjdk-17-jdk-headless javac:openjdk-17-jdk-headless gcc:gcc g++:g++ make:make nm:binutils pkg-config:pkg-config"
PEER_FILES="/usr/share/java/lttng-ust-agent-jul.jar:liblttng-ust-agent-java"

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

lib() {
	# LIBOUT: where libtadpole.so and tadpole.pc go (default out/).
	local dest=${LIBOUT:-$OUT}
	mkdir -p "$dest"
	# Reproducible: CGO_CFLAGS without -g (no build paths), no build id, no
	# VCS stamp. The version script exports only tadpole_* and the JVMTI
	# entry points.
	CGO_ENABLED=1 CGO_CFLAGS=-O2 $GO build -trimpath -buildvcs=false -buildmode=c-shared \
		-ldflags="-s -w -buildid= '-extldflags=-Wl,--version-script=$ROOT/cmd/libtadpole/exports.map'" \
		-o "$dest/libtadpole.so" ./cmd/libtadpole
	rm -f "$dest/libtadpole.h"
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

examples() {
	build
	lib
	make -C examples/c
}

demo() {
	build
	echo "== tadpole demo: examples/go traced into the reference HQ" >&2
	"$OUT/tadpole-hq" -dir "$OUT/traces" -exec "$OUT/example-go"
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
	$GO test -count=1 -timeout "$timeout" ./...
	$GO test -count=1 -race -timeout "$timeout" ./agent/... ./transport/... ./hq/... ./capi/...
	if [ -f bench/go.mod ]; then
		(cd bench && $GO vet ./... && $GO test -count=1 -timeout "$timeout" ./...)
	fi
}

bench() {
	local count=${BENCHCOUNT:-1}
	$GO test -run '^$' -bench "${BENCH:-.}" -benchmem -count "$count" ./...
	if [ -f bench/go.mod ]; then
		(cd bench && $GO test -run '^$' -bench "${BENCH:-.}" -benchmem -count "$count" ./...)
	fi
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
