#!/bin/sh
# make install into a staging DESTDIR under an unusual PREFIX, then use the
# installed tree as a user would: the libsensim(3) examples compiled against
# the installed sensim.pc (found through PKG_CONFIG_SYSROOT_DIR and through
# --define-prefix) and run, the installed `sensim demo` run from a folder
# without data (it must find PREFIX/share/sensim beside itself), and
# `make uninstall` leaving no file behind.
#   tests/install.sh [BUILD]      (from the source root; MAKE may name make)
set -eu
build=${1:-build}
make=${MAKE:-make}
src=$(pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sensim-install-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
stage=$tmp/stage
prefix=/opt/sensim-test
root=$stage$prefix
fail() { echo "install test: $*" >&2; exit 1; }

$make --no-print-directory -s install BUILD="$build" DESTDIR="$stage" PREFIX="$prefix" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; fail "make install failed"; }
pc=$root/lib/pkgconfig/sensim.pc
grep -qx "prefix=$prefix" "$pc" || fail "$pc: prefix is not $prefix"
grep -qx 'libdir=${prefix}/lib' "$pc" || fail "$pc: libdir is not \${prefix}-relative"
grep -qx 'includedir=${prefix}/include' "$pc" || fail "$pc: includedir is not \${prefix}-relative"

# The examples, as the page writes them.
mkdir "$tmp/work"
cd "$tmp/work"
/usr/bin/python3 "$src/tests/examples.py" write "$src/man/libsensim.3" .
[ -f example.c ] && [ -f gyro.c ] || fail "libsensim(3): example.c and gyro.c not found"
sysroot_flags=$(PKG_CONFIG_PATH=$root/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage pkg-config --cflags --libs sensim)
prefix_flags=$(PKG_CONFIG_PATH=$root/lib/pkgconfig pkg-config --define-prefix --cflags --libs sensim)
case "$sysroot_flags" in *"-I$root/include"*"-L$root/lib"*) ;; *) fail "PKG_CONFIG_SYSROOT_DIR: $sysroot_flags" ;; esac
case "$prefix_flags" in *"-I$root/include"*"-L$root/lib"*) ;; *) fail "--define-prefix: $prefix_flags" ;; esac
# shellcheck disable=SC2086
cc -std=c11 -o example example.c $sysroot_flags || fail "example.c does not build against the installed sensim.pc"
# shellcheck disable=SC2086
cc -std=c11 -o gyro gyro.c $prefix_flags || fail "gyro.c does not build against the installed sensim.pc"
export LD_LIBRARY_PATH="$root/lib"
# The shared library the examples load is the installed one.
ldd ./gyro | grep -q "$root/lib/libsensim.so.0" || fail "gyro does not load $root/lib/libsensim.so.0"
"$root/bin/sensim" trajectory --shape circle --duration 10 -o gt.h5 >/dev/null
./example "$root/share/sensim/rigs/imu-adis16448.yaml" gt.h5 imu.h5 || fail "example failed"
"$root/bin/sensim" info imu.h5 | grep -q '^  imu (imu, 200 Hz' || fail "example's imu.h5 has no 200 Hz imu"
out=$(./gyro) || fail "gyro failed"
# Three finite rates near (0, 0, 0.2) rad/s: white noise 1.92e-4 sqrt(200) = 2.7e-3 rad/s.
echo "$out" | awk '{ for (i = 1; i <= 3; i++) { w = (i == 3) ? 0.2 : 0; d = $i - w; if (d < -0.05 || d > 0.05) exit 1 } }' ||
    fail "gyro printed '$out'"

# The installed demo, from a folder with no data/ and without SENSIM_DATA.
unset SENSIM_DATA
"$root/bin/sensim" demo --dir demo >demo.log 2>&1 || { tail -20 demo.log; fail "the installed sensim demo failed"; }
grep -q "data from $root/share/sensim" demo.log || { head -3 demo.log; fail "the demo did not use $root/share/sensim"; }
grep -q '^Done\.' demo.log || fail "the demo did not finish"

cd "$src"
$make --no-print-directory -s uninstall BUILD="$build" DESTDIR="$stage" PREFIX="$prefix" >/dev/null
left=$(find "$stage" -type f -o -type l)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "install test: make install to DESTDIR with PREFIX=$prefix, libsensim(3) examples, sensim demo, uninstall: ok"
