#!/bin/sh
# CI stage: the Debian packages. In a scratch copy of the tree (the checkout
# stays clean): dpkg-buildpackage -us -uc -b builds libsensim0,
# libsensim-dev and sensim; lintian must report no error or warning; the
# packages are installed with dpkg -i, `sensim demo` runs from the
# installed data, the libsensim(3) example builds against the installed
# sensim.pc and runs; then the packages are purged and none of their files
# may remain. Needs root (dpkg -i) and the packaging tools
# (sh scripts/setup.sh --deb installs them).
#   scripts/ci-deb.sh            (from anywhere in the tree)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/sensim-deb-XXXXXX")
pkgs="sensim libsensim-dev libsensim0"
installed=0
cleanup() {
    if [ $installed -eq 1 ]; then
        dpkg --purge $pkgs >/dev/null 2>&1 || true
    fi
    rm -rf "$scratch"
}
trap cleanup EXIT INT TERM
fail() { echo "ci-deb: $*" >&2; exit 1; }
for p in $pkgs; do
    if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        fail "$p is already installed on this machine; not touching it"
    fi
done

# The tree as it is (tracked and new files, not ignored ones), in scratch/sensim.
mkdir "$scratch/sensim"
(cd "$src" && git ls-files -z --cached --others --exclude-standard | xargs -0 tar cf - --no-recursion) |
    (cd "$scratch/sensim" && tar xf -)
cd "$scratch/sensim"
# The suite already ran in the earlier stages: build the packages only.
DEB_BUILD_OPTIONS="nocheck parallel=${JOBS:-2}" dpkg-buildpackage -us -uc -b >"$scratch/build.log" 2>&1 ||
    { tail -40 "$scratch/build.log"; fail "dpkg-buildpackage failed"; }
cd "$scratch"
changes=$(ls sensim_*.changes)
for p in $pkgs; do
    ls "${p}"_*.deb >/dev/null 2>&1 || fail "no ${p} package built"
done
lintian --fail-on error,warning "$changes" || fail "lintian reports errors or warnings"

# The three packages (not the -dbgsym ones dh_strip also makes).
dpkg -i sensim_*.deb libsensim0_*.deb libsensim-dev_*.deb >"$scratch/dpkg.log" 2>&1 || { cat "$scratch/dpkg.log"; fail "dpkg -i failed"; }
installed=1
files=$(dpkg -L $pkgs | sort -u)
[ "$(command -v sensim)" = /usr/bin/sensim ] || fail "sensim is not /usr/bin/sensim"
mkdir "$scratch/run"
cd "$scratch/run"
env -u SENSIM_DATA sensim demo --dir demo >demo.log 2>&1 || { tail -20 demo.log; fail "sensim demo failed"; }
grep -q "data from /usr/share/sensim" demo.log || fail "the demo did not use /usr/share/sensim"
/usr/bin/python3 "$src/tests/examples.py" write "$src/man/libsensim.3" .
cc -std=c11 -o gyro gyro.c $(pkg-config --cflags --libs sensim) || fail "gyro.c does not build against the package"
ldd ./gyro | grep -Eq "libsensim.so.0 => /(usr/)?lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libsensim.so.0" || fail "gyro does not load the packaged libsensim.so.0"
./gyro >/dev/null || fail "gyro failed"
cd "$scratch"

dpkg --purge $pkgs >"$scratch/purge.log" 2>&1 || { cat "$scratch/purge.log"; fail "dpkg --purge failed"; }
installed=0
left=""
for f in $files; do
    [ -d "$f" ] && continue
    [ -e "$f" ] || [ -L "$f" ] && left="$left $f"
done
[ -z "$left" ] || fail "files left after purge:$left"
[ ! -e /usr/share/sensim ] || fail "/usr/share/sensim left after purge"
echo "ci-deb: built $(ls ./*.deb | wc -l) packages (with -dbgsym), lintian clean, installed, sensim demo and libsensim(3) ran, purged"
