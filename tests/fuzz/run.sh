#!/bin/sh
# Runs fuzz targets briefly on their committed corpora: run.sh BINDIR SECS NAME...
# Corpus of target NAME: tests/fuzz/corpus/NAME (log_VERB targets share
# tests/fuzz/corpus/log_edit: edit scripts applied to the logs in
# tests/fuzz/corpus/log). New inputs go to a scratch directory, never into
# the committed corpus. Any crash, leak, timeout or sanitizer report fails;
# the input is kept in FUZZ_ARTIFACTS (default BINDIR/../artifacts).
# FUZZ_JOBS targets run at once (default: the online CPUs); each target's
# result is printed in the order given, whatever order they end in.
set -u
if [ "${1:-}" = --one ]; then
    # One target: --one BINDIR SECS SCRATCH ARTS NAME; the result goes to
    # SCRATCH/NAME.result (first line ok/FAILED), the log beside it.
    bindir=$2 secs=$3 scratch=$4 arts=$5 name=$6
    case $name in log_*) corpus=tests/fuzz/corpus/log_edit; extra="-max_len=512" ;;
                  *) corpus=tests/fuzz/corpus/$name; extra="-max_len=65536" ;; esac
    mkdir -p "$scratch/$name"
    log="$scratch/$name.log"
    if "$bindir/fuzz_$name" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2560 -close_fd_mask=3 \
        -print_final_stats=1 -artifact_prefix="$arts/$name-" $extra "$scratch/$name" "$corpus" >"$log" 2>&1; then
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
        echo "fuzz $name: ok ($execs runs, $cov)" >"$scratch/$name.result"
    else
        {
            echo "fuzz $name: FAILED"
            tail -60 "$log"
            for a in "$arts/$name"-*; do [ -e "$a" ] && echo "crashing input (kept): $a"; done
        } >"$scratch/$name.result"
    fi
    exit 0
fi
bindir=$1 secs=$2
shift 2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT INT TERM
arts=${FUZZ_ARTIFACTS:-$bindir/../artifacts}
mkdir -p "$arts"
jobs=${FUZZ_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
printf '%s\n' "$@" | xargs -P "$jobs" -I{} sh "$0" --one "$bindir" "$secs" "$scratch" "$arts" {}
fail=0
for name in "$@"; do
    if [ -f "$scratch/$name.result" ]; then
        cat "$scratch/$name.result"
        head -1 "$scratch/$name.result" | grep -q ': ok ' || fail=1
    else
        echo "fuzz $name: FAILED (no result)"
        fail=1
    fi
done
exit $fail
