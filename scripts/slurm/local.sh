#!/bin/sh
# The same sharded run on one workstation: N shards, P at once (xargs -P),
# then the stitch. The output is the same as under Slurm, bit for bit.
#
#   scripts/slurm/local.sh RIG.yaml GT.h5 OUTDIR A..B N [P]
set -eu
[ $# -ge 5 ] || { echo "usage: $0 RIG.yaml GT.h5 OUTDIR A..B N [P]" >&2; exit 2; }
: "${SENSIM:=sensim}"
rig=$1 gt=$2 out=$3 seeds=$4 n=$5 p=${6:-$(nproc)}
mkdir -p "$out"
seq 0 $((n - 1)) | xargs -P "$p" -I@ "$SENSIM" inject "$rig" "$gt" --seeds "$seeds" --shard "@/$n" \
    --threads 1 -q -o "$out/r-{seed}.h5"
"$SENSIM" stitch "$out/all.h5" "$out"/r-*.h5
