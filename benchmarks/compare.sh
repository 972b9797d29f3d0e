#!/bin/bash
# Measures an older revision and this checkout side by side: each phase is run with the older
# revision's harness and with this checkout's, one after the other, and the goal rows both have
# are put side by side with the new ratio over the old one.
#   benchmarks/compare.sh <old revision> [--rounds N] [--only <phase>,...] [--out <file>]
# Default phases: the streams (v1, v2), 64 KiB over v2, the round trip, the launch of one rank and
# of 8 ranks; default output docs/benchmarks/compare.md. Nothing else should run meanwhile.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: benchmarks/compare.sh <old revision> [--rounds N] [--only <phase>,...] [--out <file>]" >&2; exit 64; }
old_rev="$1"; shift
rounds=1
only="UDP streams;1448-byte streams over protocol v2;64 KiB messages host to rank over protocol v2;round trip;launch;8-rank"
out="docs/benchmarks/compare.md"
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        --only) only="${2//,/;}"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 64 ;;
    esac
done
old_id=$(git rev-parse --short "${old_rev}^{commit}")
new_id=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!docs' ':!benchmarks/analysis.md' || echo "+changes")
work=$(mktemp -d)
cleanup() { git worktree remove --force "$work/old" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
git worktree add --detach "$work/old" "$old_id" >/dev/null
old_pages=(); new_pages=()
IFS=';' read -r -a phases <<< "$only"
for ((r = 1; r <= rounds; r++)); do
    i=0
    for phase in "${phases[@]}"; do
        i=$((i + 1))
        echo "== round $r, $phase: $old_id"
        (cd "$work/old" && benchmarks/run.sh --only "$phase" --out "$work/old-$r-$i.md" > "$work/old-$r-$i.log" 2>&1) \
            || { echo "the old harness failed, see below"; tail -20 "$work/old-$r-$i.log"; exit 1; }
        echo "== round $r, $phase: $new_id"
        benchmarks/run.sh --only "$phase" --out "$work/new-$r-$i.md" > "$work/new-$r-$i.log" 2>&1 \
            || { echo "the new harness failed, see below"; tail -20 "$work/new-$r-$i.log"; exit 1; }
        old_pages+=("$work/old-$r-$i.md"); new_pages+=("$work/new-$r-$i.md")
    done
done
mkdir -p "$(dirname "$out")"
CP="benchmarks/target/classes:$(cat benchmarks/target/classpath.txt)"
java -cp "$CP" org.mpiproxy.benchmarks.Compare "$out" "$old_id" "$new_id" "${old_pages[@]}" -- "${new_pages[@]}"
