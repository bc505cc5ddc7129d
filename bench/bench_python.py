#!/usr/bin/python3
"""What the Python interface adds to a large call (issue 17: within 5 %):
sensim.allan on 4.7 M samples (OADEV with intervals, octave grid) and
sensim.Imu.apply on 1 M samples (the ADIS16448 rig's gyro and accelerometer,
into given output arrays as the bare call has; and into new arrays beside),
against the same C calls on the same data, made two ways: the bare library
function called from this process through cffi with prepared pointers (no
wrapper), and a separate C program (build/bench/bench_pycall, timing itself).
They are interleaved, one run of each per round in alternating order, so that
a machine shared with other work loads them alike; times are CPU time
(time.process_time here, CLOCK_PROCESS_CPUTIME_ID in the C program), which
other processes change far less than wall time; median and minimum over the
rounds. Then the wrapper's own cost without the work: the same calls on 1000
samples, wrapper minus bare call (wall time, median of 300), as a share of
the large bare call.

    make python build/bench/bench_pycall
    OMP_NUM_THREADS=1 PYTHONPATH=build/python /usr/bin/python3 bench/bench_python.py [ROUNDS]
"""
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import sensim
from sensim._core import ffi, lib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("SENSIM_BUILD") or os.path.join(ROOT, "build")
NA, NI = 4700000, 1000000
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 7


def cpu_ms(fn):
    t0 = time.process_time()
    fn()
    return 1e3 * (time.process_time() - t0)


def wall_us(fn, n=300):
    v = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        v.append(1e6 * (time.perf_counter() - t0))
    return statistics.median(v)


def bare_allan(x):
    """The bare C call on x, pointers and outputs prepared outside it."""
    m = sensim.taus(len(x))
    o = ffi.new("sensim_allan_opts *", lib.sensim_allan_default_opts())
    o.tau0 = 0.01
    pts = ffi.new("sensim_allan_point[]", len(m))
    xp, mp = ffi.from_buffer("double[]", x), ffi.from_buffer("size_t[]", m)

    def call():
        assert lib.sensim_allan_compute(xp, len(x), 1, o, mp, len(m), pts) == 0
    return call, pts


def bare_imu(imu, t, w, f):
    yw, yf = np.empty_like(w), np.empty_like(f)
    run = imu.stream(7)  # the run's models carry seed 7 and the sensor's id
    tx = ffi.new("const sensim_triax *[3]", [run._m["gyro"], run._m["accel"], ffi.NULL])
    p = [ffi.from_buffer("double[]", a) for a in (t, w, f, yw, yf)]
    u = ffi.new("const double *[3]", [p[1], p[2], ffi.NULL])
    fs = ffi.new("const double *[3]", [p[2], ffi.NULL, ffi.NULL])
    y = ffi.new("double *[3]", [p[3], p[4], ffi.NULL])
    st = ffi.new("sensim_triax_state[2]")
    sp = ffi.new("sensim_triax_state *[3]", [st, st + 1, ffi.NULL])

    def call():
        for i in range(2):
            lib.sensim_triax_reset(tx[i], st + i)
        lib.sensim_triax_apply_set(2, tx, sp, len(t), p[0], u, fs, y)
    return call, yw


def main():
    x = sensim.Rng(1, 0, 0).normal(NA)
    imu = sensim.Imu.from_yaml(os.path.join(ROOT, "data/rigs/imu-adis16448.yaml"))
    t = np.arange(NI) / 200.0
    w = np.zeros((NI, 3))
    f = np.zeros((NI, 3))
    f[:, 2] = 9.80665
    raw_allan, pts = bare_allan(x)
    raw_imu, yw = bare_imu(imu, t, w, f)
    ow, of = np.zeros_like(w), np.zeros_like(f)  # outputs given (as the bare call has them)

    r = {k: [] for k in ("py_allan", "raw_allan", "c_allan", "py_imu", "raw_imu", "c_imu", "pynew_imu")}
    for k in range(ROUNDS):
        jobs = [("py_allan", lambda: sensim.allan(x, rate=100.0)), ("raw_allan", raw_allan),
                ("py_imu", lambda: imu.apply(t, gyro=w, accel=f, seed=7, out=(ow, of))), ("raw_imu", raw_imu),
                ("pynew_imu", lambda: imu.apply(t, gyro=w, accel=f, seed=7))]
        for name, fn in (jobs if k % 2 == 0 else jobs[::-1]):
            r[name].append(cpu_ms(fn))
        out = subprocess.run([os.path.join(BUILD, "bench", "bench_pycall"), str(NA), str(NI), "1"],
                             env=dict(os.environ, SENSIM_SRCDIR=ROOT), check=True, capture_output=True,
                             text=True).stdout
        c = dict((key, float(v)) for key, v in (line.split() for line in out.split("\n") if line))
        r["c_allan"].append(c["allan_ms"])
        r["c_imu"].append(c["imu_ms"])
    # the wrapper returns the bare call's numbers
    assert np.array_equal(sensim.allan(x, rate=100.0).dev, np.array([pts[i].dev for i in range(len(pts))]))
    assert np.array_equal(imu.apply(t, gyro=w, accel=f, seed=7)[0], yw)

    xs, ts_, ws, fs_ = x[:1000].copy(), t[:1000].copy(), w[:1000].copy(), f[:1000].copy()
    small_allan, _ = bare_allan(xs)
    small_imu, _ = bare_imu(imu, ts_, ws, fs_)
    over = {"allan": wall_us(lambda: sensim.allan(xs, rate=100.0)) - wall_us(small_allan),
            "imu": wall_us(lambda: imu.apply(ts_, gyro=ws, accel=fs_, seed=7)) - wall_us(small_imu)}

    print("OMP_NUM_THREADS=%s, %d interleaved rounds; CPU ms, median (min)"
          % (os.environ.get("OMP_NUM_THREADS", "(default)"), ROUNDS))
    for what, k in (("allan %d samples" % NA, "allan"), ("imu   %d samples" % NI, "imu")):
        med = {s: statistics.median(r[s + "_" + k]) for s in ("py", "raw", "c")}
        mn = {s: min(r[s + "_" + k]) for s in ("py", "raw", "c")}
        print("%-22s Python %7.1f (%7.1f)  bare call %7.1f (%7.1f)  C program %7.1f (%7.1f)  "
              "Python vs bare %+5.1f %% (%+5.1f %%)  wrapper alone %6.1f us = %.3f %% of the bare call"
              % (what, med["py"], mn["py"], med["raw"], mn["raw"], med["c"], mn["c"],
                 100 * (med["py"] / med["raw"] - 1), 100 * (mn["py"] / mn["raw"] - 1), over[k],
                 100 * over[k] / (1e3 * mn["raw"])))
    print("imu with new output arrays (no out=): %.1f (%.1f) CPU ms, %+.1f %% of the C program (which also "
          "writes fresh memory)" % (statistics.median(r["pynew_imu"]), min(r["pynew_imu"]),
                                    100 * (statistics.median(r["pynew_imu"]) / statistics.median(r["c_imu"]) - 1)))


if __name__ == "__main__":
    main()
