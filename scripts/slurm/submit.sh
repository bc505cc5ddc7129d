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
. "$here/array.sh"
submit_array "$3" "$5" "${6:-$5}" inject inject-seeds.sbatch "$1" "$2" "$3" "$4"
