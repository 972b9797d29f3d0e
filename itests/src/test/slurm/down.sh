#!/bin/bash
# Stops what up.sh started, by the pids it recorded: cancels jobs, then slurmd's and slurmctld,
# then munged if up.sh started it. SLURM_LOCAL_DIR as for up.sh.
set -uo pipefail
BASE=${SLURM_LOCAL_DIR:?set SLURM_LOCAL_DIR to the directory up.sh used}
RUN=$BASE/run
export SLURM_CONF=$BASE/etc/slurm.conf
PATH=$PATH:/usr/sbin

alive() { kill -0 "$1" 2>/dev/null; }
stop() {   # stop PIDFILE...: SIGTERM to all, wait up to 10 s, then SIGKILL
  local f p pids=""
  for f in "$@"; do
    [ -e "$f" ] || continue
    p=$(cat "$f"); rm -f "$f"
    alive "$p" && { kill -TERM "$p"; pids="$pids $p"; }
  done
  for _ in $(seq 1 100); do
    local any=""
    for p in $pids; do alive "$p" && any=1; done
    [ -z "$any" ] && return 0
    sleep 0.1
  done
  for p in $pids; do alive "$p" && kill -KILL "$p"; done
  return 0
}

if [ -e "$RUN/pid.slurmctld" ] && alive "$(cat "$RUN/pid.slurmctld")"; then
  jobs=$(squeue -h -o %i 2>/dev/null)
  if [ -n "$jobs" ]; then
    scancel --full $jobs 2>/dev/null
    for _ in $(seq 1 100); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.1; done
  fi
fi
stop "$RUN"/pid.slurmd-* "$RUN/pid.slurmctld"
stop "$RUN/pid.munged"
rm -f "$RUN"/slurmd-*.pid "$RUN/slurmctld.pid"
exit 0
