#!/usr/bin/python3
"""OADEV baseline for bench/bench_allan.c: the NumPy formulation AllanTools
uses (allantools.frequency2phase + calc_adev_phase with stride 1), written
out here so the bench needs only Debian's python3-numpy.

usage: oadev_numpy.py DATA.f64 N NAXES TAUS.txt TAU0
DATA.f64: N*NAXES little-endian doubles, interleaved by axis; TAUS.txt: the
averaging factors, one per line. Prints "seconds S" (computation only, not
the file read) and then one line per axis with the deviations."""
import sys, time
import numpy as np

def frequency2phase(y, tau0):
    # allantools.frequency2phase: x = cumsum(y - mean) * tau0, prepended 0
    y = y - np.nanmean(y)
    x = np.empty(len(y) + 1)
    x[0] = 0.0
    x[1:] = np.cumsum(y) * tau0
    return x

def calc_adev_phase(phase, rate, mj, stride):
    d2 = phase[2 * mj::stride]
    d1 = phase[1 * mj::stride]
    d0 = phase[::stride]
    n = min(len(d0), len(d1), len(d2))
    v_arr = d2[:n] - 2 * d1[:n] + d0[:n]
    s = np.sum(v_arr * v_arr)
    return np.sqrt(s / (2.0 * n)) / mj * rate

def main():
    path, n, naxes, tauf, tau0 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
    data = np.fromfile(path, dtype="<f8").reshape(n, naxes)
    ms = [int(l) for l in open(tauf) if l.strip()]
    cols = [np.ascontiguousarray(data[:, a]) for a in range(naxes)]
    t = time.perf_counter()
    c = time.process_time()
    out = []
    for y in cols:
        x = frequency2phase(y, tau0)
        out.append([calc_adev_phase(x, 1.0 / tau0, m, 1) for m in ms])
    dt = time.perf_counter() - t
    dc = time.process_time() - c
    print("seconds %.6f cpu %.6f" % (dt, dc))
    for row in out:
        print(" ".join("%.17g" % v for v in row))

if __name__ == "__main__":
    main()
