#!/bin/sh
# A real Slurm run (issue 19): a private one-node cluster on localhost from
# Debian's packages (munge, slurmctld, slurmd, slurm-client), its key,
# config, state, spool, logs and sockets under a temporary directory;
# scripts/slurm/submit.sh submits `sensim inject --seeds` as a 4-task array
# (at most 2 at once) and the dependent stitch; both are awaited with a
# bounded timeout; the stitched log must equal the single-process runs bit
# for bit (tests/stitch_check.py, h5py), and scripts/slurm/local.sh (xargs
# -P) must give the same shards. Then a render of 20 lidar scans as a 4-task
# array (scripts/slurm/submit-render.sh) and its stitch must equal the
# single-process render. The daemons are stopped by PID on exit.
#
#   sh tests/slurm.sh [SENSIM]      (from the source root; make check-slurm)
#
# Where the daemons cannot start (packages missing, no root) the test says
# SKIPPED and why, and exits 0; SENSIM_REQUIRE_SLURM=1 makes that a failure.
set -u
S=$(realpath "${1:-${SENSIM_BIN:-build/sensim}}")
SRC=$(pwd)
TIMEOUT=${SLURM_TEST_TIMEOUT:-180}

skip() {
    echo "slurm: SKIPPED: $*" >&2
    [ "${SENSIM_REQUIRE_SLURM:-0}" = 1 ] && exit 1
    exit 0
}
fail() {
    echo "slurm: FAILED: $*" >&2
    for f in "$D"/slurmctld.log "$D"/slurmd.log "$D"/out/*.log; do
        [ -f "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }
    done
    exit 1
}

for c in munged slurmctld slurmd sbatch squeue sinfo; do
    command -v $c >/dev/null 2>&1 || skip "$c not found (scripts/setup.sh installs munge slurmctld slurmd slurm-client)"
done
[ "$(id -u)" = 0 ] || skip "not root: slurmd runs jobs as their user only when started as root"

D=$(mktemp -d /tmp/sensim-slurm.XXXXXX)
stop() {
    pids=
    for p in slurmd slurmctld munged; do
        [ -s "$D/$p.pid" ] && pids="$pids $(cat "$D/$p.pid" 2>/dev/null)"
    done
    for pid in $pids; do kill "$pid" 2>/dev/null; done
    # wait (bounded) for them to go before removing their files
    for i in 1 2 3 4 5 6 7 8 9 10; do
        alive=0
        for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive=1; done
        [ $alive = 0 ] && break
        sleep 0.5
    done
    rm -rf "$D"
}
trap stop EXIT
trap 'exit 1' INT TERM HUP

# two free TCP ports
set -- $(/usr/bin/python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
P1=$1 P2=$2
H=$(hostname -s)
mkdir -p "$D/state" "$D/spool" "$D/out"
dd if=/dev/urandom of="$D/munge.key" bs=1024 count=1 2>/dev/null && chmod 400 "$D/munge.key"
munged --key-file="$D/munge.key" --socket="$D/munge.sock" --pid-file="$D/munged.pid" \
    --log-file="$D/munged.log" --seed-file="$D/munge.seed" -f 2>"$D/munged.err" ||
    skip "munged does not start: $(cat "$D/munged.err")"
cat >"$D/slurm.conf" <<EOC
ClusterName=sensimtest
SlurmctldHost=$H
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge.sock
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldPort=$P1
SlurmdPort=$P2
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
NodeName=$H CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$H Default=YES MaxTime=INFINITE State=UP
EOC
export SLURM_CONF="$D/slurm.conf"
slurmctld -f "$SLURM_CONF" -i 2>"$D/ctld.err" || skip "slurmctld does not start: $(cat "$D/ctld.err")"
slurmd -f "$SLURM_CONF" 2>"$D/slurmd.err" || skip "slurmd does not start: $(cat "$D/slurmd.err")"
up=0
for i in $(seq 1 40); do
    sinfo -h -o %t 2>/dev/null | grep -q idle && { up=1; break; }
    sleep 0.5
done
[ $up = 1 ] || skip "the node does not come up: $(tail -n 3 "$D/slurmd.log" 2>/dev/null)"
echo "slurm: one-node cluster up on $H (ports $P1, $P2)"

# the job: 8 realisations of an IMU rig over a figure-8, 4 tasks, 2 at once
cd "$D" || exit 1
cat >rig.yaml <<'EOR'
seed: 7
sensors:
  - name: imu
    type: imu
    rate_hz: 400
    gyro:  { noise_density: 1.0e-3, bias_instability: 2.0e-5, random_walk: 1.0e-5 }
    accel: { noise_density: 2.0e-3, random_walk: 3.0e-3 }
EOR
"$S" trajectory --shape figure8 --duration 20 --rate 200 -o gt.h5 || fail "trajectory"
export SENSIM="$S"
ids=$(sh "$SRC/scripts/slurm/submit.sh" "$D/rig.yaml" "$D/gt.h5" "$D/out" 20..27 4 2) || fail "submit: $ids"
set -- $ids
J=$1 K=$2
echo "slurm: array job $J (4 tasks, %2), stitch job $K (afterok:$J)"
t0=$(date +%s)
while [ -n "$(squeue -h -j "$J,$K" -o %i 2>/dev/null)" ]; do
    squeue -h -j "$K" -o %r 2>/dev/null | grep -q DependencyNeverSatisfied &&
        fail "an array task failed: the stitch's dependency can never be met"
    [ $(($(date +%s) - t0)) -gt "$TIMEOUT" ] && fail "jobs not done after ${TIMEOUT}s: $(squeue -h -j "$J,$K")"
    sleep 1
done
echo "slurm: both jobs left the queue after $(($(date +%s) - t0)) s"
[ -f out/all.h5 ] || fail "no out/all.h5 (stitch log: $(cat out/stitch.log 2>/dev/null))"
[ "$(ls out/inject-*.log | wc -l)" = 4 ] || fail "expected 4 task logs: $(ls out)"

# the single-process runs, and the same shards made locally with xargs -P
for k in 20 21 22 23 24 25 26 27; do
    "$S" inject rig.yaml gt.h5 --seed $k -q -o single-$k.h5 || fail "single run $k"
done
sh "$SRC/scripts/slurm/local.sh" "$D/rig.yaml" "$D/gt.h5" "$D/local" 20..27 4 2 || fail "local.sh"
for k in 20 21 22 23 24 25 26 27; do
    cmp -s out/r-$k.h5 local/r-$k.h5 || fail "out/r-$k.h5 (Slurm) differs from local/r-$k.h5 (xargs)"
done
mv out moved
( cd / && /usr/bin/python3 "$SRC/tests/stitch_check.py" compare-seeds "$D/moved/all.h5" "$D/single-{seed}.h5" \
    20 27 "$D/gt.h5" ) || fail "the stitched log differs from the single-process runs"
echo "slurm: inject: 4-task array + dependent stitch equal the single-process runs bit for bit"

# a render array: 20 lidar scans in 4 parts (2 at once), stitched after them
cat >scene.yaml <<'EOS'
seed: 5
materials:
  - {name: post, reflectance: 0.6}
meshes:
  - {name: cylinder, cylinder: {radius: 0.5, height: 4, segments: 16}}
  - {name: ground, plane: {size: [200, 60]}}
objects:
  - {mesh: ground, material: post, position: [50, 0, 0]}
  - {mesh: cylinder, material: post, position: [-10, 4, 0], repeat: {count: 40, step: [3, 0, 0]}}
sensors:
  - {name: lidar, type: lidar, channels: 16, vfov: [-15 deg, 15 deg], columns: 360, rate_hz: 20, max_range: 40,
     mount: {position: [0, 0, 1]}}
EOS
"$S" trajectory --shape line --duration 1.0 --speed 15 -o line.h5 || fail "trajectory (render)"
ids=$(sh "$SRC/scripts/slurm/submit-render.sh" "$D/scene.yaml" "$D/line.h5" lidar "$D/rout" 4 2) ||
    fail "submit-render: $ids"
set -- $ids
J=$1 K=$2
echo "slurm: render array job $J (4 tasks, %2), stitch job $K (afterok:$J)"
t0=$(date +%s)
while [ -n "$(squeue -h -j "$J,$K" -o %i 2>/dev/null)" ]; do
    squeue -h -j "$K" -o %r 2>/dev/null | grep -q DependencyNeverSatisfied &&
        fail "a render task failed: $(cat rout/render-*.log 2>/dev/null)"
    [ $(($(date +%s) - t0)) -gt "$TIMEOUT" ] && fail "render jobs not done after ${TIMEOUT}s: $(squeue -h -j "$J,$K")"
    sleep 1
done
echo "slurm: both render jobs left the queue after $(($(date +%s) - t0)) s"
[ -f rout/all.h5 ] || fail "no rout/all.h5 (stitch log: $(cat rout/stitch.log 2>/dev/null))"
"$S" render "$D/scene.yaml" -t line.h5 -s lidar -q -o render-single.h5 || fail "single render"
mv rout rmoved
( cd / && /usr/bin/python3 "$SRC/tests/stitch_check.py" compare-log "$D/rmoved/all.h5" "$D/render-single.h5" ) ||
    fail "the stitched render differs from the single-process render"
echo "slurm: PASSED: inject and render arrays + dependent stitches equal the single-process runs bit for bit"
