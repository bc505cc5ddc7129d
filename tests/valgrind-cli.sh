#!/bin/sh
# The program under valgrind memcheck on small inputs: trajectory, inject,
# info, export, import, allan, fit imu, judge, and refused and damaged
# inputs. Usage: valgrind-cli.sh SENSIM (VALGRIND: the valgrind command).
set -eu
S=$1
V=${VALGRIND:-valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cat > "$d/rig.yaml" <<'YAML'
seed: 3
sensors:
  - name: imu
    type: imu
    rate_hz: 100
    gyro: { noise_density: 1.0e-3, bias_instability: 2.0e-5, random_walk: 1.0e-5 }
    accel: { noise_density: 2.0e-3 }
  - name: gnss
    type: gnss
    rate_hz: 5
    origin_lla: [43.0731, -89.4012, 260.0]
    position_noise: { model: gaussian, sigma: 0.3 }
YAML
run() { # expected-status args...
    want=$1
    shift
    set +e
    $V "$S" "$@" >"$d/out" 2>"$d/err"
    rc=$?
    set -e
    if [ "$rc" -ne "$want" ]; then
        echo "valgrind: sensim $*: exit $rc, expected $want"
        cat "$d/err"
        exit 1
    fi
    echo "valgrind: sensim $1: ok"
}
run 0 trajectory --shape circle --duration 20 --rate 100 --speed 2 --radius 10 -o "$d/gt.h5"
run 0 inject "$d/rig.yaml" "$d/gt.h5" -o "$d/imu.h5"
run 0 info "$d/imu.h5"
run 0 export -g "$d/gt.h5" -o "$d/gt.csv"
run 0 import --ground-truth "$d/gt.csv" -o "$d/gt2.h5"
run 0 allan --input "$d/imu.h5" --sensor imu
run 0 fit imu "$d/imu.h5" --sensor imu -o "$d/fit.yaml"
run 0 judge "$d/imu.h5" -o "$d/judged.h5"
run 1 export -g "$d/gt.h5" -o "$d/gt.h5"
printf 't,x,y,z\n0,0,0,0\n0.1,0\0.2,0,0\n' > "$d/nul.csv"
run 1 import --ground-truth "$d/nul.csv" -o "$d/nul.h5"
