#!/usr/bin/env bash
# Install and start a one-node Slurm cluster on this machine, for the tests
# that submit real jobs (tests/test_slurm.py).  Needs root and apt-get
# (Debian's slurmctld, slurmd, slurm-client and munge); elsewhere it says
# why it skipped and exits 0, and those tests skip.  Running it again is
# harmless: installed packages, the key and the configuration are kept, and
# daemons already running are left alone.
set -euo pipefail

say() { echo "setup_slurm: $*"; }
trap 'say "failed at line $LINENO: $BASH_COMMAND" >&2' ERR

if [ "$(id -u)" != 0 ]; then
    say "not root; skipped (the Slurm tests will skip)"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    say "apt-get is not available; skipped (the Slurm tests will skip)"
    exit 0
fi

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null \
        || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
    say "installing slurmctld slurmd slurm-client munge"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
fi

# The munge key: created once, readable by munge only.
install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge
install -d -o munge -g munge -m 0755 /run/munge
if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
if ! munge -n </dev/null >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged
fi

# slurm.conf with this host's real name, CPUs and memory.
host="$(hostname -s)"
node_line="$(slurmd -C | head -n 1)"
node_line="$(sed 's/ *UpTime=.*//' <<<"$node_line")"
cpus="$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$node_line")"
memory="$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$node_line")"
conf_dir=/etc/slurm
state_dir=/var/spool/slurmctld
install -d -m 0755 "$conf_dir" /var/spool/slurmd /var/log/slurm /run/slurm
install -d -o slurm -g slurm -m 0755 "$state_dir"
cat >"$conf_dir/slurm.conf.new" <<CONF
# Written by tests/slurm/setup_slurm.sh: a one-node cluster for torchlint's tests.
ClusterName=torchlint
SlurmctldHost=$host
SlurmUser=slurm
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
StateSaveLocation=$state_dir
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
InactiveLimit=0
KillWait=5
MinJobAge=300
SlurmdTimeout=60
MpiDefault=none
$node_line State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
if ! cmp -s "$conf_dir/slurm.conf.new" "$conf_dir/slurm.conf"; then
    mv "$conf_dir/slurm.conf.new" "$conf_dir/slurm.conf"
    changed=1
else
    rm -f "$conf_dir/slurm.conf.new"
    changed=0
fi

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
stop() {  # stop the daemon of a pid file and wait until it has exited
    if running "$1"; then
        kill "$(cat "$1")"
        for _ in $(seq 1 50); do running "$1" || break; sleep 0.2; done
    fi
}
if [ "$changed" = 1 ]; then
    stop /run/slurm/slurmctld.pid
    stop /run/slurm/slurmd.pid
fi
running /run/slurm/slurmctld.pid || /usr/sbin/slurmctld
running /run/slurm/slurmd.pid || /usr/sbin/slurmd

for _ in $(seq 1 60); do
    state="$(timeout 5 sinfo -h -N -o '%t' 2>/dev/null | head -n 1 || true)"
    case "$state" in
        idle|mix|alloc) say "one-node cluster ready ($host, $cpus CPUs, ${memory} MB, node $state)"; exit 0 ;;
        down*|drain*) timeout 5 scontrol update NodeName="$host" State=RESUME >/dev/null 2>&1 || true ;;
    esac
    sleep 1
done
say "the node did not become idle; sinfo says: $(timeout 5 sinfo -N 2>&1 | tail -n +2)" >&2
exit 1
