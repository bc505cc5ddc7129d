#!/bin/sh
# Submits the sharded inject as a job array of N tasks, at most CAP at once,
# and the stitch job that waits for all of them (afterok); prints both ids.
#
#   scripts/slurm/submit.sh RIG.yaml GT.h5 OUTDIR A..B N [CAP]
#
# Extra sbatch options (partition, account, time) go in SBATCH_* variables,
# e.g. SBATCH_PARTITION=batch SBATCH_TIMELIMIT=00:30:00.
set -eu
[ $# -ge 5 ] || { echo "usage: $0 RIG.yaml GT.h5 OUTDIR A..B N [CAP]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
rig=$1 gt=$2 out=$3 seeds=$4 n=$5 cap=${6:-$5}
mkdir -p "$out"
jid=$(sbatch --parsable --array="0-$((n - 1))%$cap" -o "$out/inject-%a.log" "$here/inject-seeds.sbatch" \
    "$rig" "$gt" "$out" "$seeds")
jid=${jid%%;*}
sid=$(sbatch --parsable --dependency="afterok:$jid" -o "$out/stitch.log" "$here/stitch.sbatch" "$out")
sid=${sid%%;*}
echo "$jid $sid"
