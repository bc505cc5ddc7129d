#!/bin/sh
# A longer fuzz campaign: campaign.sh OUTDIR SECS ROUNDS NAME...
# Runs each named target for SECS seconds per round, ROUNDS rounds, growing
# a working corpus per target in OUTDIR/corpus/NAME (seeded from the
# committed one) and keeping crashes in OUTDIR/crash/. Appends one line per
# run to OUTDIR/stats: "NAME execs cov status". Sum with
#   awk '{e[$1]+=$2; c[$1]=$3} END {for (n in e) print n, e[n], c[n]}' OUTDIR/stats
set -u
out=$1 secs=$2 rounds=$3
shift 3
bindir=${FUZZ_BINDIR:-build-fuzz/fuzz}
mkdir -p "$out/crash" "$out/logs"
r=0
while [ $r -lt "$rounds" ]; do
    for name in "$@"; do
        case $name in log_*) seed=tests/fuzz/corpus/log_edit; extra="-max_len=512" ;;
                      *) seed=tests/fuzz/corpus/$name; extra="-max_len=65536" ;; esac
        mkdir -p "$out/corpus/$name"
        log="$out/logs/$name.$r.log"
        "$bindir/fuzz_$name" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2560 -close_fd_mask=3 \
            -print_final_stats=1 -artifact_prefix="$out/crash/$name-" $extra "$out/corpus/$name" "$seed" \
            >"$log" 2>&1
        st=$?
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | sed 's/cov: //')
        echo "$name ${execs:-0} ${cov:-0} $st" >> "$out/stats"
    done
    r=$((r + 1))
done
