#!/usr/bin/env bash
# Start a one-node Slurm cluster on this machine (Debian's slurm-wlm and munge), so the
# workflow's Slurm profile (workflow/profiles/slurm) can be run for real, not only dry-run.
# Used by scripts/workflow-check.sh; needs root and apt-get (it installs the packages if
# `slurmctld` is missing). Prints the partition name (`debug`) on success.
#
#   sudo bash scripts/slurm-local.sh        # then: sinfo, sbatch, squeue work on this machine
#
# The cluster has no accounting database (AccountingStorageType=accounting_storage/none), so
# jobs are followed with `squeue` (the profile's callers pass --slurm-status-command squeue;
# MinJobAge=600 keeps finished jobs visible to it for 10 minutes).
set -euo pipefail

if [ "$(id -u)" != 0 ]; then
  echo "slurm-local.sh: needs root (installs and starts slurmctld, slurmd, munged)" >&2
  exit 3
fi
if ! command -v slurmctld > /dev/null; then
  if ! command -v apt-get > /dev/null; then
    echo "slurm-local.sh: slurmctld is not installed and there is no apt-get to install it" >&2
    exit 3
  fi
  apt-get update -qq > /dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge > /dev/null
fi

host=$(hostname -s)
cpus=$(nproc)
mem_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 8 / 10 ))
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
cat > /etc/slurm/slurm.conf <<EOF
ClusterName=local
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MinJobAge=600
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF

if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge
  dd if=/dev/urandom of=/etc/munge/munge.key bs=128 count=1 status=none
fi
chown -R munge:munge /etc/munge /run/munge
chmod 700 /etc/munge
chmod 400 /etc/munge/munge.key
pgrep -x munged > /dev/null || runuser -u munge -- /usr/sbin/munged
# (Re)start the daemons so they read this configuration.
pkill -x slurmd 2> /dev/null || true
pkill -x slurmctld 2> /dev/null || true
sleep 1
/usr/sbin/slurmctld
/usr/sbin/slurmd
for _ in $(seq 30); do
  if sinfo -h -o '%t' 2> /dev/null | grep -q idle; then
    echo debug
    exit 0
  fi
  sleep 1
done
echo "slurm-local.sh: the node did not come up; see /var/log/slurm/" >&2
sinfo >&2 || true
exit 1
