#!/bin/sh
# Installs the Debian packages sensim builds and tests with, when missing.
# Debian 12 (bookworm); needs root (or sudo) only if something is missing.
set -eu
PKGS="build-essential pkg-config libgsl-dev libhdf5-dev libyaml-dev check librandom123-dev
libembree-dev libpng-dev libjpeg62-turbo-dev libbz2-dev liblz4-dev libzstd-dev libsqlite3-dev zlib1g-dev mandoc groff-base jq
libmeshoptimizer-dev libdraco-dev libassimp-dev gltfpack draco assimp-utils python3-open3d pcl-tools
python3-numpy python3-h5py python3-scipy python3-yaml python3-rosbag python3-sensor-msgs
python3-geometry-msgs python3-nav-msgs python3-tf2-msgs python3-zstandard python3-lz4
python3-cffi python3-pytest python3-setuptools python3-dev python3-venv python3-pip python3-opencv
clang-16 libclang-rt-16-dev libomp-16-dev valgrind universal-ctags
munge slurmctld slurmd slurm-client"
# clang-16 also compiles the renderer's CUDA kernels to PTX (make gpu; no
# NVIDIA package is needed to build, only the driver to run them). Without
# it the library builds with no kernels and `render --backend cuda` says so.
# `setup.sh --deb`: also the Debian packaging tools (scripts/ci-deb.sh).
if [ "${1:-}" = "--deb" ]; then
    PKGS="$PKGS dpkg-dev debhelper lintian"
fi
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "setup: installing$missing"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
else
    echo "setup: all build dependencies present"
fi
