# Sourced by submit.sh and submit-render.sh, after they set $here (this
# folder). submit_array OUT N CAP NAME SCRIPT ARGS... submits SCRIPT ARGS as
# a job array of N tasks, at most CAP at once (logs OUT/NAME-%a.log), and
# stitch.sbatch OUT [PREFIX] as a job that waits for all of them (afterok),
# PREFIX from $stitch_prefix when set; prints both job ids.
submit_array() {
    out=$1 n=$2 cap=$3 name=$4 script=$5
    shift 5
    mkdir -p "$out"
    jid=$(sbatch --parsable --array="0-$((n - 1))%$cap" -o "$out/$name-%a.log" "$here/$script" "$@")
    jid=${jid%%;*}
    sid=$(sbatch --parsable --dependency="afterok:$jid" -o "$out/stitch.log" "$here/stitch.sbatch" "$out" \
        ${stitch_prefix:+"$stitch_prefix"})
    sid=${sid%%;*}
    echo "$jid $sid"
}
