#!/bin/bash
# Starts munged for the tests unless one answers already: Slurm's authentication (up.sh sources
# this), and MUNGE for users on machines without a proxy (docs/protocol-v2.md 4.3). Needs root and
# Debian's munge. A munged started here has its pid in $RUN/pid.munged, its output in $LOG/munged.out.
#
#   RUN, LOG   directories for the pid file and the output (made when missing)
set -euo pipefail

RUN=${RUN:?set RUN to a directory for pid files}
LOG=${LOG:?set LOG to a directory for logs}
mkdir -p "$RUN" "$LOG"
command -v munged >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
if ! { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }; then
  [ "$(id -u)" = 0 ] || { echo "munge-up.sh: munged does not answer and only root may start one" >&2; exit 1; }
  if [ ! -s /etc/munge/munge.key ]; then
    install -d -o munge -g munge -m 0700 /etc/munge
    mungekey --create --keyfile=/etc/munge/munge.key
    chown munge:munge /etc/munge/munge.key
    chmod 0400 /etc/munge/munge.key
  fi
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge
  rm -f /run/munge/munge.socket.2 /run/munge/munge.socket.2.lock
  setsid setpriv --reuid=munge --regid=munge --clear-groups "$(command -v munged)" -F \
    >"$LOG/munged.out" 2>&1 </dev/null &
  echo $! >"$RUN/pid.munged"
  for _ in $(seq 1 100); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.05; done
  munge -n | unmunge >/dev/null || { echo "munge-up.sh: munged did not start (see $LOG/munged.out)" >&2; exit 1; }
fi
