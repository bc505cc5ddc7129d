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
. "$here/array.sh"
stitch_prefix=part-
submit_array "$4" "$5" "${6:-$5}" render render.sbatch "$1" "$2" "$3" "$4"
