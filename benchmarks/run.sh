#!/bin/bash
# Measures the proxy against its anchors (raw UDP, ProcessBuilder, MPICH, Agrona) in one run and
# rewrites docs/benchmarks.md and docs/benchmarks/*.png.
#   benchmarks/run.sh [--quick] [--only <phase>,...] [--out <file>]
# --only runs the phases whose names contain one of the words, e.g. the launch figures alone:
#   benchmarks/run.sh --only launch,8-rank --out /tmp/launch.md
# (with --out elsewhere, docs/benchmarks.md stays as it is).
# Run from anywhere inside a clone; needs Java 17 and Maven. As root it installs the Debian
# packages mpich, libmpich-dev and nftables when they are missing (for mpiexec, mpicc and the
# packet-loss run). `mpiproxy run` is measured cold (the launcher jar) and warm (the thin front
# cli/target/native/mpiproxy-front, which the build makes when gcc is there).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    missing=()
    command -v mpiexec.mpich >/dev/null || command -v mpiexec.hydra >/dev/null || missing+=(mpich)
    command -v mpicc >/dev/null || missing+=(libmpich-dev)
    command -v nft >/dev/null || missing+=(nftables)
    if [ ${#missing[@]} -gt 0 ]; then
        echo "installing ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null \
            || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null; } \
            || echo "could not install ${missing[*]}; the harness reports what it cannot measure"
    fi
fi

mvn -B -q package -DskipTests -pl benchmarks,cli,examples -am
CP="benchmarks/target/classes:$(cat benchmarks/target/classpath.txt)"
# MPIPROXY_BENCH_JAVA_OPTS: extra JVM options, e.g. -Djdk.lang.Process.launchMechanism=VFORK
# shellcheck disable=SC2086
exec java -Djava.awt.headless=true ${MPIPROXY_BENCH_JAVA_OPTS:-} -Dorg.slf4j.simpleLogger.defaultLogLevel=error \
    -cp "$CP" org.mpiproxy.benchmarks.Harness "$@"
