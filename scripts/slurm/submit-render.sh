#!/bin/sh
# Submits a render as a job array of N tasks (render.sbatch: one part of the
# frames each), at most CAP at once, and the stitch job that waits for all of
# them (afterok); prints both ids. OUTDIR/all.h5 is the whole render.
#
#   scripts/slurm/submit-render.sh SCENE.yaml GT.h5 SENSOR OUTDIR N [CAP]
#
# Extra sbatch options go in SBATCH_* variables, as for submit.sh.
set -eu
[ $# -ge 5 ] || { echo "usage: $0 SCENE.yaml GT.h5 SENSOR OUTDIR N [CAP]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
scene=$1 gt=$2 sensor=$3 out=$4 n=$5 cap=${6:-$5}
mkdir -p "$out"
jid=$(sbatch --parsable --array="0-$((n - 1))%$cap" -o "$out/render-%a.log" "$here/render.sbatch" \
    "$scene" "$gt" "$sensor" "$out")
jid=${jid%%;*}
sid=$(sbatch --parsable --dependency="afterok:$jid" -o "$out/stitch.log" "$here/stitch.sbatch" "$out" part-)
sid=${sid%%;*}
echo "$jid $sid"
