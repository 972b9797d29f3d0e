#!/bin/bash
# Starts a one-machine Slurm cluster for the launcher's tests: munged (unless one runs already),
# slurmctld and NODES slurmd's as fake nodes n1..nN on 127.0.0.1, no systemd and no cgroups.
# Needs root and Debian's munge, slurmctld, slurmd and slurm-client (.ci/run installs them).
#
#   SLURM_LOCAL_DIR   scratch directory for configuration, state, logs and pid files (required)
#   NODES             number of fake nodes (default 3)
#   CPUS_PER_NODE     CPUs each node offers (default: this machine's)
#   CTLD_PORT         slurmctld's TCP port (default 6817)
#   SLURMD_PORT_BASE  node i's slurmd listens on SLURMD_PORT_BASE + i (default 17000)
#
# Afterwards: export SLURM_CONF=$SLURM_LOCAL_DIR/etc/slurm.conf. Stop with down.sh.
set -euo pipefail

BASE=${SLURM_LOCAL_DIR:?set SLURM_LOCAL_DIR to a scratch directory}
NODES=${NODES:-3}
CPUS_PER_NODE=${CPUS_PER_NODE:-$(nproc)}
CTLD_PORT=${CTLD_PORT:-6817}
SLURMD_PORT_BASE=${SLURMD_PORT_BASE:-17000}
WAIT_S=${WAIT_S:-60}

die() { echo "up.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root"
for c in munged munge unmunge slurmctld slurmd sinfo scontrol; do
  command -v "$c" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
  command -v "$c" >/dev/null 2>&1 || die "$c not found (apt-get install munge slurmctld slurmd slurm-client)"
done

RUN=$BASE/run; LOG=$BASE/log; ETC=$BASE/etc; STATE=$BASE/state
CONF=$ETC/slurm.conf
mkdir -p "$RUN" "$LOG" "$ETC"
for f in "$RUN"/pid.*; do
  [ -e "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && die "already running ($f); run down.sh first"
done

# munge: Slurm's authentication. Reuse a running munged; else start one (its pid in $RUN/pid.munged).
RUN=$RUN LOG=$LOG "$(dirname "$0")/munge-up.sh"

rm -rf "$STATE"
mkdir -p "$STATE/ctld"
cat >"$CONF" <<CONF
ClusterName=mpiproxy-test
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# the configured CPUs count, not this machine's: tests give nodes more slots than it has cores
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
MailProg=/bin/true
SlurmctldPort=$CTLD_PORT
SlurmdPort=$((SLURMD_PORT_BASE + 1))
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/slurmd-%n
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd-%n.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd-%n.log
ReturnToService=2
SlurmdTimeout=30
MessageTimeout=10
KillWait=5
MinJobAge=30
CONF
for i in $(seq 1 "$NODES"); do
  echo "NodeName=n$i NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((SLURMD_PORT_BASE + i)) CPUs=$CPUS_PER_NODE RealMemory=1000 State=UNKNOWN" >>"$CONF"
done
echo "PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO" >>"$CONF"
export SLURM_CONF=$CONF

setsid slurmctld -D -f "$CONF" >"$LOG/slurmctld.out" 2>&1 </dev/null &
echo $! >"$RUN/pid.slurmctld"
for _ in $(seq 1 200); do [[ $(scontrol ping 2>/dev/null || true) == *"is UP"* ]] && break; sleep 0.05; done
[[ $(scontrol ping 2>/dev/null || true) == *"is UP"* ]] || die "slurmctld did not start (see $LOG/slurmctld.out)"

for i in $(seq 1 "$NODES"); do
  mkdir -p "$STATE/slurmd-n$i"
  setsid slurmd -D -N "n$i" -f "$CONF" >"$LOG/slurmd-n$i.out" 2>&1 </dev/null &
  echo $! >"$RUN/pid.slurmd-n$i"
done
for _ in $(seq 1 $((WAIT_S * 10))); do
  [ "$(sinfo -h -o '%T %D' 2>/dev/null)" = "idle $NODES" ] && { echo "up.sh: $NODES nodes idle"; exit 0; }
  sleep 0.1
done
sinfo >&2 || true
die "nodes not idle after ${WAIT_S} s (see $LOG/slurmd-n*.out)"
