#!/bin/sh
# Runs fuzz targets briefly on their committed corpora: run.sh BINDIR SECS NAME...
# Corpus of target NAME: tests/fuzz/corpus/NAME (log_VERB targets share
# tests/fuzz/corpus/log_edit: edit scripts applied to the logs in
# tests/fuzz/corpus/log). New inputs go to a scratch directory, never into
# the committed corpus. Any crash, leak, timeout or sanitizer report fails;
# the input is kept in FUZZ_ARTIFACTS (default BINDIR/../artifacts).
set -u
bindir=$1 secs=$2
shift 2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT INT TERM
arts=${FUZZ_ARTIFACTS:-$bindir/../artifacts}
mkdir -p "$arts"
fail=0
for name in "$@"; do
    case $name in log_*) corpus=tests/fuzz/corpus/log_edit; extra="-max_len=512" ;;
                  *) corpus=tests/fuzz/corpus/$name; extra="-max_len=65536" ;; esac
    mkdir -p "$scratch/$name"
    log="$scratch/$name.log"
    if "$bindir/fuzz_$name" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2560 -close_fd_mask=3 \
        -print_final_stats=1 -artifact_prefix="$arts/$name-" $extra "$scratch/$name" "$corpus" >"$log" 2>&1; then
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
        echo "fuzz $name: ok ($execs runs, $cov)"
    else
        echo "fuzz $name: FAILED"
        tail -60 "$log"
        for a in "$arts/$name"-*; do [ -e "$a" ] && echo "crashing input (kept): $a"; done
        fail=1
    fi
done
exit $fail
