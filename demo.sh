#!/usr/bin/env bash
# Builds the project, starts the node proxy in a fresh copy of the Karaf distribution and runs
# the demo job against it: mpiping on two ranks (core 0 and core 1), then mpiprime over 100000.
#
#   ./demo.sh            build, run the demo, stop the node
#   ./demo.sh --keep     ... and leave the node running (stop it with target/demo/bin/stop)
#   ./demo.sh --no-build skip the Maven build (reuse the last one)
set -euo pipefail

keep=false
build=true
for arg in "$@"; do
  case "$arg" in
    --keep) keep=true ;;
    --no-build) build=false ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "unknown option: $arg (try --help)" >&2; exit 2 ;;
  esac
done

cd "$(dirname "$0")"
root=$(pwd)
demo="$root/target/demo"
port=6660

if $build; then
  echo "== Building (mvn -B -q install -DskipTests) ..."
  mvn -B -q install -DskipTests
fi

distro=$(ls "$root"/karaf-distro/target/*.tar.gz 2>/dev/null | head -n 1 || true)
[ -n "$distro" ] || { echo "no distribution in karaf-distro/target: build first" >&2; exit 1; }

# A node already listening (a previous --keep) is stopped first: one proxy per port.
if [ -x "$demo/bin/stop" ] && [ -f "$demo/instances/instance.properties" ]; then
  "$demo/bin/stop" >/dev/null 2>&1 || true
fi
rm -rf "$demo"
mkdir -p "$demo"
tar -xzf "$distro" -C "$demo" --strip-components=1

listening() {
  # /proc/net/udp lists local addresses as hex ip:port; 6660 = 0x1A04
  awk -v p=":$(printf '%04X' "$port")" 'NR > 1 && substr($2, length($2) - 4) == p { found = 1 } END { exit !found }' \
    /proc/net/udp /proc/net/udp6 2>/dev/null
}

if listening; then
  echo "UDP port $port is already in use: stop the other proxy first" >&2
  exit 1
fi

echo "== Starting the node proxy (Karaf in $demo) ..."
"$demo/bin/start"
# serving: the socket is bound and the proxy has generated the cluster key the programs sign with
# (the transport may bind its socket a moment before the proxy behind it has started)
ready() {
  listening && [ -s "$demo/etc/mpiproxy.key" ]
}
for _ in $(seq 1 120); do
  ready && break
  sleep 0.5
done
ready || { echo "the proxy did not start serving; see $demo/data/log/karaf.log" >&2; exit 1; }
echo "   listening on 127.0.0.1:$port"

stop_node() {
  if ! $keep; then
    echo "== Stopping the node"
    "$demo/bin/stop" >/dev/null 2>&1 || true
  fi
}
trap stop_node EXIT

cd "$demo/programs"
echo
echo "== mpiping on two ranks (hostfile: core 0 and core 1 of this node)"
./mpiping hostfile
echo
echo "== mpiprime 100000 on two ranks (first and last primes shown)"
./mpiprime hostfile 100000 > "$demo/mpiprime.out"
head -n 5 "$demo/mpiprime.out"
echo "   ..."
tail -n 4 "$demo/mpiprime.out"
echo
echo "== Output of every rank is kept in $demo/data/mpiproxy/logs"

if $keep; then
  cat <<TXT

The node keeps running. Try:
  cd $demo/programs && ./mpiprime hostfile 1000000
  printf 'mpi:jobs\n' | $demo/bin/client -b        # operator console (user karaf)
  $demo/bin/stop                                     # stop the node
TXT
fi
