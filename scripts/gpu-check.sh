#!/bin/sh
# The GPU checks of issue 18 in one go, for a session on a machine with an
# NVIDIA GPU (H100/H200) and its driver:
#   1. the driver and device as the CUDA backend sees them (sensim_render_cuda_probe,
#      through `sensim render --backend cuda` on a tiny scene),
#   2. suite cuda, whose gpu_matches_twin test renders the bench scene and the
#      analytic scenes with --backend cuda and --backend twin and compares the
#      outputs bit for bit (it skips, saying so, without a GPU),
#   3. bench/bench_gpu: Grays/s of lidar primary rays (1, 4 and 9 rays per beam)
#      and camera frames/s at 1920x1080, 4 spp, CUDA against the twin.
#
#   sh scripts/gpu-check.sh [BUILD]        (BUILD: default ./build)
#
# Builds first when the build dependencies are here (make gpu; needs clang-16),
# otherwise uses BUILD as it is (built elsewhere and copied along, with its
# shared libraries on LD_LIBRARY_PATH); GPU_CHECK_PREBUILT=1 skips the build
# even where a compiler is found. Exit
# status: 0 when every check ran and passed, 1 when one failed, 2 when there
# is no usable GPU (nothing measured).
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
say() { printf '%s\n' "$*"; }
run() {
    say "+ $*"
    "$@"
}

say "== gpu-check: $(date -u +%FT%TZ) on $(hostname)"
command -v nvidia-smi >/dev/null && run nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
if [ -z "${GPU_CHECK_PREBUILT:-}" ] && command -v clang-16 >/dev/null && pkg-config --exists hdf5 2>/dev/null; then
    run make -j"$(nproc)" BUILD="$BUILD" gpu "$BUILD/tests/runner" "$BUILD/bench/bench_gpu" || { say "gpu-check: build failed"; exit 1; }
else
    say "gpu-check: no build dependencies here; using $BUILD as built elsewhere"
fi
for f in "$BUILD/sensim" "$BUILD/tests/runner" "$BUILD/bench/bench_gpu" "$BUILD/gen/sg_kernels_sm_90.ptx"; do
    [ -e "$f" ] || { say "gpu-check: $f missing (build with make gpu $f first)"; exit 1; }
done
if ldd "$BUILD/sensim" | grep -q "not found"; then
    say "gpu-check: shared libraries missing here:"; ldd "$BUILD/sensim" | grep "not found"; exit 1
fi

# 1. The device, as the backend sees it (the probe runs the arithmetic check).
run "$BUILD/bench/bench_gpu" --probe
probe=$?
if [ $probe -ne 0 ]; then
    say "gpu-check: no usable GPU: nothing measured"
    exit 2
fi

fail=0
# 2. Bit-identity, CUDA against the twin (and the rest of suite cuda).
run env SENSIM_BIN="$PWD/$BUILD/sensim" SENSIM_SRCDIR="$PWD" CK_RUN_SUITE=cuda "$BUILD/tests/runner" || fail=1
# 3. Throughput, CUDA against the twin on this machine.
run env SENSIM_BIN="$PWD/$BUILD/sensim" SENSIM_SRCDIR="$PWD" "$BUILD/bench/bench_gpu" || fail=1
say "== gpu-check: $([ $fail -eq 0 ] && echo passed || echo FAILED)"
exit $fail
